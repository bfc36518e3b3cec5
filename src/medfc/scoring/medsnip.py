"""MedSNIP-style binary scoring: false-class F1 (FF1), macro-F1 over TRUE/FALSE, OR-FALSE aggregation of
unit verdicts, abstention policies, the HealthFC label mapping, and a vectorised paired bootstrap.

Definitions (docs/scoring.md):

* **FF1**: F1 with FALSE as the positive class; precision, recall and F1 are each 0 when their
  denominator is 0 (so FF1 is 0 when there is no gold FALSE or no predicted FALSE).
* **Macro-F1**: mean of the FALSE-class and TRUE-class F1.
* **OR-FALSE**: an answer is FALSE when at least one of its units is predicted FALSE, else TRUE.
* **Abstentions** (a verdict of ``None``/"ABSTAIN"/"NEI"/...): ``"drop"`` removes the item (its
  coverage is reported), ``"as_false"`` counts it FALSE, ``"as_true"`` counts it TRUE. Inside OR-FALSE
  the same policy applies per unit: with ``"drop"`` abstaining units are ignored, and an answer whose
  units all abstain (or that has no units) abstains itself.
* **HealthFC**: SUPPORTED → TRUE, REFUTED → FALSE; NOT ENOUGH INFORMATION claims are excluded.
* **Paired bootstrap**: resample claim indices with replacement (the same draw for both systems),
  recompute each system's score, and take Δ = score(B) − score(A). Reports the observed Δ, the
  2.5/97.5 percentile interval, ``p_gt_0`` = share of resamples with Δ > 0 and ``p_value`` = share of
  resamples on the other side of 0 from the observed Δ (Δ ≤ 0 when observed > 0, Δ ≥ 0 when
  observed < 0, 1.0 when observed = 0), a one-sided bootstrap p-value.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np

TRUE = "TRUE"
FALSE = "FALSE"
ABSTAIN_POLICIES = ("drop", "as_false", "as_true")
METRICS = ("ff1", "tf1", "macro_f1", "accuracy")

_TRUE_WORDS = {"true", "t", "1", "supported", "support", "supports", "correct", "yes"}
_FALSE_WORDS = {"false", "f", "0", "refuted", "refute", "refutes", "incorrect", "no"}
_ABSTAIN_WORDS = {"", "abstain", "abstained", "none", "null", "nei", "unknown", "not enough information",
                  "not_enough_info", "not enough info", "not enough evidence", "insufficient"}

_HEALTHFC = {"supported": TRUE, "refuted": FALSE}
_HEALTHFC_NEI = {"nei", "not enough information", "not_enough_information", "not enough info",
                 "not_enough_info", "notenoughinfo"}


def normalise_verdict(value: Any) -> str | None:
    """TRUE, FALSE, or None for an abstention. Accepts bools, 0/1 and common spellings.

    Raises ``ValueError`` for anything else, so a malformed label is never silently read as TRUE.
    """
    if value is None:
        return None
    if isinstance(value, bool):
        return TRUE if value else FALSE
    if isinstance(value, (int, np.integer)) and int(value) in (0, 1):
        return TRUE if int(value) == 1 else FALSE
    key = str(value).strip().lower()
    if key in _TRUE_WORDS:
        return TRUE
    if key in _FALSE_WORDS:
        return FALSE
    if key in _ABSTAIN_WORDS:
        return None
    raise ValueError(f"not a TRUE/FALSE verdict: {value!r}")


def healthfc_label(label: Any) -> str | None:
    """HealthFC gold label → TRUE / FALSE, or None for NEI (excluded from scoring)."""
    key = str(label).strip().lower().replace("-", " ")
    if key in _HEALTHFC:
        return _HEALTHFC[key]
    if key in _HEALTHFC_NEI or key.replace(" ", "_") in _HEALTHFC_NEI:
        return None
    raise ValueError(f"not a HealthFC label: {label!r}")


def or_false(unit_verdicts: Iterable[Any], abstain: str = "drop") -> str | None:
    """OR-FALSE aggregation of unit verdicts into one answer verdict (None = the answer abstains)."""
    _check_policy(abstain)
    seen_true = False
    for v in unit_verdicts:
        verdict = normalise_verdict(v)
        if verdict is None:
            if abstain == "as_false":
                return FALSE
            if abstain == "as_true":
                seen_true = True
            continue
        if verdict == FALSE:
            return FALSE
        seen_true = True
    return TRUE if seen_true else None


def _check_policy(policy: str) -> None:
    if policy not in ABSTAIN_POLICIES:
        raise ValueError(f"abstention policy must be one of {ABSTAIN_POLICIES}, got {policy!r}")


def _encode(gold: Sequence[Any], pred: Sequence[Any], abstain: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Boolean arrays (gold is FALSE, prediction is FALSE, item kept) after the abstention policy."""
    _check_policy(abstain)
    if len(gold) != len(pred):
        raise ValueError(f"{len(gold)} gold labels but {len(pred)} predictions")
    g = np.zeros(len(gold), dtype=bool)
    p = np.zeros(len(gold), dtype=bool)
    keep = np.ones(len(gold), dtype=bool)
    for i, (gv, pv) in enumerate(zip(gold, pred)):
        gn = normalise_verdict(gv)
        if gn is None:
            raise ValueError(f"item {i}: gold label {gv!r} is not TRUE/FALSE")
        g[i] = gn == FALSE
        pn = normalise_verdict(pv)
        if pn is None:
            if abstain == "drop":
                keep[i] = False
            p[i] = abstain == "as_false"
        else:
            p[i] = pn == FALSE
    return g, p, keep


