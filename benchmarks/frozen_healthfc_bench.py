"""A research prototype: the frozen-encoder feature model on HealthFC's release-mode systems,
beside the workflow's TF-IDF and their equal-weight average, per fold, with wall times.

    python benchmarks/frozen_healthfc_bench.py --dataset results/healthfc/dataset/healthfc.jsonl \\
        --folds results/healthfc/folds/folds.csv [--encoders offline:minilm offline:mpnet] [--systems ...]

The examples are the library's (``medfc.experiments.healthfc.runs``: the claim and, per system, the gold
evidence sentences, nothing, the explanation, or the level-of-evidence input); every training claim of
the training folds trains (``val_fraction: 0``, as config/cpu.yaml). The frozen model is
``benchmarks/frozen_embeddings.py:fit_frozen`` (claim and second text embedded once each, cached on disk;
[u, v, |u-v|, u*v] or [u] into class-balanced logistic regression, C by inner 5-fold CV).

On the HealthFC-sized stand-in (benchmarks/healthfc_sized_release.py) only the times mean anything: its
evidence is reused across rows.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from clinifact_cv import load_config, model_options  # noqa: E402
from frozen_embeddings import DEFAULT_STORE, EmbeddingStore, FrozenOptions, fit_frozen  # noqa: E402

from medfc.common.report import SkipReport  # noqa: E402
from medfc.experiments.healthfc import runs as H  # noqa: E402
from medfc.experiments.models.encoder import Example  # noqa: E402
from medfc.experiments.models.kinds import fit_model  # noqa: E402
from medfc.experiments.healthfc.systems import LOE_LABELS, VERACITY_LABELS  # noqa: E402
from medfc.scoring.classification import macro_f1  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]


def examples(system: str, claims, loe_input: str):
    if system == "oracle":
        return [H.veracity_example(c, c.gold_evidence) for c in claims], VERACITY_LABELS
    if system == "claims_only":
        return [H.veracity_example(c, None) for c in claims], VERACITY_LABELS
    if system == "gold_explanations":
        return [Example(c.claim, c.explanation, c.label) for c in claims], VERACITY_LABELS
    if system == "level_of_evidence":
        return [H.loe_example(c, loe_input) for c in claims if H.loe_eligible(c)], LOE_LABELS
    raise SystemExit(f"system {system} is not one of the release-mode systems")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--dataset", required=True)
    ap.add_argument("--folds", required=True)
    ap.add_argument("--configfile", nargs="*", default=[str(ROOT / "config/cpu.yaml")])
    ap.add_argument("--systems", nargs="+", default=["oracle", "claims_only", "gold_explanations", "level_of_evidence"])
    ap.add_argument("--encoders", nargs="+", default=["offline:minilm"])
    ap.add_argument("--evidence-length", type=int, default=256)
    ap.add_argument("--store", default=str(DEFAULT_STORE))
    args = ap.parse_args(argv)
    config = load_config(args.configfile)
    tfidf = model_options(config, "tfidf")
    loe_input = config["experiments"]["healthfc"]["loe_input"]
    claims = H.load_claims(args.dataset, "en")
    folds = H.load_folds(args.folds)
    store = EmbeddingStore(args.store)
    t_all = time.perf_counter()
    for system in args.systems:
        scores: dict[str, list[float]] = {}
        seconds: dict[str, float] = {}
        for k in sorted(set(folds.values())):
            train_c, test_c = H.split_fold(claims, folds, k, SkipReport("bench"))
            tr, labels = examples(system, train_c, loe_input)
            te, _ = examples(system, test_c, loe_input)
            gold = [ex.label for ex in te]
            probs = {}
            t0 = time.perf_counter()
            probs["tfidf"] = fit_model(tfidf, labels, tr, None, desc="tfidf").probs(te)
            seconds["tfidf"] = seconds.get("tfidf", 0.0) + time.perf_counter() - t0
            for enc in args.encoders:
                name = f"frozen[{enc.split(':')[-1]}]"
                t0 = time.perf_counter()
                fitted = fit_frozen(FrozenOptions(encoder=enc, evidence_length=args.evidence_length), labels, tr, store)
                probs[name] = fitted.probs(te)
                seconds[name] = seconds.get(name, 0.0) + time.perf_counter() - t0
                probs[f"tfidf+{name}"] = probs["tfidf"] + probs[name]
            for name, p in probs.items():
                scores.setdefault(name, []).append(100 * macro_f1(gold, [labels[i] for i in p.argmax(1)], labels))
        print(f"HealthFC {system} ({len(claims)} claims, {len(set(folds.values()))} folds): macro-F1 per fold, mean ± std, seconds (all folds)")
        for name, s in scores.items():
            print(f"  {name:<24} {' '.join(f'{x:5.1f}' for x in s)}   {np.mean(s):5.1f} ± {np.std(s, ddof=1):4.1f}   {seconds.get(name, 0.0):7.1f} s", flush=True)
    print("\nembedding throughput (store timing table, all runs so far):")
    for (recipe,) in store.db.execute("SELECT DISTINCT recipe FROM timing ORDER BY recipe"):
        t = store.throughput(recipe)
        print(f"  {recipe:<40} {t['texts']:>6} texts {t['seconds']:>7.0f} s  {t['texts_per_s']:>6.2f} texts/s  {t['tokens_per_s']:>6.0f} tokens/s  load1 {t['load1']:.1f}")
    print(f"wall {time.perf_counter() - t_all:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
