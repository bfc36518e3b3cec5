"""The functions behind ``python -m medfc.scoring`` (docs/scoring.md): :func:`score_files` scores a prediction file
with one of three scorers; records that cannot be scored are skipped with a counted reason, never silently."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path

from medfc.common.io import read_jsonl
from medfc.common.jsontypes import JSONValue
from medfc.common.report import SkipReport
from medfc.scoring import averitec, classification, medsnip

SCORERS = ("averitec", "medsnip", "classify")
OPTION_KEYS = {"averitec": ("lambdas", "max_pred_evidence", "per_claim", "justification_fallback", "claim_type_lambdas"),
               "medsnip": ("abstain", "healthfc", "metric", "n_resamples", "seed"), "classify": ("labels", "n_resamples", "seed")}
Records = Sequence[Mapping[str, object]]
Record = Mapping[str, object]
Options = Mapping[str, JSONValue]  # a scorer's options (:data:`OPTION_KEYS`), JSON-like as the config's


def _checked(scorer: str, options: Options) -> dict[str, JSONValue]:
    """``options`` as a dict, with exactly the keys of :data:`OPTION_KEYS` (else a ValueError naming them)."""
    missing = [k for k in OPTION_KEYS[scorer] if k not in options]
    unknown = sorted(str(k) for k in options if k not in OPTION_KEYS[scorer])
    if missing or unknown:
        raise ValueError(f"{scorer} options: " + "; ".join(
            part for part in (missing and "missing " + ", ".join(missing), unknown and "unknown " + ", ".join(unknown)) if part))
    return dict(options)


def _unique(records: Iterable[Record], report: SkipReport, source: str) -> dict[str, Record]:
    out: dict[str, Record] = {}
    for i, rec in enumerate(records):
        rid = rec.get("id")
        if rid is None:
            report.skip(f"{source}:line{i + 1}", "missing_id")
        elif str(rid) in out:
            report.skip(str(rid), "duplicate_id", source)
        else:
            out[str(rid)] = rec
    report.count(f"records_{source}", len(out))
    return out


def score_averitec(records: Records | None, options: Options, report: SkipReport | None = None,
                   claims: Sequence[averitec.ClaimPrediction] | None = None, metric: averitec.PairMetric | None = None) -> dict[str, object]:
    """Score workflow prediction records (or ready ``claims``) with the AVeriTeC scorer."""
    options = _checked("averitec", options)
    report = report or SkipReport("scoring.averitec")
    def parsed() -> Iterator[averitec.ClaimPrediction]:
        for rid, rec in _unique(records or [], report, "predictions").items():
            try:
                yield averitec.claim_from_record(rec)
            except ValueError as exc:
                report.skip(rid, "bad_record", str(exc))

    kept = []
    for c in parsed() if claims is None else claims:  # skipped in the records' order
        if averitec.normalise_label(c.label) not in averitec.AVERITEC_LABELS:
            report.skip(c.id, "unknown_gold_label", c.label)
        else:
            kept.append(c)
    claims = kept
    report.count("scored", len(claims))
    scores = averitec.score_claims(claims, lambdas=[float(x) for x in options["lambdas"]], metric=metric, max_pred=options["max_pred_evidence"],
                                   per_claim=bool(options["per_claim"]), justification_fallback=bool(options["justification_fallback"]),
                                   claim_type_lambdas=[float(x) for x in options["claim_type_lambdas"]])
    return {"scorer": "averitec", **scores}


def _binary_items(recs: dict[str, Record], ids: Sequence[str], options: Mapping[str, JSONValue], report: SkipReport,
                  source: str) -> dict[str, tuple[str, str | None]]:
    """id → (gold TRUE/FALSE, answer verdict or None) for the records that can be scored."""
    abstain = options["abstain"]
    out = {}
    for rid in ids:
        rec = recs[rid]
        try:
            if options["healthfc"]:
                gold = medsnip.healthfc_label(rec.get("label"))
                if gold is None:  # a defined exclusion, not bad input: counted, not logged per claim
                    report.count(f"healthfc_nei_excluded_{source}")
                    continue
            else:
                gold = medsnip.normalise_verdict(rec.get("label"))
                if gold is None:
                    report.skip(rid, "gold_not_true_false", f"{source}: {rec.get('label')!r}")
                    continue
            if rec.get("pred_label") is None and "unit_verdicts" not in rec:
                report.skip(rid, "bad_record", f"{source}: no pred_label and no unit_verdicts")
                continue
            pred = medsnip.answer_verdicts([rec], abstain=abstain)[0]
        except ValueError as exc:
            report.skip(rid, "bad_record", f"{source}: {exc}")
            continue
        out[rid] = (gold, pred)
    return out


def _read(records: Records, compare: Records | None, report: SkipReport) -> tuple[dict[str, Record], dict[str, Record] | None, list[str]]:
    """The predictions and the compared system's, each id once, and the ids both have (in order)."""
    preds = _unique(records, report, "predictions")
    if compare is None:
        return preds, None, list(preds)
    other = _unique(compare, report, "compare")
    for rid in other:
        if rid not in preds:
            report.skip(rid, "missing_in_predictions", "present only in the compared file")
    for rid in preds:
        if rid not in other:
            report.skip(rid, "missing_in_compare", "present only in the predictions file")
    return preds, other, [rid for rid in preds if rid in other]


