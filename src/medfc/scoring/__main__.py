"""``python -m medfc.scoring {averitec,medsnip,classify} ...``: score prediction files, print a table,
write JSON with ``--out``. Formats and definitions: docs/scoring.md. The flags' defaults are the config
schema's (``scoring.lambdas``, ``scoring.max_pred_evidence``, ``scoring.abstain``, ``scoring.bootstrap``)."""

from __future__ import annotations

import argparse
import logging
import sys
from collections.abc import Mapping, Sequence
from typing import Any

from medfc.common import schema
from medfc.common.io import write_json
from medfc.common.report import SkipReport
from medfc.scoring import classification
from medfc.scoring.averitec import CLAIM_TYPE_LAMBDAS
from medfc.scoring.nltk_data import NltkDataMissing
from medfc.scoring.files import score_files


def _table(rows: Sequence[tuple[str, object]]) -> str:
    width = max((len(k) for k, _ in rows), default=0)
    cells = [f"{v:.4f}" if isinstance(v, float) else "-" if v is None else v for _, v in rows]
    return "\n".join(f"{key:<{width}}  {cell}" for (key, _), cell in zip(rows, cells))


def _rows_averitec(s: Mapping[str, Any]) -> list[tuple[str, object]]:
    """Rows in the order of the official script's printout (docs/scoring.md maps each one)."""
    rows: list[tuple[str, object]] = [("claims", s["n"]), ("question-only score (HU-METEOR)", s["question_only_score"]),
                                      ("evidence score (Q+A, HU-METEOR)", s["evidence_score"])]
    rows += [(f"  F1 {lab}", v["f1"]) for lab, v in s["label"]["per_class"].items()]
    rows += [("label macro-F1", s["label"]["macro_f1"]), ("label accuracy", s["label"]["accuracy"])]
    j = s.get("justification")
    if j:
        rows.append((f"justification METEOR ({'fallback: evidence' if j['fallback'] else 'strict'})", j["meteor"]))
    for lam, v in s["averitec"].items():
        rows.append((f"AVeriTeC score @ {lam}", v))
        if j and lam in j["gated"]:
            rows.append((f"justification @ {lam}", j["gated"][lam]))
    for lam, by_type in (s.get("evidence_score_by_claim_type") or {}).items():
        rows += [(f"evidence score @ {lam}, {t}", v) for t, v in by_type.items()]
    rows += [("claims without gold evidence", s["n_no_gold_evidence"]), ("claims without predicted evidence", s["n_no_pred_evidence"]),
             ("predictions without questions (scored on evidence)", s["n_questions_from_evidence"])]
    if j:
        rows.append(("justifications taken from evidence", j["n_from_evidence"]))
    return rows


def _rows_binary(prefix: str, s: Mapping[str, Any]) -> list[tuple[str, object]]:
    return [(f"{prefix}n (scored / all)", f"{s['n_scored']} / {s['n']}"), (f"{prefix}FF1", s["ff1"]), (f"{prefix}TRUE-class F1", s["tf1"]),
            (f"{prefix}macro-F1", s["macro_f1"]), (f"{prefix}accuracy", s["accuracy"]), (f"{prefix}abstained", s["n_abstained"])]


def _rows_medsnip(s: Mapping[str, Any]) -> list[tuple[str, object]]:
    if "bootstrap" not in s:
        return _rows_binary("", s)
    b = s["bootstrap"]
    return _rows_binary("A ", s["a"]) + _rows_binary("B ", s["b"]) + [
        (f"Δ {b['metric']} (B − A)", b["diff"]),
        (f"{int(b['ci_level'] * 100)}% CI", f"[{b['ci_low']:.4f}, {b['ci_high']:.4f}]"),
        ("P(Δ > 0)", b["p_gt_0"]), ("bootstrap p (one-sided)", b["p_value"]),
        ("resamples / seed", f"{b['n_resamples']} / {b['seed']}")]


def _rows_classify(s: Mapping[str, Any]) -> list[tuple[str, object]]:
    rows: list[tuple[str, object]] = [("items", s["n"]), ("accuracy", s["accuracy"]), ("macro-P", s["macro_precision"]),
                                   ("macro-R", s["macro_recall"]), ("macro-F1", s["macro_f1"])]
    rows += [(f"  F1 {lab}", v["f1"]) for lab, v in s["per_class"].items()]
    if "ci" in s:
        ci = s["ci"]
        rows += [(f"{name} {int(round(100 * (1 - ci['alpha'])))}% CI", f"[{ci[key]['low']:.4f}, {ci[key]['high']:.4f}]")
                 for name, key in (("accuracy", "accuracy"), ("macro-F1", "macro_f1"))]
    if "mcnemar_bowker" in s:
        mb = s["mcnemar_bowker"]
        rows += [("compare macro-F1", s["compare"]["macro_f1"]), ("McNemar–Bowker chi2 (df)", f"{mb['statistic']:.4f} ({mb['df']})"),
                 ("McNemar–Bowker p", mb["p_value"]), ("McNemar (correctness) p", s["mcnemar"]["p_value"])]
    return rows


