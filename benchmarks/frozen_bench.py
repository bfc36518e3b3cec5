"""The frozen-encoder rows (model kind ``frozen``) on real data, side by side with TF-IDF and gradient boosting,
in one run: the CliniFact release (5-fold CV over train + validation and the official test split) and the
HealthFC release-mode systems on a release file (the real one, or the HealthFC-sized stand-in of
benchmarks/healthfc_sized_release.py, whose scores mean nothing: only its times and ratios do).

    python benchmarks/frozen_bench.py --clinifact DIR [--healthfc RELEASE.csv] [--configfile config/cpu.yaml]
        [--encoders frozen-minilm frozen-mpnet] [--extra gbm-cos gbm-pair] [--cache cache/embeddings] [--probe 64] [--json out.json]

Every model is the workflow's: its options are what the plan builds from the config files (config/cpu.yaml
by default; the encoders' aliases ``frozen-minilm`` / ``frozen-mpnet``, section ``experiments.frozen``),
fitted through the one model interface (``build_model(...).fit(train, labels, validation)``) as a job fits it.

CliniFact: the outer folds and each fold's 80/20 training / validation split are those of
benchmarks/clinifact_cv.py (StratifiedKFold(5, shuffle, seed 0)); a model is fitted on each fold's rest and
predicts the fold, then fitted on the official train + validation splits and scored once on the test split
(macro-F1 with its 95% percentile bootstrap interval, ``--resamples``). Rows: tfidf, gbm, each frozen encoder,
the equal-weight averages of every combination of them (as the workflow's ensembles), and two ways of giving
the embeddings to gradient boosting by hand (``gbm+cos``: the hand features and the claim-abstract cosine;
``gbm+cos+oof``: also the frozen MiniLM model's out-of-fold probabilities, from an inner 5-fold CV of the
training part; ``--gbm-with`` with no value skips both), and ``--extra`` aliases of the config files fitted as
members like the others (e.g. config/cpu-gbm-embeddings.yaml's gbm-cos and gbm-pair, the gbm kind's own
embedding features). HealthFC: the four release-mode systems × 5 folds through ``medfc.experiments.healthfc.runs.run_fold``
(the dataset and the authors' folds built from the release file in a temporary directory), tfidf, each frozen
encoder and their averages with tfidf.

Times: wall and CPU seconds (user + system of this process, all threads) of every fit + predict, summed over
folds. The embeddings are computed once per text and recipe into ``--cache`` (the workflow's store), before
the CliniFact rows, and timed on their own (the rows' fits then read them); ``--probe N`` also encodes N
texts of each recipe afresh without a cache, for CPU seconds per text and tokens per second that do not
depend on what the store already holds. ``--seed-sqlite FILE`` first copies into the store the vectors of the
prototype store of benchmarks/frozen_embeddings.py (same recipe: the same texts, tokenizer truncation, mean
pooling and normalisation), and ``--check N`` re-encodes N of them to show they are the library's own vectors.
The load average is printed at the start and the end.
"""

from __future__ import annotations

import argparse
import contextlib
import itertools
import json
import os
import resource
import sqlite3
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import yaml
from snakemake.utils import update_config, validate

from medfc.experiments.pairs import load_pairs, pair_example
from medfc.experiments.models.embeddings import EmbeddingStore, FrozenEncoder, Recipe, text_digest
from medfc.experiments.models.frozen import evidence_text
from medfc.experiments.models.kinds import build_model
from medfc.experiments.models.options import model_config_class
from medfc.experiments.healthfc.systems import CLINIFACT_LABELS
from medfc.plan import Plan
from medfc.scoring.classification import accuracy, bootstrap_intervals, macro_f1

ROOT = Path(__file__).resolve().parents[1]
LABELS = list(CLINIFACT_LABELS)
SYSTEMS = ("oracle", "claims_only", "gold_explanations", "level_of_evidence")


