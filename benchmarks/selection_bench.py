"""How honest a stacked ensemble's choice is: its own estimate against the score it then gets on data it never saw.

    python benchmarks/selection_bench.py --clinifact DIR [--configfile config/cpu.yaml] [--members tfidf gbm] [--folds 5]
    python benchmarks/selection_bench.py --stand-in [--folds 5] [--draws 20]

Outer cross-validation: in each of ``--folds`` folds the members (``--clinifact``: trained as the workflow trains
them, with their inner cross-validation on the outer training items only, ``experiments.stacking.inner_folds``;
``--stand-in``: simulated) give out-of-fold predictions on the outer training items and predictions on the held-out
fold. Two selections choose from the out-of-fold predictions:

* ``search`` (the design the stacked ensembles had: :func:`search_choice`): forward selection of members, single
  members included, the meta-model's C from ``C_grid`` and the choice against the best member, all by one
  cross-validation over the out-of-fold items, which also gives the choice's estimate;
* ``nested`` (:func:`medfc.experiments.ensembles.stack_selection.choose_stack`): stack, plain average and best member judged by
  nested cross-validation, a candidate taken only past a bootstrap margin (Bonferroni over the candidates).

Printed per fold: each selection's choice, its estimate and its score on the held-out fold (macro-F1 %), and the
best member's score there. The stand-in has HealthFC's sizes and label balances: veracity (750 claims: 204 supported,
423 not enough information, 123 refuted) and the level of evidence of the supported and refuted claims (327: 182
low, 112 moderate, 33 high), with two correlated members about as good as TF-IDF on them (macro-F1 about 41-47),
``--draws`` simulated datasets each; with ``--draws`` above 1 only the means over draws are printed.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np

from medfc.experiments.ensembles.stack_selection import StackingOptions, _features, _macro_f1, _Meta, _parts, choose_stack

STAND_INS = {"veracity": [204, 423, 123], "level of evidence": [182, 112, 33]}


# ------------------------------------------------------------------------------------ the search design


def search_choice(X: Mapping[str, np.ndarray], y: np.ndarray, members: Sequence[str], options: StackingOptions,
                  n_labels: int, min_gain: float = 0.002) -> tuple[str, float, object]:
    """Forward selection over the members (a single member is a candidate meta-model), each subset scored by its best
    C's cross-validated macro-F1 over the out-of-fold items; kept when it beats the best member's own macro-F1 by
    ``min_gain``. Returns the choice, its estimate (the score that chose it) and a function applying it."""
    parts = _parts(y, options.seed, 5)
    single = {m: _macro_f1(y, X[m].argmax(axis=1), n_labels) for m in members}
    tried: dict[tuple[str, ...], tuple[float, float]] = {}

    def score(subset: tuple[str, ...]) -> float:
        if subset not in tried:
            F = _features(X, subset, options.features)
            best = (-1.0, 0.0)
            for C in options.C_grid:
                pred = np.zeros(len(y), dtype=np.int64)
                for k in sorted(set(parts.tolist())):
                    held = parts == k
                    pred[held] = _Meta(C, n_labels).fit(F[~held], y[~held]).probs(F[held]).argmax(axis=1)
                best = max(best, (_macro_f1(y, pred, n_labels), -C))
            tried[subset] = (best[0], -best[1])
        return tried[subset][0]

    chosen = (max(members, key=lambda m: score((m,))),)
    current = score(chosen)
    while len(chosen) < len(members):
        add = max((m for m in members if m not in chosen), key=lambda m: score((*chosen, m)))
        if score((*chosen, add)) - current <= min_gain:
            break
        chosen, current = (*chosen, add), score((*chosen, add))
    best = max(members, key=lambda m: single[m])
    if current - single[best] <= min_gain:
        return f"{best} alone", single[best], lambda T: T[best]
    meta = _Meta(tried[chosen][1], n_labels).fit(_features(X, chosen, options.features), y)
    return "meta-model on " + " + ".join(chosen), current, lambda T: meta.probs(_features(T, chosen, options.features))


# --------------------------------------------------------------------------------------- the folds


def compare(folds: Sequence[tuple[dict, np.ndarray, dict, np.ndarray]], members: Sequence[str], options: StackingOptions,
            n_labels: int) -> list[dict]:
    """Per outer fold (out-of-fold probabilities and gold of its training items, the held-out fold's): each selection's
    choice, estimate and held-out score, and the best member's held-out score."""
    rows = []
    for X_oof, y_oof, X_test, y_test in folds:
        name, estimate, apply = search_choice(X_oof, y_oof, members, options, n_labels)
        choice = choose_stack(X_oof, y_oof, members, options, n_labels)
        chosen = choice.scores["chosen"]
        best = choice.fitted.members[0] if chosen.endswith(" alone") else max(members, key=lambda m: _macro_f1(y_oof, X_oof[m].argmax(1), n_labels))
        key = "best member" if chosen.endswith(" alone") else chosen
        rows.append({"search": name, "search estimate": 100 * estimate, "search held-out": 100 * _macro_f1(y_test, apply(X_test).argmax(1), n_labels),
                     "nested": chosen, "nested estimate": choice.scores["estimates"][key],
                     "nested held-out": 100 * _macro_f1(y_test, choice.apply(X_test).argmax(1), n_labels),
                     "best member held-out": 100 * _macro_f1(y_test, X_test[best].argmax(1), n_labels)})
    return rows


def print_rows(title: str, rows: Sequence[dict]) -> None:
    print(f"\n{title}\n")
    print("| fold | search: choice | its estimate | held-out | nested: choice | its estimate | held-out | best member held-out |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    for k, r in enumerate(rows):
        print(f"| {k} | {r['search']} | {r['search estimate']:.1f} | {r['search held-out']:.1f} | {r['nested']} | "
              f"{r['nested estimate']:.1f} | {r['nested held-out']:.1f} | {r['best member held-out']:.1f} |")
    mean = {key: np.mean([r[key] for r in rows]) for key in rows[0] if key not in ("search", "nested")}
    print(f"| mean | | {mean['search estimate']:.1f} | {mean['search held-out']:.1f} | | {mean['nested estimate']:.1f} | "
          f"{mean['nested held-out']:.1f} | {mean['best member held-out']:.1f} |")


# -------------------------------------------------------------------------------------- the stand-in


def simulated(counts: Sequence[int], seed: int, strength: float = 0.5, shared: float = 0.9) -> tuple[np.ndarray, dict]:
    """Gold labels with ``counts`` per class (shuffled) and two members' probabilities: each member's logits are
    ``strength`` on the gold class plus noise, a ``shared`` share of it common to both (correlated errors), and a
    member-specific class bias."""
    rng = np.random.default_rng(seed)
    y = rng.permutation(np.repeat(np.arange(len(counts)), counts))
    common = rng.normal(size=(len(y), len(counts)))
    X = {}
    for m, bias in (("tfidf", np.array([0.3, 0.0, -0.3])), ("tfidf-wc", np.array([-0.2, 0.2, 0.0]))):
        own = rng.normal(size=(len(y), len(counts)))
        logits = strength * np.eye(len(counts))[y] + shared * common + np.sqrt(1 - shared ** 2) * own + bias
        e = np.exp(logits - logits.max(axis=1, keepdims=True))
        X[m] = e / e.sum(axis=1, keepdims=True)
    return y, X


def stand_in_folds(counts: Sequence[int], seed: int, n_folds: int) -> list[tuple[dict, np.ndarray, dict, np.ndarray]]:
    """The outer folds of one simulated dataset: every item's member predictions are out-of-fold ones (a simulated
    member never saw the item it predicts), so a fold's training items give the choice its data."""
    y, X = simulated(counts, seed)
    parts = _parts(y, seed, n_folds)
    return [({m: v[parts != k] for m, v in X.items()}, y[parts != k], {m: v[parts == k] for m, v in X.items()}, y[parts == k])
            for k in range(n_folds)]


# ---------------------------------------------------------------------------------------- CliniFact


def clinifact_folds(directory: Path, configfiles: Sequence[str], members: Sequence[str], n_folds: int) -> tuple[list, StackingOptions]:
    """The outer folds over the release's train + validation pairs, members trained as the workflow trains them."""
    from medfc.common.labels import CLINIFACT_LABELS
    from medfc.common.report import SkipReport
    from medfc.experiments.pairs import load_pairs, pair_example
    from medfc.experiments.models.kinds import build_model
    from medfc.experiments.models.options import PairsTrainOptions
    from medfc.experiments.ensembles.ensemble import inner_assignment
    from medfc.experiments.ensembles.stacking import PairsInnerOptions, inner_cv_pairs
    from medfc.plan import Plan

    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from clinifact_cv import load_config

    config = load_config(configfiles)
    plan = Plan(config)
    options = {m: PairsTrainOptions.from_mapping(plan.pairs_experiment_options("clinifact", m)) for m in members}
    stacking = StackingOptions.from_mapping(config["experiments"]["stacking"])
    inner = {"inner_folds": stacking.inner_folds, "seed": stacking.seed}
    report = SkipReport("bench")
    data = {s: load_pairs(directory / f"{s}_set.csv", report) for s in ("train", "validation")}
    pool = [p for s in ("train", "validation") for p in data[s]]
    outer = inner_assignment([p.id for p in pool], [p.label for p in pool], n_folds, 0)
    folds = []
    for k in range(n_folds):
        splits = {s: [p for p in data[s] if outer[p.id] != k] for s in data}
        held = [p for p in pool if outer[p.id] == k]
        X_oof, X_test, y_oof = {}, {}, None
        for m, opt in options.items():
            recs, _ = inner_cv_pairs(splits, PairsInnerOptions.from_mapping({"run": opt, "inner": inner}))
            X_oof[m] = np.array([[r["probs"][lab] for lab in CLINIFACT_LABELS] for r in recs])
            y_oof = np.array([CLINIFACT_LABELS.index(r["label"]) for r in recs])
            ex = {s: [pair_example(p, opt.include_title) for p in splits[s]] for s in splits}
            fitted = build_model(opt.train).fit(ex["train"], CLINIFACT_LABELS, ex["validation"] or None, checkpoint_dir=None,
                                                trim="left", desc="bench")
            X_test[m] = np.asarray(fitted.probs([pair_example(p, opt.include_title) for p in held]))
        folds.append((X_oof, y_oof, X_test, np.array([CLINIFACT_LABELS.index(p.label) for p in held])))
        print(f"fold {k}: {len(held)} held-out pairs, members trained", flush=True)
    return folds, stacking


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--clinifact", default=None, help="the CliniFact release's directory (train_set.csv, validation_set.csv)")
    ap.add_argument("--stand-in", action="store_true", help="HealthFC-sized simulated members")
    ap.add_argument("--configfile", nargs="*", default=["config/cpu.yaml"])
    ap.add_argument("--members", nargs="+", default=["tfidf", "gbm"])
    ap.add_argument("--folds", type=int, default=5)
    ap.add_argument("--draws", type=int, default=1)
    args = ap.parse_args(argv)
    if args.clinifact:
        folds, stacking = clinifact_folds(Path(args.clinifact), args.configfile, args.members, args.folds)
        print_rows(f"CliniFact release, train + validation, {args.folds} outer folds, members {' + '.join(args.members)}",
                   compare(folds, args.members, stacking, 3))
    if args.stand_in:
        from medfc.common.schema import section

        stacking = StackingOptions.from_mapping(section("experiments.stacking"))
        for name, counts in STAND_INS.items():
            draws = [compare(stand_in_folds(counts, seed, args.folds), ["tfidf", "tfidf-wc"], stacking, len(counts))
                     for seed in range(args.draws)]
            title = f"HealthFC-sized stand-in, {name} ({'/'.join(map(str, counts))}), {args.folds} outer folds"
            if args.draws == 1:
                print_rows(title, draws[0])
            else:
                rows = [r for d in draws for r in d]
                keys = ("search estimate", "search held-out", "nested estimate", "nested held-out", "best member held-out")
                print(f"\n{title}, {args.draws} draws: " + ", ".join(f"{k} {np.mean([r[k] for r in rows]):.1f}" for k in keys)
                      + f"; search chose a meta-model in {sum(not r['search'].endswith('alone') for r in rows)} of {len(rows)} folds, "
                      f"nested in {sum(not r['nested'].endswith('alone') for r in rows)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
