"""How much of a CliniFact test score is the split: k-fold cross-validation over the release's training
and validation pairs next to the official test split, for the scikit-learn models of a config.

    python benchmarks/clinifact_cv.py --clinifact DIR [--configfile config/cpu.yaml] [--folds 5] [--seed 0]
                                      [--models tfidf gbm] [--resamples 10000]

DIR holds the release's train_set.csv, validation_set.csv and test_set.csv. Each model is fitted exactly as
the workflow fits it (the config's ``experiments.tfidf`` / ``experiments.gbm`` section, schema defaults
filled in): on each outer fold the remaining pairs are split 80/20 (stratified) into training and
validation, the model is fitted on them and predicts the held-out fold. The equal-weight average of all
the models is scored too, as the ensembles of the workflow are. Printed per model: macro-F1 of each fold,
their mean ± std, the pooled out-of-fold macro-F1, and the official test split's macro-F1 with its 95%
percentile bootstrap interval (``medfc.scoring.classification.bootstrap_intervals``), and wall times.

Folds are by pair, as the release's own split is, so a trial's pairs can fall on both sides, as they do
between the release's train and test splits.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
import yaml
from sklearn.model_selection import StratifiedKFold, train_test_split
from snakemake.utils import update_config, validate

from medfc.experiments.pairs import load_pairs, pair_example
from medfc.experiments.models.kinds import build_model
from medfc.experiments.models.options import GbmOptions, TfidfOptions
from medfc.experiments.healthfc.systems import CLINIFACT_LABELS
from medfc.scoring.classification import bootstrap_intervals, macro_f1

ROOT = Path(__file__).resolve().parents[1]
KINDS = {"tfidf": TfidfOptions, "gbm": GbmOptions}


def load_config(configfiles: list[str]) -> dict:
    """config/config.yaml, then each configfile on top (merged as snakemake --configfile merges them,
    with snakemake.utils.update_config), with the schema's defaults filled in."""
    config: dict = {}
    for path in [ROOT / "config/config.yaml", *configfiles]:
        update_config(config, yaml.safe_load(Path(path).read_text(encoding="utf-8")) or {})
    validate(config, schema=str(ROOT / "workflow/schemas/config.schema.yaml"), set_default=True)
    return config


def model_options(config: dict, kind: str):
    return KINDS[kind].from_mapping({**config["experiments"][kind], "model": f"sklearn:{kind}"}, where=f"experiments.{kind}")


def _probs(options, train, val, predict) -> np.ndarray:
    return build_model(options).fit(train, CLINIFACT_LABELS, val, desc=options.model).probs(predict)


def _pred(probs: np.ndarray) -> list[str]:
    return [CLINIFACT_LABELS[i] for i in probs.argmax(axis=1)]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--clinifact", required=True, help="directory with the release's three split CSVs")
    ap.add_argument("--configfile", nargs="*", default=[str(ROOT / "config/cpu.yaml")])
    ap.add_argument("--models", nargs="+", default=["tfidf", "gbm"], choices=sorted(KINDS))
    ap.add_argument("--folds", type=int, default=5)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--resamples", type=int, default=10_000)
    args = ap.parse_args(argv)

    config = load_config(args.configfile)
    options = {kind: model_options(config, kind) for kind in args.models}
    d = Path(args.clinifact)
    split = {s: [pair_example(p) for p in load_pairs(d / f"{s}_set.csv")] for s in ("train", "validation", "test")}
    pool = split["train"] + split["validation"]
    y = np.array([ex.label for ex in pool])
    names = [*args.models, "+".join(args.models)] if len(args.models) > 1 else list(args.models)
    oof = {m: np.zeros((len(pool), len(CLINIFACT_LABELS))) for m in args.models}
    fold_f1: dict[str, list[float]] = {m: [] for m in names}
    seconds = dict.fromkeys(args.models, 0.0)
    outer = StratifiedKFold(args.folds, shuffle=True, random_state=args.seed)
    for k, (rest, held) in enumerate(outer.split(np.zeros(len(y)), y)):
        tr, va = train_test_split(rest, test_size=0.2, stratify=y[rest], random_state=args.seed)
        gold = y[held].tolist()
        for m in args.models:
            start = time.perf_counter()
            oof[m][held] = _probs(options[m], [pool[i] for i in tr], [pool[i] for i in va], [pool[i] for i in held])
            seconds[m] += time.perf_counter() - start
            fold_f1[m].append(macro_f1(gold, _pred(oof[m][held]), CLINIFACT_LABELS))
        if len(args.models) > 1:
            fold_f1[names[-1]].append(macro_f1(gold, _pred(sum(oof[m][held] for m in args.models)), CLINIFACT_LABELS))
        print(f"fold {k}: " + "  ".join(f"{m} {100 * fold_f1[m][-1]:.1f}" for m in names), flush=True)

    test_gold = [ex.label for ex in split["test"]]
    test = {}
    for m in args.models:
        start = time.perf_counter()
        test[m] = _probs(options[m], split["train"], split["validation"], split["test"])
        seconds[m] += time.perf_counter() - start
    if len(args.models) > 1:
        oof[names[-1]] = sum(oof[m] for m in args.models)
        test[names[-1]] = sum(test[m] for m in args.models)

    print(f"\nCliniFact: {args.folds}-fold CV over train + validation ({len(pool)} pairs) and the official test split "
          f"({len(test_gold)} pairs); macro-F1 in %")
    print(f"{'model':<12} {'CV mean ± std':>14} {'CV pooled':>10} {'test':>6} {'test 95% CI':>13} {'wall s':>7}")
    for m in names:
        f = 100 * np.array(fold_f1[m])
        pooled = 100 * macro_f1(y.tolist(), _pred(oof[m]), CLINIFACT_LABELS)
        pred = _pred(test[m])
        ci = bootstrap_intervals(test_gold, pred, CLINIFACT_LABELS, n_resamples=args.resamples, seed=args.seed)["macro_f1"]
        wall = f"{seconds[m]:.0f}" if m in seconds else ""
        print(f"{m:<12} {f.mean():>7.1f} ± {f.std(ddof=1):<4.1f} {pooled:>10.1f} {100 * macro_f1(test_gold, pred, CLINIFACT_LABELS):>6.1f} "
              f"{100 * ci['low']:>6.1f}–{100 * ci['high']:<6.1f} {wall:>7}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