def load_config(configfiles: list[str], overrides: dict | None = None) -> dict:
    """config/config.yaml, each configfile on top, then ``overrides`` (as snakemake merges them), validated
    with the schema's defaults filled in."""
    config: dict = {}
    for path in [ROOT / "config/config.yaml", *configfiles]:
        update_config(config, yaml.safe_load(Path(path).read_text(encoding="utf-8")) or {})
    update_config(config, overrides or {})
    validate(config, schema=str(ROOT / "workflow/schemas/config.schema.yaml"), set_default=True)
    return config


def cpu_seconds() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


class Clock:
    """Wall and CPU seconds per key, summed."""

    def __init__(self):
        self.wall: dict[str, float] = {}
        self.cpu: dict[str, float] = {}

    @contextlib.contextmanager
    def __call__(self, key: str):
        w, c = time.perf_counter(), cpu_seconds()
        try:
            yield
        finally:
            self.wall[key] = self.wall.get(key, 0.0) + time.perf_counter() - w
            self.cpu[key] = self.cpu.get(key, 0.0) + cpu_seconds() - c


def load1() -> str:
    return " ".join(f"{x:.1f}" for x in os.getloadavg())


# ------------------------------------------------------------------------------------ embeddings
def seed_from_sqlite(path: str, cache: str, recipes: list[Recipe], texts: dict[Recipe, list[str]]) -> dict[str, int]:
    """Copy the prototype store's vectors of ``texts`` (by recipe) into the library's store; returns the
    counts copied per recipe."""
    db = sqlite3.connect(f"file:{path}?mode=ro&immutable=1", uri=True)
    out = {}
    for recipe in recipes:
        store = EmbeddingStore(cache, recipe)
        have = store.load()
        wanted = {text_digest(t): t for t in texts[recipe]}
        rows = db.execute("SELECT key, vec FROM emb WHERE recipe = ?", [recipe.key]).fetchall()
        new = [(bytes.fromhex(k), np.frombuffer(v, dtype=np.float32)) for k, v in rows if bytes.fromhex(k) in wanted and bytes.fromhex(k) not in have]
        for i in range(0, len(new), 256):
            part = new[i : i + 256]
            store.put([d for d, _ in part], np.stack([v for _, v in part]))
        store.merge_written()
        out[recipe.key] = len(new)
    return out


def model_options(plan: Plan, alias: str, cache: str):
    """The model config a CliniFact job of ``alias`` gets from the plan (a frozen encoder's store: ``cache``)."""
    mapping = plan.pairs_experiment_options("clinifact", alias).to_mapping()["train"]
    if "cache_dir" in mapping:
        mapping = {**mapping, "cache_dir": cache}
    return model_config_class(mapping["model"]).from_mapping(mapping)


def embed_all(options, texts_a: list[str], texts_b: list[str], threads: int, clock: Clock, probe: int, check: int) -> dict:
    """Every claim and evidence text into the store (timed), and the probe / check encodings."""
    enc = FrozenEncoder(options.encoder, cache_dir=options.cache_dir, batch_size=options.batch_size, device=options.device,
                        threads=threads, progress=True)
    key = f"embed[{options.encoder}]"
    with clock(key):
        enc.embed(texts_a, options.claim_length, "head", desc="claims")
        enc.embed(texts_b, options.evidence_length, "tail", desc="abstracts")
    info: dict = {"store": enc.stats.as_dict(), "wall": clock.wall[key], "cpu": clock.cpu[key]}
    tok = enc._load()[0]
    n_tokens = {}
    for name, texts, length, side in (("claims", texts_a, options.claim_length, "head"), ("abstracts", texts_b, options.evidence_length, "tail")):
        tok.truncation_side = "left" if side == "tail" else "right"
        n_tokens[name] = sum(len(x) for x in tok(list(dict.fromkeys(texts)), truncation=True, max_length=length)["input_ids"])
    info["tokens"] = n_tokens
    rng = np.random.default_rng(0)
    if probe:
        fresh = FrozenEncoder(options.encoder, cache_dir=None, batch_size=options.batch_size, device=options.device, threads=threads, progress=False)
        fresh._loaded = enc._loaded
        info["probe"] = {}
        for name, texts, length, side in (("claims", texts_a, options.claim_length, "head"), ("abstracts", texts_b, options.evidence_length, "tail")):
            unique = list(dict.fromkeys(texts))
            sample = [unique[i] for i in rng.choice(len(unique), size=min(probe, len(unique)), replace=False)]
            tok.truncation_side = "left" if side == "tail" else "right"
            tokens = sum(len(x) for x in tok(sample, truncation=True, max_length=length)["input_ids"])
            w, c = time.perf_counter(), cpu_seconds()
            fresh.embed(sample, length, side, desc=f"probe {name}")
            w, c = time.perf_counter() - w, cpu_seconds() - c
            info["probe"][name] = {"texts": len(sample), "tokens": tokens, "wall": w, "cpu": c, "cpu_per_text": c / len(sample),
                                   "tokens_per_cpu_s": tokens / c, "tokens_per_wall_s": tokens / w,
                                   "est_cpu_all": c / tokens * n_tokens[name], "load1": load1()}
    if check:
        fresh = FrozenEncoder(options.encoder, cache_dir=None, batch_size=options.batch_size, device=options.device, threads=threads, progress=False)
        fresh._loaded = enc._loaded
        unique = list(dict.fromkeys(texts_b))
        sample = [unique[i] for i in rng.choice(len(unique), size=min(check, len(unique)), replace=False)]
        stored = enc.embed(sample, options.evidence_length, "tail")
        info["check_max_abs_diff"] = float(np.abs(fresh.embed(sample, options.evidence_length, "tail") - stored).max())
    return info