def score_medsnip(records: Records, options: Options, report: SkipReport, compare: Records | None = None) -> dict[str, object]:
    """FF1 etc. of one system; with ``compare``, also both systems' scores and the paired bootstrap."""
    options = _checked("medsnip", options)
    abstain = options["abstain"]
    preds, other, ids = _read(records, compare, report)
    items = _binary_items(preds, ids, options, report, "predictions")
    result: dict[str, object] = {"scorer": "medsnip", "healthfc": bool(options["healthfc"]),
                              "n_excluded_nei": report.counts.get("healthfc_nei_excluded_predictions", 0)}
    if other is None:
        report.count("scored", len(items))
        result.update(medsnip.binary_scores([g for g, _ in items.values()], [p for _, p in items.values()], abstain))
        return result
    items_b = _binary_items(other, list(items), options, report, "compare")
    both = []
    for rid in items:
        if rid not in items_b:
            report.skip(rid, "unscorable_in_compare")
        elif items_b[rid][0] != items[rid][0]:
            report.skip(rid, "gold_mismatch", "the two files disagree on the gold label")
        else:
            both.append(rid)
    report.count("scored", len(both))
    gold, pa, pb = [items[r][0] for r in both], [items[r][1] for r in both], [items_b[r][1] for r in both]
    result["a"], result["b"] = medsnip.binary_scores(gold, pa, abstain), medsnip.binary_scores(gold, pb, abstain)
    result["bootstrap"] = medsnip.paired_bootstrap(gold, pa, pb, metric=options["metric"], n_resamples=int(options["n_resamples"]),
                                                   seed=int(options["seed"]), abstain=abstain)
    return result


def score_classify(records: Records, options: Options, report: SkipReport, compare: Records | None = None) -> dict[str, object]:
    """Accuracy, per-class and macro P/R/F1, confusion, the bootstrap intervals (``ci``; ``n_resamples`` 0: none);
    with ``compare``, McNemar–Bowker and McNemar."""
    options = _checked("classify", options)
    preds, other, ids = _read(records, compare, report)
    labels = options["labels"]
    if not labels:
        labels = sorted({str(preds[r].get("label")) for r in ids if preds[r].get("label") is not None})
    labels = [str(x) for x in labels]
    known = set(labels)
    kept = []
    for rid in ids:
        rec = preds[rid]
        if rec.get("label") is None or rec.get("pred_label") is None:
            report.skip(rid, "bad_record", "missing label or pred_label")
        elif str(rec["label"]) not in known:
            report.skip(rid, "unknown_gold_label", str(rec["label"]))
        elif other is not None and other[rid].get("pred_label") is None:
            report.skip(rid, "bad_record", "compare: missing pred_label")
        else:
            kept.append(rid)
    report.count("scored", len(kept))
    gold = [str(preds[r]["label"]) for r in kept]
    pa = [str(preds[r]["pred_label"]) for r in kept]
    result: dict[str, object] = {"scorer": "classify", **classification.classification_scores(gold, pa, labels)}
    n_resamples = int(options["n_resamples"])
    if n_resamples > 0:
        result["ci"] = classification.bootstrap_intervals(gold, pa, labels, n_resamples=n_resamples, seed=int(options["seed"]))
    if other is not None:
        pb = [str(other[r]["pred_label"]) for r in kept]
        result["compare"] = classification.classification_scores(gold, pb, labels)
        extra = sorted((set(pa) | set(pb)) - known)
        result["mcnemar_bowker"] = classification.mcnemar_bowker(pa, pb, labels + extra)
        result["mcnemar"] = classification.mcnemar(gold, pa, pb)
    return result


def score_files(scorer: str, predictions: str | Path, options: Options, compare: str | Path | None = None, gold: str | Path | None = None,
                report: SkipReport | None = None) -> dict[str, object]:
    """Read prediction file(s) and score them (the CLI's front end); ``options``: :data:`OPTION_KEYS`."""
    report = report or SkipReport(f"scoring.{scorer}")
    if scorer == "averitec":
        if gold is not None:
            claims = averitec.claims_from_averitec(averitec.read_averitec_json(gold), averitec.read_averitec_json(predictions))
            return score_averitec(None, options, report=report, claims=claims)
        return score_averitec(list(read_jsonl(predictions)), options, report)
    cmp_records = list(read_jsonl(compare)) if compare else None
    if scorer == "medsnip":
        return score_medsnip(list(read_jsonl(predictions)), options, report, cmp_records)
    if scorer == "classify":
        return score_classify(list(read_jsonl(predictions)), options, report, cmp_records)
    raise ValueError(f"scorer must be one of {SCORERS}, got {scorer!r}")
