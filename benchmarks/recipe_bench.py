"""What each training choice buys: TF-IDF variants and the HealthFC encoder's recipe, per fold.

    python benchmarks/recipe_bench.py [--clinifact DIR] [--healthfc-dataset FILE --healthfc-folds FILE]
                                      [--systems oracle claims_only ...] [--encoder] [--configfile config/cpu.yaml]

TF-IDF rows (seconds to minutes on 2 cores):

* ``reference``: the plainest baseline: one TF-IDF space over ``claim [SEP] evidence`` (word 1-2-grams,
  sub-linear tf, min_df 1), class-balanced logistic regression at C = 1, fit on all training data;
* ``holdout``: a space per text, word + character n-grams, min_df 2, C from 0.3-100 chosen on a stratified
  held-out tenth of the training data, then refit on all of it;
* ``cv``: the space (joint, separate) and analyzer (word, word+char) chosen by 5-fold cross-validation
  inside the training data, at the config's C;
* ``config``: the workflow's TF-IDF as configured (``experiments.tfidf``, schema defaults filled in: the
  reference's single candidate, so the same as ``reference`` unless the config says otherwise).

With ``--encoder`` also the HealthFC encoder of the config (MiniLM in cpu.yaml) with ``val_fraction`` 0.1
(best epoch on a held-out tenth) against 0 (every training claim, the fixed number of epochs): minutes per
fold and system on a CPU.

HealthFC data: the workflow's dataset and folds, e.g. after
``snakemake --configfile config/cpu.yaml --until healthfc_folds`` (the real release, or the HealthFC-sized
stand-in of benchmarks/healthfc_sized_release.py, whose scores mean nothing: its evidence is reused across
rows). CliniFact: the release's three split CSVs; the test split is scored (no folds). Printed: macro-F1
(%) per fold, mean ± std, seconds, and the choice each ``cv`` fit made.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import Counter
from pathlib import Path

import numpy as np

from medfc.common.report import SkipReport
from medfc.experiments.healthfc import runs as H
from medfc.experiments.pairs import load_pairs, pair_example
from medfc.experiments.models.kinds import build_model
from medfc.experiments.models.options import TfidfOptions, TrainConfig
from medfc.experiments.healthfc.systems import CLINIFACT_LABELS, LOE_LABELS, SYSTEM_OPTIONS, VERACITY_LABELS, HealthFCFoldOptions, system_option_keys
from medfc.scoring.classification import macro_f1

sys.path.insert(0, str(Path(__file__).resolve().parent))
from clinifact_cv import load_config  # noqa: E402  (the config as the workflow merges and validates it)

ROOT = Path(__file__).resolve().parents[1]


def tfidf_variants(config: dict) -> dict[str, TfidfOptions]:
    base = {**config["experiments"]["tfidf"], "model": "sklearn:tfidf"}
    return {
        "reference": TfidfOptions.from_mapping({**base, "spaces": ["joint"], "analyzers": ["word"], "min_df": 1, "C_grid": [1.0],
                                                "word_ngrams": [1, 2]}),  # one candidate: nothing is chosen
        "holdout": TfidfOptions.from_mapping({**base, "spaces": ["separate"], "analyzers": ["word+char"], "min_df": 2,
                                              "C_grid": [0.3, 1.0, 3.0, 10.0, 30.0, 100.0], "selection": "validation",
                                              "refit_with_validation": True}),
        "cv": TfidfOptions.from_mapping({**base, "spaces": ["joint", "separate"], "analyzers": ["word", "word+char"],
                                         "selection": "cv"}),
        "config": TfidfOptions.from_mapping(base),
    }


def _row(name: str, scores: list[float], seconds: float, choices: Counter | None = None) -> str:
    per = " ".join(f"{s:5.1f}" for s in scores)
    spread = f"{np.mean(scores):5.1f} ± {np.std(scores):4.1f}" if len(scores) > 1 else f"{scores[0]:5.1f}"
    chosen = "  chose " + ", ".join(f"{k} ×{n}" for k, n in choices.most_common()) if choices else ""
    return f"  {name:<22} {per}   {spread}   {seconds:7.1f} s{chosen}"


def healthfc(config: dict, dataset: str, folds_csv: str, systems: list[str], encoder: bool) -> None:
    folds = H.load_folds(folds_csv)
    ks = sorted(set(folds.values()))
    hx = config["experiments"]["healthfc"]
    models: dict[str, tuple] = {name: (opts, None) for name, opts in tfidf_variants(config).items()}
    if encoder:
        train = {**hx["train"], **config["experiments"]["smoke"]}
        cfg = TrainConfig.from_mapping(train, where="experiments.healthfc.train")
        models.update({"encoder, held-out 0.1": (cfg, 0.1), "encoder, all (fixed)": (cfg, 0.0)})
    for system in systems:
        print(f"HealthFC {system}: macro-F1 per fold ({', '.join(map(str, ks))}), mean ± std, wall time")
        for name, (cfg, val_fraction) in models.items():
            keys = {k: hx[k] for k in system_option_keys(system)}
            if val_fraction is not None:
                keys["val_fraction"] = val_fraction
            else:  # ``holdout`` chooses on a held-out tenth; the others choose inside the training folds or not at all
                keys["val_fraction"] = 0.1 if name == "holdout" else 0.0
            opts = SYSTEM_OPTIONS[system].from_mapping(keys)
            scores, choices, start = [], Counter(), time.perf_counter()
            for k in ks:
                options = HealthFCFoldOptions(system, "en", k, cfg, opts, checkpoint_dir=None)
                records, info = H.run_fold(dataset, folds_csv, options, report=SkipReport("bench"))
                labels = LOE_LABELS if system == "level_of_evidence" else VERACITY_LABELS
                scores.append(100 * macro_f1([r["label"] for r in records], [r["pred_label"] for r in records], labels))
                train_info = info.get("model", {}).get("train", {})
                if name in ("cv", "config"):
                    choices[f"{train_info.get('variant')} C={train_info.get('C', 0):g}"] += 1
            print(_row(name, scores, time.perf_counter() - start, choices), flush=True)


def clinifact(config: dict, directory: str) -> None:
    d = Path(directory)
    split = {s: [pair_example(p) for p in load_pairs(d / f"{s}_set.csv")] for s in ("train", "validation", "test")}
    gold = [ex.label for ex in split["test"]]
    print("CliniFact test split: macro-F1, wall time")
    for name, opts in tfidf_variants(config).items():
        start = time.perf_counter()
        fitted = build_model(opts).fit(split["train"], CLINIFACT_LABELS, split["validation"], desc=name)
        pred = [CLINIFACT_LABELS[i] for i in fitted.probs(split["test"]).argmax(axis=1)]
        r = fitted.result
        print(_row(name, [100 * macro_f1(gold, pred, CLINIFACT_LABELS)], time.perf_counter() - start,
                   Counter({f"{r.variant} C={r.C:g}": 1})), flush=True)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--configfile", nargs="*", default=[str(ROOT / "config/cpu.yaml")])
    ap.add_argument("--clinifact", help="directory with the release's three split CSVs")
    ap.add_argument("--healthfc-dataset", help="results/healthfc/dataset/healthfc.jsonl of a run")
    ap.add_argument("--healthfc-folds", help="results/healthfc/folds/folds.csv of the same run")
    ap.add_argument("--systems", nargs="+", default=["oracle", "claims_only", "gold_explanations", "level_of_evidence"])
    ap.add_argument("--encoder", action="store_true", help="also the encoder with and without the held-out tenth (slow)")
    args = ap.parse_args(argv)
    if not args.clinifact and not args.healthfc_dataset:
        ap.error("give --clinifact and/or --healthfc-dataset with --healthfc-folds")
    config = load_config(args.configfile)
    if args.healthfc_dataset:
        healthfc(config, args.healthfc_dataset, args.healthfc_folds, args.systems, args.encoder)
    if args.clinifact:
        clinifact(config, args.clinifact)
    return 0


if __name__ == "__main__":
    sys.exit(main())