# ------------------------------------------------------------------------------------ CliniFact
def clinifact(args, plan: Plan, clock: Clock) -> dict:
    from sklearn.model_selection import StratifiedKFold, train_test_split

    from medfc.experiments.models.features import features, fit_idf
    from medfc.experiments.models.gbm import _fit as fit_trees

    d = Path(args.clinifact)
    split = {s: [pair_example(p) for p in load_pairs(d / f"{s}_set.csv")] for s in ("train", "validation", "test")}
    pool, test = split["train"] + split["validation"], split["test"]
    y = np.array([LABELS.index(ex.label) for ex in pool])
    yt = [ex.label for ex in test]
    outer = list(StratifiedKFold(args.folds, shuffle=True, random_state=args.seed).split(np.zeros(len(y)), y))
    inner = [tuple(train_test_split(rest, test_size=0.2, stratify=y[rest], random_state=args.seed)) for rest, _ in outer]
    everything = pool + test
    options = {m: model_options(plan, m, args.cache) for m in ["tfidf", "gbm", *args.encoders, *args.extra]}
    out: dict = {"embeddings": {}, "rows": {}}

    if args.seed_sqlite:
        recipes = {}
        for m in args.encoders:
            o = options[m]
            recipes[Recipe(o.encoder, o.claim_length, "head")] = [ex.text_a for ex in everything]
            recipes[Recipe(o.encoder, o.evidence_length, "tail")] = [evidence_text(ex) for ex in everything]
        print("seeded from", args.seed_sqlite, seed_from_sqlite(args.seed_sqlite, args.cache, list(recipes), recipes), flush=True)
    for m in args.encoders:
        print(f"embedding for {m} (load {load1()}) ...", flush=True)
        out["embeddings"][m] = embed_all(options[m], [ex.text_a for ex in everything], [evidence_text(ex) for ex in everything], args.threads,
                                         clock, args.probe, args.check)
        print(json.dumps(out["embeddings"][m]), flush=True)

    probs: dict[str, dict[str, np.ndarray]] = {}

    def member(name: str) -> None:
        o = options[name]
        oof = np.zeros((len(pool), len(LABELS)))
        with clock(name):
            for (rest, held), (tr, va) in zip(outer, inner):
                model = build_model(o, args.threads)
                oof[held] = model.fit([pool[i] for i in tr], LABELS, [pool[i] for i in va], trim="left", desc=name).probs([pool[i] for i in held])
        with clock(name + "/test"):
            test_p = build_model(o, args.threads).fit(split["train"], LABELS, split["validation"], trim="left", desc=name).probs(test)
        probs[name] = {"oof": oof, "test": test_p}
        print(f"{name}: done (load {load1()})", flush=True)

    for m in ["tfidf", "gbm", *args.encoders, *args.extra]:
        member(m)

    # gradient boosting given the embeddings: + cos(u, v); + cos and the frozen model's inner out-of-fold probabilities
    if args.encoders and args.gbm_with:
        e = args.encoders[0]
        o = options[e]
        enc = FrozenEncoder(o.encoder, cache_dir=o.cache_dir, batch_size=o.batch_size, threads=args.threads, progress=False)
        u = enc.embed([ex.text_a for ex in everything], o.claim_length, "head")
        v = enc.embed([evidence_text(ex) for ex in everything], o.evidence_length, "tail")
        cos = (u * v).sum(1, keepdims=True)
        gbm_o = options["gbm"]

        def hand(fit_idx, idx, examples):
            idf = fit_idf(examples[i].text_b or "" for i in fit_idx)
            rows = [features(examples[i].text_a or "", examples[i].prefix_b or "", examples[i].text_b or "", idf) for i in idx]
            keys = list(rows[0])
            return np.array([[r[k] for k in keys] for r in rows])

        def frozen_oof(fit_idx, examples):
            from sklearn.model_selection import StratifiedKFold as SKF

            yy = np.array([LABELS.index(examples[i].label) for i in fit_idx])
            res = np.zeros((len(fit_idx), len(LABELS)))
            for a, b in SKF(5, shuffle=True, random_state=args.seed).split(np.zeros(len(yy)), yy):
                res[b] = build_model(o, args.threads).fit([examples[fit_idx[i]] for i in a], LABELS, None, trim="left").probs(
                    [examples[fit_idx[i]] for i in b])
            return res

        def fit_predict(extra: str, fit_idx: np.ndarray, held: np.ndarray) -> np.ndarray:
            """Trees fit on ``fit_idx`` (hand features + cos, + the frozen model's out-of-fold probabilities), probabilities of ``held``."""
            Xf = np.hstack([hand(fit_idx, fit_idx, everything), cos[fit_idx]])
            Xh = np.hstack([hand(fit_idx, held, everything), cos[held]])
            if extra == "cos+oof":
                Xf = np.hstack([Xf, frozen_oof(fit_idx, everything)])
                Xh = np.hstack([Xh, build_model(o, args.threads).fit([everything[i] for i in fit_idx], LABELS, None, trim="left").probs(
                    [everything[i] for i in held])])
            trees = fit_trees(gbm_o, Xf, np.array([LABELS.index(everything[i].label) for i in fit_idx]))
            p = np.zeros((len(held), len(LABELS)))
            for t in trees:
                p[:, t.classes_] += t.predict_proba(Xh) / len(trees)
            return p

        def gbm_with(extra: str):
            oof = np.zeros((len(pool), len(LABELS)))
            name = f"gbm+{extra}"
            all_idx = np.arange(len(everything))
            with clock(name):
                for (rest, held), (tr, va) in zip(outer, inner):
                    oof[held] = fit_predict(extra, np.concatenate([tr, va]), held)  # refit_with_validation: the trees see both
            with clock(name + "/test"):
                p = fit_predict(extra, all_idx[: len(pool)], all_idx[len(pool):])
            probs[name] = {"oof": oof, "test": p}
            print(f"{name}: done (load {load1()})", flush=True)

        for extra in args.gbm_with:
            gbm_with(extra)

    # equal-weight averages, as the workflow's ensembles
    base = ["tfidf", "gbm", *args.encoders, *args.extra]
    for r in range(2, len(base) + 1):
        for combo in itertools.combinations(base, r):
            probs["+".join(combo)] = {k: sum(probs[m][k] for m in combo) for k in ("oof", "test")}

    for name, p in probs.items():
        fold_f1 = [macro_f1([LABELS[i] for i in y[held]], [LABELS[i] for i in p["oof"][held].argmax(1)], LABELS) for _, held in outer]
        pred = [LABELS[i] for i in p["test"].argmax(1)]
        ci = bootstrap_intervals(yt, pred, LABELS, n_resamples=args.resamples, seed=args.seed)["macro_f1"]
        members = name.split("+") if name in {"+".join(c) for r in range(2, len(base) + 1) for c in itertools.combinations(base, r)} else [name]
        wall = sum(clock.wall.get(m, 0) + clock.wall.get(m + "/test", 0) for m in members)
        cpu = sum(clock.cpu.get(m, 0) + clock.cpu.get(m + "/test", 0) for m in members)
        test_wall = sum(clock.wall.get(m + "/test", 0) for m in members)
        test_cpu = sum(clock.cpu.get(m + "/test", 0) for m in members)
        out["rows"][name] = {"cv_mean": 100 * float(np.mean(fold_f1)), "cv_std": 100 * float(np.std(fold_f1, ddof=1)),
                             "cv_pooled": 100 * macro_f1([LABELS[i] for i in y], [LABELS[i] for i in p["oof"].argmax(1)], LABELS),
                             "test": 100 * macro_f1(yt, pred, LABELS), "test_low": 100 * ci["low"], "test_high": 100 * ci["high"],
                             "test_accuracy": 100 * accuracy(yt, pred), "fit_wall_all": wall, "fit_cpu_all": cpu,
                             "fit_wall_test": test_wall, "fit_cpu_test": test_cpu}
    print(f"\nCliniFact: {args.folds}-fold CV over train + validation ({len(pool)} pairs) and the official test split ({len(test)} pairs); "
          f"macro-F1 in %; seconds of fitting + predicting (CV folds + test fit; the test fit alone = one workflow job, embeddings excluded)")
    print(f"{'row':<40} {'CV mean ± std':>14} {'pooled':>7} {'test':>6} {'95% CI':>12} {'acc':>5} {'wall s':>8} {'CPU s':>8} {'job CPU s':>9}")
    for name, r in sorted(out["rows"].items(), key=lambda kv: -kv[1]["cv_mean"]):
        print(f"{name:<40} {r['cv_mean']:>7.1f} ± {r['cv_std']:<4.1f} {r['cv_pooled']:>7.1f} {r['test']:>6.1f} {r['test_low']:>5.1f}–{r['test_high']:<5.1f} "
              f"{r['test_accuracy']:>5.1f} {r['fit_wall_all']:>8.1f} {r['fit_cpu_all']:>8.1f} {r['fit_cpu_test']:>9.1f}")
    return out