def _counts(g: np.ndarray, p: np.ndarray, keep: np.ndarray) -> np.ndarray:
    """Per-item indicator columns tp_F, fp_F, fn_F, tn_F (int8), zero where not kept."""
    cols = np.stack([g & p, ~g & p, g & ~p, ~g & ~p], axis=-1) & keep[:, None]
    return cols.astype(np.int8)


def _f1(tp: np.ndarray, fp: np.ndarray, fn: np.ndarray) -> np.ndarray:
    tp, fp, fn = (np.asarray(x, dtype=float) for x in (tp, fp, fn))
    with np.errstate(divide="ignore", invalid="ignore"):
        prec = np.where(tp + fp > 0, tp / np.where(tp + fp > 0, tp + fp, 1), 0.0)
        rec = np.where(tp + fn > 0, tp / np.where(tp + fn > 0, tp + fn, 1), 0.0)
        f1 = np.where(prec + rec > 0, 2 * prec * rec / np.where(prec + rec > 0, prec + rec, 1), 0.0)
    return f1


def _metric_from_counts(c: np.ndarray, metric: str) -> np.ndarray:
    """Metric over the last axis of summed counts (tp_F, fp_F, fn_F, tn_F)."""
    tp, fp, fn, tn = (c[..., k] for k in range(4))
    if metric == "ff1":
        return _f1(tp, fp, fn)
    if metric == "tf1":
        return _f1(tn, fn, fp)
    if metric == "macro_f1":
        return (_f1(tp, fp, fn) + _f1(tn, fn, fp)) / 2.0
    if metric == "accuracy":
        n = (tp + fp + fn + tn).astype(float)
        return np.where(n > 0, (tp + tn) / np.where(n > 0, n, 1), 0.0)
    raise ValueError(f"metric must be one of {METRICS}, got {metric!r}")


def false_f1(gold: Sequence[Any], pred: Sequence[Any], abstain: str = "drop") -> float:
    """False-class F1 (FALSE is the positive class; 0 when any denominator is 0)."""
    g, p, keep = _encode(gold, pred, abstain)
    return float(_metric_from_counts(_counts(g, p, keep).sum(axis=0), "ff1"))


