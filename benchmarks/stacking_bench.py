"""Ensembles side by side on the CliniFact release: each member, the plain average and learned stacking
(``medfc.experiments.ensembles.stacking``), in 5-fold cross-validation over train + validation and on the official
test split, with the workflow's own member options (``config/cpu.yaml`` unless given).

    python benchmarks/stacking_bench.py --clinifact DIR [--configfile config/cpu.yaml] [--folds 5]
                                        [--members tfidf gbm frozen-minilm] [--resamples 10000] [--scores FILE]

For each outer fold every member is fit as the workflow fits it (the outer training pairs keep their own
train / validation split) and predicts the held-out fold; its inner cross-validation
(:func:`medfc.experiments.ensembles.stacking.inner_cv_pairs`, ``experiments.stacking.inner_folds``) runs on
the outer training pairs only. The test split's rows fit on all of train + validation, as the workflow's
jobs do. Every ensemble of the members (every subset of two or more) is scored as the plain average and as
stacks under the config's ``experiments.stacking`` and the variants in :data:`VARIANTS`, so a design is
chosen by cross-validation, never by the test split. Printed: macro-F1 per fold, mean ± std, the test
split's macro-F1 with its 95% bootstrap interval, the stack's chosen members and weights on the test run,
and seconds. A frozen member reads its embeddings from ``<cache_dir>/embeddings`` (embedded once).
"""

from __future__ import annotations

import argparse
import itertools
import json
import sys
import time
from pathlib import Path

import numpy as np

from medfc.common.labels import CLINIFACT_LABELS
from medfc.common.report import SkipReport
from medfc.experiments.pairs import load_pairs, pair_example
from medfc.experiments.ensembles.ensemble import StackingOptions
from medfc.experiments.models.kinds import build_model
from medfc.experiments.models.options import PairsTrainOptions
from medfc.experiments.ensembles.stack_selection import choose_stack
from medfc.experiments.ensembles.ensemble import inner_assignment
from medfc.experiments.ensembles.stacking import PairsInnerOptions, inner_cv_pairs
from medfc.plan import Plan
from medfc.scoring.classification import bootstrap_intervals, macro_f1

sys.path.insert(0, str(Path(__file__).resolve().parent))
from clinifact_cv import load_config  # noqa: E402

# stacking designs compared beside the config's own (keys of experiments.stacking changed)
VARIANTS = {"C=1": {"C_grid": [1.0]}, "probs": {"features": "probs"}, "recalibrated too": {"candidates": ["stack", "average", "recalibrated"]}}


def _member_probs(options: PairsTrainOptions, splits: dict, predict: list) -> np.ndarray:
    model = build_model(options.train)
    ex = {s: [pair_example(p, options.include_title) for p in splits[s]] for s in ("train", "validation")}
    fitted = model.fit(ex["train"], CLINIFACT_LABELS, ex["validation"] or None, checkpoint_dir=None, trim="left", desc="bench")
    return fitted.probs([pair_example(p, options.include_title) for p in predict])


def _oof(options: PairsTrainOptions, inner: dict, splits: dict) -> tuple[np.ndarray, list[str]]:
    recs, _ = inner_cv_pairs(splits, PairsInnerOptions.from_mapping({"run": options, "inner": inner}))
    return np.array([[r["probs"][lab] for lab in CLINIFACT_LABELS] for r in recs]), [r["id"] for r in recs]


def _combine(X_inner: dict, y_inner: np.ndarray, X_test: dict, members: list[str], stacking: StackingOptions):
    choice = choose_stack({m: X_inner[m] for m in members}, y_inner, members, stacking, len(CLINIFACT_LABELS))
    return choice.apply(X_test), choice