# ------------------------------------------------------------------------------------ HealthFC
def healthfc(args, clock: Clock) -> dict:
    from medfc.common.io import write_jsonl
    from medfc.experiments.healthfc import runs as H
    from medfc.experiments.healthfc.systems import HealthFCFoldOptions
    from medfc.healthfc.dataset import build_dataset, write_dataset
    from medfc.healthfc.folds import assign_folds
    from medfc.healthfc.release import read_release

    config = load_config(args.configfile, {"healthfc": {"release": {"source": str(Path(args.healthfc).resolve())}},
                                           "models": {"healthfc": {"en": ["tfidf", *args.encoders]}}})
    plan = Plan(config)
    tmp = Path(tempfile.mkdtemp(prefix="frozen-bench-healthfc-"))
    rows, _ = read_release(args.healthfc)
    records, _ = build_dataset(None, None, None, rows, None, lambda texts: ["" for _ in texts], None)
    write_dataset(records, jsonl=tmp / "healthfc.jsonl")
    folds_df, _ = assign_folds(records, config["healthfc"]["folds"]["scheme"], config["healthfc"]["folds"]["n_splits"], config["healthfc"]["folds"]["seed"])
    folds_df.to_csv(tmp / "folds.csv", index=False)
    out: dict = {"rows": {}}
    models = ["tfidf", *args.encoders]
    for system in args.systems:
        recs: dict[str, list[dict]] = {m: [] for m in models}
        for m in models:
            for fold in plan.healthfc_folds_run():
                mapping = plan.healthfc_experiment_options("en", m, system, fold).to_mapping()
                if mapping["train"]["kind"] == "frozen":
                    mapping = {**mapping, "train": {**mapping["train"], "cache_dir": args.cache}}
                with clock(f"healthfc/{system}/{m}"):
                    r, _ = H.run_fold(tmp / "healthfc.jsonl", tmp / "folds.csv", HealthFCFoldOptions.from_mapping(mapping), threads=args.threads)
                recs[m].extend(r)
            print(f"HealthFC {system} {m}: {clock.wall[f'healthfc/{system}/{m}']:.0f} s wall (load {load1()})", flush=True)
        combos = [(m,) for m in models] + [("tfidf", m) for m in args.encoders] + ([tuple(models)] if len(models) > 2 else [])
        for combo in combos:
            by_fold: dict[int, tuple[list, list]] = {}
            per = [{(r["fold"], r["id"]): r for r in recs[m]} for m in combo]
            labels: list[str] = []
            for key, first in per[0].items():
                labels = list(first["probs"])
                p = sum(np.array([x[key]["probs"][lab] for lab in labels]) for x in per)
                g, pr = by_fold.setdefault(key[0], ([], []))
                g.append(first["label"])
                pr.append(labels[int(np.argmax(p))])
            f1 = [100 * macro_f1(g, pr, labels) for g, pr in by_fold.values()]
            name = "+".join(combo)
            out["rows"][f"{system}/{name}"] = {"mean": float(np.mean(f1)), "std": float(np.std(f1, ddof=1)),
                                               "wall": sum(clock.wall[f"healthfc/{system}/{m}"] for m in combo),
                                               "cpu": sum(clock.cpu[f"healthfc/{system}/{m}"] for m in combo)}
    print("\nHealthFC release-mode systems (5 folds; on the stand-in the scores mean nothing): macro-F1 mean ± std, seconds summed over folds")
    print(f"{'system/row':<48} {'macro-F1':>13} {'wall s':>8} {'CPU s':>8}")
    for name, r in out["rows"].items():
        print(f"{name:<48} {r['mean']:>6.1f} ± {r['std']:<4.1f} {r['wall']:>8.1f} {r['cpu']:>8.1f}")
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--clinifact", default=None, help="directory with the CliniFact release's three split CSVs")
    ap.add_argument("--healthfc", default=None, help="a HealthFC release file (Datensatz.csv format), e.g. the stand-in")
    ap.add_argument("--configfile", nargs="*", default=[str(ROOT / "config/cpu.yaml")])
    ap.add_argument("--encoders", nargs="*", default=["frozen-minilm", "frozen-mpnet"])
    ap.add_argument("--extra", nargs="*", default=[],
                    help="more CliniFact model aliases of the config files, fitted as members (e.g. a gbm alias with embedding_model in "
                         "models.options; its encoder's texts are embedded by its own fit)")
    ap.add_argument("--systems", nargs="+", default=list(SYSTEMS))
    ap.add_argument("--cache", default=str(ROOT / "cache" / "embeddings"))
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--gbm-with", nargs="*", default=["cos", "cos+oof"], choices=["cos", "cos+oof"],
                    help="the gradient-boosting rows given the first encoder's embeddings (none: skip them; cos+oof takes minutes)")
    ap.add_argument("--folds", type=int, default=5)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--resamples", type=int, default=10_000)
    ap.add_argument("--probe", type=int, default=0, help="encode this many texts of each recipe afresh, for throughput")
    ap.add_argument("--check", type=int, default=0, help="re-encode this many stored abstracts and print the largest difference")
    ap.add_argument("--seed-sqlite", default=None, help="copy the vectors of a prototype SQLite store into --cache first")
    ap.add_argument("--json", default=None)
    args = ap.parse_args(argv)
    start = time.perf_counter()
    print(f"load average at start: {load1()}", flush=True)
    clock = Clock()
    results: dict = {"load_start": load1()}
    if args.clinifact:
        results["clinifact"] = clinifact(args, Plan(load_config(args.configfile)), clock)
    if args.healthfc:
        results["healthfc"] = healthfc(args, clock)
    results["load_end"], results["wall"] = load1(), time.perf_counter() - start
    print(f"\nload average at the end: {load1()}; wall {results['wall']:.0f} s")
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