def main(argv: Sequence[str] | None = None) -> int:
    defaults = schema.section("scoring")
    bootstrap = defaults["bootstrap"]
    parser = argparse.ArgumentParser(prog="python -m medfc.scoring", description=__doc__)
    sub = parser.add_subparsers(dest="scorer", required=True)

    av = sub.add_parser("averitec", help="AVeriTeC label, evidence (HU-METEOR) and AVeriTeC scores")
    av.add_argument("predictions", help="workflow predictions JSONL, or an AVeriTeC-shaped prediction JSON with --gold")
    av.add_argument("--gold", help="AVeriTeC-shaped gold JSON (pairs with the predictions by position)")
    av.add_argument("--lambdas", type=float, nargs="+", default=list(defaults["lambdas"]))
    av.add_argument("--per-claim", action="store_true", help="include per-claim rows in the JSON")
    av.add_argument("--strict-justification", action="store_true",
                    help="a prediction without a justification scores 0 (default: its first 10 evidence "
                         "strings joined with spaces are scored, as in the official script)")

    ms = sub.add_parser("medsnip", help="false-class F1, OR-FALSE, paired bootstrap")
    ms.add_argument("predictions", help="JSONL {id, label, pred_label | unit_verdicts}")
    ms.add_argument("--compare", help="system B's predictions (same ids): paired bootstrap of B − A")
    ms.add_argument("--abstain", choices=["drop", "as_false", "as_true"], default=defaults["abstain"])
    ms.add_argument("--healthfc", action="store_true", help="gold labels are HealthFC's (NEI claims excluded)")
    ms.add_argument("--metric", choices=["ff1", "tf1", "macro_f1", "accuracy"], default=bootstrap["metric"])
    ms.add_argument("--n-resamples", type=int, default=bootstrap["n_resamples"])
    ms.add_argument("--seed", type=int, default=bootstrap["seed"])

    cl = sub.add_parser("classify", help="accuracy, per-class/macro P/R/F1; several files = folds")
    cl.add_argument("predictions", nargs="+", help="JSONL {id, label, pred_label}; several files are folds")
    cl.add_argument("--labels", nargs="+", help="classes in order (default: sorted gold labels)")
    cl.add_argument("--compare", help="second system on the same ids (only with one predictions file)")
    cl.add_argument("--n-resamples", type=int, default=bootstrap["n_resamples"], help="bootstrap resamples of the intervals (0: none)")
    cl.add_argument("--seed", type=int, default=bootstrap["seed"])

    for p in (av, ms, cl):
        p.add_argument("--out", help="write the scores as JSON here")
        p.add_argument("--report", help="write the skip report (JSON) here")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")

    report = SkipReport(f"scoring.{args.scorer}")
    try:
        if args.scorer == "averitec":
            opts = {"lambdas": args.lambdas, "max_pred_evidence": defaults["max_pred_evidence"], "per_claim": args.per_claim,
                    "justification_fallback": not args.strict_justification, "claim_type_lambdas": list(CLAIM_TYPE_LAMBDAS)}
            scores = score_files("averitec", args.predictions, opts, gold=args.gold, report=report)
            rows = _rows_averitec(scores)
        elif args.scorer == "medsnip":
            opts = {"abstain": args.abstain, "healthfc": args.healthfc, "metric": args.metric, "n_resamples": args.n_resamples, "seed": args.seed}
            scores = score_files("medsnip", args.predictions, opts, compare=args.compare, report=report)
            rows = _rows_medsnip(scores)
        else:
            opts = {"labels": args.labels or None, "n_resamples": args.n_resamples, "seed": args.seed}
            if len(args.predictions) == 1:
                scores = score_files("classify", args.predictions[0], opts, compare=args.compare, report=report)
                rows = _rows_classify(scores)
            else:
                if args.compare:
                    parser.error("--compare takes a single predictions file")
                folds = [score_files("classify", p, opts, report=report) for p in args.predictions]
                agg = classification.aggregate_folds(folds)
                scores = {"scorer": "classify", "folds": folds, "aggregate": agg}
                rows = [(k, f"{v['mean']:.4f} ± {v['std']:.4f}" if v["std"] is not None else f"{v['mean']:.4f}")
                        for k, v in agg.items() if k in ("accuracy", "macro_precision", "macro_recall", "macro_f1")]
                rows.insert(0, ("folds", len(folds)))
    except (NltkDataMissing, OSError, ValueError) as exc:  # a JSONDecodeError is a ValueError
        print(f"error: {exc}", file=sys.stderr)
        return 2 if isinstance(exc, NltkDataMissing) else 1

    scores["skipped"] = {"n": len(report.skipped), "by_reason": report.reasons()}
    rows.append(("skipped records", len(report.skipped)))
    print(_table(rows))
    if args.out:
        write_json(args.out, scores)
    if args.report:
        report.write(args.report)
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