def evaluate(splits: dict, predict: list, members: dict, inner: dict, stackings: dict) -> tuple[dict, dict, dict]:
    """Each member's probabilities on ``predict`` (fit on ``splits``), every ensemble's (average and each
    stacking), and the stacks' choices; plus seconds per member."""
    seconds = {}
    X_test, X_inner = {}, {}
    y_inner = None
    for name, options in members.items():
        t0 = time.perf_counter()
        X_test[name] = _member_probs(options, splits, predict)
        X_inner[name], ids = _oof(options, inner, splits)
        seconds[name] = time.perf_counter() - t0
        if y_inner is None:
            label = {p.id: p.label for s in splits.values() for p in s}
            y_inner = np.array([CLINIFACT_LABELS.index(label[i]) for i in ids])
    out = {name: X_test[name] for name in members}
    choices = {}
    for r in range(2, len(members) + 1):
        for combo in itertools.combinations(members, r):
            key = "+".join(combo)
            out[f"avg({key})"] = np.mean([X_test[m] for m in combo], axis=0)
            for sname, st in stackings.items():
                out[f"stack[{sname}]({key})"], choices[f"stack[{sname}]({key})"] = _combine(X_inner, y_inner, X_test, list(combo), st)
    return out, choices, seconds


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--clinifact", required=True, help="the release's directory (train_set.csv, validation_set.csv, test_set.csv)")
    ap.add_argument("--configfile", nargs="*", default=["config/cpu.yaml"])
    ap.add_argument("--members", nargs="+", default=["tfidf", "gbm", "frozen-minilm"])
    ap.add_argument("--folds", type=int, default=5)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--resamples", type=int, default=10000)
    ap.add_argument("--scores", default=None, help="a JSON file keeping each finished fold's scores: a rerun with it skips those folds")
    args = ap.parse_args(argv)

    config = load_config(args.configfile)
    plan = Plan(config)
    members = {m: PairsTrainOptions.from_mapping(plan.pairs_experiment_options("clinifact", m)) for m in args.members}
    stack_cfg = dict(config["experiments"]["stacking"])
    stackings = {"config": StackingOptions.from_mapping(stack_cfg)}
    stackings.update({name: StackingOptions.from_mapping({**stack_cfg, **change}) for name, change in VARIANTS.items()})
    inner = {"inner_folds": stack_cfg["inner_folds"], "seed": stack_cfg["seed"]}
    report = SkipReport("bench")
    d = Path(args.clinifact)
    data = {s: load_pairs(d / f"{s}_set.csv", report) for s in ("train", "validation", "test")}
    pool = [(s, p) for s in ("train", "validation") for p in data[s]]
    outer = inner_assignment([p.id for _, p in pool], [p.label for _, p in pool], args.folds, args.seed)
    print(f"CliniFact release: {len(pool)} train + validation pairs, {len(data['test'])} test pairs; members {', '.join(members)}; "
          f"experiments.stacking {stack_cfg}", flush=True)

    per_fold: dict[str, list[float]] = {}
    done = 0
    if args.scores and Path(args.scores).exists():
        kept = json.loads(Path(args.scores).read_text(encoding="utf-8"))
        if kept.get("args") == [args.folds, args.seed, sorted(members), stack_cfg]:
            per_fold, done = kept["per_fold"], kept["folds_done"]
            print(f"folds 0-{done - 1} read from {args.scores}", flush=True)
    started = time.perf_counter()
    for k in range(done, args.folds):
        splits = {s: [p for p in data[s] if outer[p.id] != k] for s in ("train", "validation")}
        held = [p for _, p in pool if outer[p.id] == k]
        probs, _, seconds = evaluate(splits, held, members, inner, stackings)
        gold = [p.label for p in held]
        for name, pr in probs.items():
            per_fold.setdefault(name, []).append(100 * macro_f1(gold, [CLINIFACT_LABELS[i] for i in pr.argmax(axis=1)], CLINIFACT_LABELS))
        if args.scores:
            Path(args.scores).write_text(json.dumps({"args": [args.folds, args.seed, sorted(members), stack_cfg], "per_fold": per_fold,
                                                     "folds_done": k + 1}), encoding="utf-8")
        print(f"fold {k}: {len(held)} pairs, members' seconds {', '.join(f'{m} {s:.0f}' for m, s in seconds.items())} "
              f"({time.perf_counter() - started:.0f} s so far)", flush=True)

    splits = {s: data[s] for s in ("train", "validation")}
    probs, choices, seconds = evaluate(splits, data["test"], members, inner, stackings)
    gold = [p.label for p in data["test"]]
    print(f"\n| row | {args.folds}-fold CV macro-F1 (mean ± std) | test macro-F1 | 95% CI | test choice (weights) |")
    print("| --- | --- | --- | --- | --- |")
    for name, pr in probs.items():
        pred = [CLINIFACT_LABELS[i] for i in pr.argmax(axis=1)]
        ci = bootstrap_intervals(gold, pred, CLINIFACT_LABELS, n_resamples=args.resamples, seed=0)["macro_f1"]
        cv = np.array(per_fold[name])
        choice = choices.get(name)
        chosen = "" if choice is None else f"{choice.scores['chosen']} ({', '.join(f'{m} {w:.2f}' for m, w in choice.weights.items())})"
        print(f"| {name} | {cv.mean():.1f} ± {cv.std():.1f} | {100 * macro_f1(gold, pred, CLINIFACT_LABELS):.1f} | "
              f"{100 * ci['low']:.1f}–{100 * ci['high']:.1f} | {chosen} |")
    print(f"\nseconds on the test run: {', '.join(f'{m} {s:.0f}' for m, s in seconds.items())}; total {time.perf_counter() - started:.0f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