def binary_scores(gold: Sequence[Any], pred: Sequence[Any], abstain: str = "drop") -> dict[str, Any]:
    """FF1, TRUE-class F1, macro-F1, accuracy, false-class P/R, counts and coverage."""
    g, p, keep = _encode(gold, pred, abstain)
    c = _counts(g, p, keep).sum(axis=0)
    tp, fp, fn, tn = (int(x) for x in c)
    n = len(g)
    return {
        "n": n,
        "n_scored": int(keep.sum()),
        "n_abstained": sum(normalise_verdict(v) is None for v in pred),
        "coverage": float(keep.sum()) / n if n else 0.0,
        "abstain_policy": abstain,
        "ff1": float(_metric_from_counts(c, "ff1")),
        "tf1": float(_metric_from_counts(c, "tf1")),
        "macro_f1": float(_metric_from_counts(c, "macro_f1")),
        "accuracy": float(_metric_from_counts(c, "accuracy")),
        "false_precision": tp / (tp + fp) if tp + fp else 0.0,
        "false_recall": tp / (tp + fn) if tp + fn else 0.0,
        "counts": {"tp_false": tp, "fp_false": fp, "fn_false": fn, "tn_false": tn},
    }


def paired_bootstrap(
    gold: Sequence[Any],
    pred_a: Sequence[Any],
    pred_b: Sequence[Any],
    metric: str = "ff1",
    n_resamples: int = 10_000,
    seed: int = 0,
    abstain: str = "drop",
    alpha: float = 0.05,
    chunk: int = 500,
) -> dict[str, Any]:
    """Paired bootstrap over claims of Δ = metric(B) − metric(A) (see module docstring).

    Vectorised: per-item indicator counts are gathered for a chunk of resamples at once, so
    10,000 resamples of 1,000 claims take well under a second. Deterministic for a given ``seed``
    (``numpy.random.default_rng``). With ``abstain="drop"`` each resample scores each system on its
    own non-abstained items.
    """
    if metric not in METRICS:
        raise ValueError(f"metric must be one of {METRICS}, got {metric!r}")
    if n_resamples < 1:
        raise ValueError("n_resamples must be positive")
    g, pa, ka = _encode(gold, pred_a, abstain)
    _, pb, kb = _encode(gold, pred_b, abstain)
    n = len(g)
    if n == 0:
        raise ValueError("no items to bootstrap")
    per_item = np.concatenate([_counts(g, pa, ka), _counts(g, pb, kb)], axis=1)  # (n, 8) int8
    observed_a = float(_metric_from_counts(per_item[:, :4].sum(axis=0), metric))
    observed_b = float(_metric_from_counts(per_item[:, 4:].sum(axis=0), metric))

    rng = np.random.default_rng(seed)
    diffs = np.empty(n_resamples, dtype=float)
    dtype = np.int16 if n < 2**15 else np.int32
    for start in range(0, n_resamples, chunk):
        m = min(chunk, n_resamples - start)
        idx = rng.integers(0, n, size=(m, n))
        # sum of the 8 indicator columns over each resample: (m, 8)
        sums = np.stack([per_item[:, k].astype(dtype)[idx].sum(axis=1) for k in range(8)], axis=-1)
        diffs[start:start + m] = _metric_from_counts(sums[:, 4:], metric) - _metric_from_counts(sums[:, :4], metric)

    observed = observed_b - observed_a
    lo, hi = np.percentile(diffs, [100 * alpha / 2, 100 * (1 - alpha / 2)])
    if observed > 0:
        p_value = float(np.mean(diffs <= 0))
    elif observed < 0:
        p_value = float(np.mean(diffs >= 0))
    else:
        p_value = 1.0
    return {
        "metric": metric,
        "score_a": observed_a,
        "score_b": observed_b,
        "diff": observed,
        "ci_low": float(lo),
        "ci_high": float(hi),
        "ci_level": 1 - alpha,
        "p_gt_0": float(np.mean(diffs > 0)),
        "p_value": p_value,
        "significant": bool(lo > 0 or hi < 0),
        "n": n,
        "n_resamples": n_resamples,
        "seed": seed,
        "abstain_policy": abstain,
    }


def answer_verdicts(records: Iterable[Mapping[str, Any]], abstain: str = "drop") -> list[str | None]:
    """Answer-level verdicts: ``pred_label`` when present, else OR-FALSE over ``unit_verdicts``."""
    out = []
    for rec in records:
        if "unit_verdicts" in rec and rec.get("pred_label") is None:
            out.append(or_false(rec["unit_verdicts"] or [], abstain=abstain))
        else:
            out.append(normalise_verdict(rec.get("pred_label")))
    return out
