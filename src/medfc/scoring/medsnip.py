"""MedSNIP-style binary scoring (docs/scoring.md, "Definitions"): false-class F1, the aggregations of unit verdicts
into answer verdicts, abstention policies, the HealthFC mapping and vectorised paired bootstraps (``method="bca"``
as ``scipy.stats.bootstrap(method="BCa")``)."""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Mapping, Sequence

import numpy as np

TRUE = "TRUE"
FALSE = "FALSE"
ABSTAIN_POLICIES = ("drop", "as_false", "as_true")
BOOTSTRAP_METHODS = ("percentile", "bca")
CLUSTER_SETS = ("union", "sorted_intersection")
AGGREGATIONS = ("or_false", "and_false", "threshold_k", "majority", "first")
METRICS = ("ff1", "tf1", "macro_f1", "accuracy")

_ABSTAIN_WORDS = ("", "abstain", "abstained", "none", "null", "nei", "unknown", "not enough information",
                  "not_enough_info", "not enough info", "not enough evidence", "insufficient")
_VERDICT_WORDS = {**dict.fromkeys(("true", "t", "1", "supported", "support", "supports", "correct", "yes"), TRUE),
                  **dict.fromkeys(("false", "f", "0", "refuted", "refute", "refutes", "incorrect", "no"), FALSE),
                  **dict.fromkeys(_ABSTAIN_WORDS, None)}

_HEALTHFC = {"supported": TRUE, "refuted": FALSE}
_HEALTHFC_NEI = {"nei", "not enough information", "not_enough_information", "not enough info", "not_enough_info", "notenoughinfo"}


Bootstrap = dict[str, object]  # a paired bootstrap's result: the keys :func:`_bootstrap_units` returns, and more
# an arm of a clustered bootstrap: (gold verdicts, predicted verdicts, cluster ids), one item each per unit
Arm = tuple[Sequence[object], Sequence[object], Sequence[Hashable]]


def normalise_verdict(value: object) -> str | None:
    """TRUE, FALSE, or None for an abstention, from bools, 0/1 and common spellings; anything else is a
    ``ValueError`` (a malformed label is never read as TRUE)."""
    if value is None:
        return None
    if isinstance(value, bool):
        return TRUE if value else FALSE
    if isinstance(value, (int, np.integer)) and int(value) in (0, 1):
        return TRUE if int(value) == 1 else FALSE
    key = str(value).strip().lower()
    if key not in _VERDICT_WORDS:
        raise ValueError(f"not a TRUE/FALSE verdict: {value!r}")
    return _VERDICT_WORDS[key]


def healthfc_label(label: object) -> str | None:
    """HealthFC gold label → TRUE / FALSE, or None for NEI (excluded from scoring)."""
    key = str(label).strip().lower().replace("-", " ")
    if key in _HEALTHFC:
        return _HEALTHFC[key]
    if key in _HEALTHFC_NEI or key.replace(" ", "_") in _HEALTHFC_NEI:
        return None
    raise ValueError(f"not a HealthFC label: {label!r}")


def healthfc_binary(records: Sequence[Mapping[str, object]]) -> tuple[list[int], list[str], list[str | None]]:
    """The supported / refuted claims among HealthFC prediction records: their positions, gold and predicted
    verdicts (None: an abstention)."""
    keep, gold, pred = [], [], []
    for k, rec in enumerate(records):
        g = healthfc_label(rec.get("label"))
        if g is not None:
            keep.append(k)
            gold.append(g)
            pred.append(normalise_verdict(rec.get("pred_label")))
    return keep, gold, pred


def nei_counts(verdicts: Iterable[object]) -> dict[str, int | float]:
    """How unscored claims were predicted (``n_pred_none``: no verdict; shares 0 when there are none)."""
    got = [normalise_verdict(v) for v in verdicts]
    n, n_true, n_false = len(got), sum(v == TRUE for v in got), sum(v == FALSE for v in got)
    return {"n": n, "n_pred_true": n_true, "n_pred_false": n_false, "n_pred_none": n - n_true - n_false,
            "share_true": n_true / n if n else 0.0, "share_false": n_false / n if n else 0.0}


def healthfc_nei_predictions(records: Sequence[Mapping[str, object]], abstain: str = "drop") -> dict[str, int | float]:
    """:func:`nei_counts` of the NOT ENOUGH INFO claims among HealthFC prediction records (:func:`answer_verdicts`),
    as the MedSNIP repository's ``insufficient_report``."""
    nei = [rec for rec in records if healthfc_label(rec.get("label")) is None]
    return nei_counts(answer_verdicts(nei, abstain=abstain))


def or_false(unit_verdicts: Iterable[object], abstain: str = "drop") -> str | None:
    """OR-FALSE aggregation of unit verdicts into one answer verdict (None = the answer abstains)."""
    return aggregate(unit_verdicts, "or_false", abstain=abstain)


def aggregate(unit_verdicts: Iterable[object], rule: str = "or_false", k: int = 2, abstain: str = "drop") -> str | None:
    """Unit verdicts → one answer verdict (None = the answer abstains): ``or_false`` (any unit FALSE), ``and_false``
    (every unit), ``threshold_k`` (at least ``k`` units), ``majority`` (ties TRUE) or ``first``."""
    _one_of("abstention policy", abstain, ABSTAIN_POLICIES)
    _one_of("aggregation", rule, AGGREGATIONS)
    votes = []
    for v in unit_verdicts:
        verdict = normalise_verdict(v)
        if verdict is None:
            if abstain == "drop":
                continue
            verdict = FALSE if abstain == "as_false" else TRUE
        if verdict == FALSE and rule == "or_false":
            return FALSE  # decided: the units after it are not read
        votes.append(verdict)
    if not votes or rule == "first":
        return votes[0] if votes else None
    n_false = sum(v == FALSE for v in votes)
    needed = {"or_false": 1, "and_false": len(votes), "threshold_k": k, "majority": len(votes) // 2 + 1}[rule]
    return FALSE if n_false >= needed else TRUE


def _one_of(what: str, value: str, allowed: tuple[str, ...]) -> None:
    if value not in allowed:
        raise ValueError(f"{what} must be one of {allowed}, got {value!r}")


def _encode(gold: Sequence[object], pred: Sequence[object], abstain: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Boolean arrays (gold is FALSE, prediction is FALSE, item kept) after the abstention policy."""
    _one_of("abstention policy", abstain, ABSTAIN_POLICIES)
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
        return np.where(prec + rec > 0, 2 * prec * rec / np.where(prec + rec > 0, prec + rec, 1), 0.0)


def _metric_from_counts(c: np.ndarray, metric: str) -> np.ndarray:
    """A metric of :data:`METRICS` (its callers check it) over the last axis of summed counts (tp_F, fp_F, fn_F, tn_F)."""
    tp, fp, fn, tn = (c[..., k] for k in range(4))
    if metric == "ff1":
        return _f1(tp, fp, fn)
    if metric == "tf1":
        return _f1(tn, fn, fp)
    if metric == "macro_f1":
        return (_f1(tp, fp, fn) + _f1(tn, fn, fp)) / 2.0
    n = (tp + fp + fn + tn).astype(float)  # accuracy
    return np.where(n > 0, (tp + tn) / np.where(n > 0, n, 1), 0.0)


def binary_scores(gold: Sequence[object], pred: Sequence[object], abstain: str = "drop") -> dict[str, object]:
    """FF1, TRUE-class F1, macro-F1, accuracy, false-class P/R, counts and coverage."""
    g, p, keep = _encode(gold, pred, abstain)
    c = _counts(g, p, keep).sum(axis=0)
    tp, fp, fn, tn = (int(x) for x in c)
    n = len(g)
    return {"n": n, "n_scored": int(keep.sum()), "n_abstained": sum(normalise_verdict(v) is None for v in pred),
            "coverage": float(keep.sum()) / n if n else 0.0, "abstain_policy": abstain,
            **{m: float(_metric_from_counts(c, m)) for m in METRICS},
            "false_precision": tp / (tp + fp) if tp + fp else 0.0,
            "false_recall": tp / (tp + fn) if tp + fn else 0.0, "counts": {"tp_false": tp, "fp_false": fp, "fn_false": fn, "tn_false": tn}}


def _bootstrap_units(per_unit: np.ndarray, *, n_resamples: int, seed: int, metric: str = "ff1", alpha: float = 0.05, chunk: int = 500,
                     method: str = "percentile", empty_arm_zero: bool = False) -> Bootstrap:
    """Paired bootstrap over the rows of ``per_unit`` ((n, 8) counts: A's tp/fp/fn/tn, then B's). Resamples draw
    ``rng.integers(0, n, (m, n))`` from ``default_rng(seed)`` chunk after chunk (the stream of
    ``scipy.stats.bootstrap(..., paired=True)``). ``empty_arm_zero``: Δ is 0 where an arm has no scored unit."""
    _one_of("metric", metric, METRICS)
    _one_of("method", method, BOOTSTRAP_METHODS)
    if n_resamples < 1:
        raise ValueError("n_resamples must be positive")
    n = per_unit.shape[0]
    if n == 0:
        raise ValueError("no items to bootstrap")
    totals = per_unit.sum(axis=0)
    observed_a = float(_metric_from_counts(totals[:4], metric))
    observed_b = float(_metric_from_counts(totals[4:], metric))

    rng = np.random.default_rng(seed)
    diffs = np.empty(n_resamples, dtype=float)
    dtype = np.int32 if n * int(per_unit.max(initial=0)) < 2**31 else np.int64
    cols = [per_unit[:, k].astype(dtype) for k in range(8)]
    n_empty = 0
    for start in range(0, n_resamples, chunk):
        m = min(chunk, n_resamples - start)
        idx = rng.integers(0, n, size=(m, n))
        sums = np.stack([c[idx].sum(axis=1) for c in cols], axis=-1)  # (m, 8)
        d = _metric_from_counts(sums[:, 4:], metric) - _metric_from_counts(sums[:, :4], metric)
        if empty_arm_zero:
            empty = (sums[:, :4].sum(axis=1) == 0) | (sums[:, 4:].sum(axis=1) == 0)
            d = np.where(empty, 0.0, d)
            n_empty += int(empty.sum())
        diffs[start:start + m] = d

    observed = observed_b - observed_a
    if empty_arm_zero and (totals[:4].sum() == 0 or totals[4:].sum() == 0):
        observed = 0.0
    levels = (alpha / 2, 1 - alpha / 2)
    bca: dict[str, bool | float | None] = {}
    if method == "bca":
        levels, bca = _bca_levels(per_unit, totals, metric, observed, diffs, alpha)
    lo, hi = np.percentile(diffs, [100 * levels[0], 100 * levels[1]])
    p_value = float(np.mean(diffs <= 0 if observed > 0 else diffs >= 0)) if observed != 0 else 1.0
    return {"metric": metric, "method": method, "score_a": observed_a, "score_b": observed_b, "diff": observed, "ci_low": float(lo),
            "ci_high": float(hi), "ci_level": 1 - alpha, "p_gt_0": float(np.mean(diffs > 0)), "p_value": p_value,
            "significant": bool(lo > 0 or hi < 0), "n": n, "n_resamples": n_resamples, "seed": seed,
            **({"n_empty_resamples": n_empty} if empty_arm_zero else {}), **bca}


def _bca_levels(per_unit: np.ndarray, totals: np.ndarray, metric: str, observed: float, diffs: np.ndarray,
                alpha: float) -> tuple[tuple[float, float], dict[str, bool | float | None]]:
    """BCa percentile levels as scipy.stats.bootstrap computes them (jackknife acceleration); a degenerate
    distribution falls back to the percentile levels."""
    from scipy.special import ndtr, ndtri

    loo = totals[None, :] - per_unit  # (n, 8): every unit left out once
    jack = _metric_from_counts(loo[:, 4:], metric) - _metric_from_counts(loo[:, :4], metric)
    u = jack.mean() - jack
    den = float(np.sum(u**2))
    share = (np.count_nonzero(diffs < observed) + np.count_nonzero(diffs <= observed)) / (2 * len(diffs))
    z0 = float(ndtri(share))
    if den == 0 or not np.isfinite(z0):
        return (alpha / 2, 1 - alpha / 2), {"bca_degenerate": True, "z0": z0, "acceleration": None}
    a_hat = float(np.sum(u**3)) / (6.0 * den**1.5)
    z_ends = (float(ndtri(alpha / 2)), float(ndtri(1 - alpha / 2)))
    level_lo, level_hi = (float(ndtr(z0 + (z0 + z) / (1 - a_hat * (z0 + z)))) for z in z_ends)
    return (level_lo, level_hi), {"bca_degenerate": False, "z0": z0, "acceleration": a_hat}


def paired_bootstrap(gold: Sequence[object], pred_a: Sequence[object], pred_b: Sequence[object], metric: str = "ff1", *, n_resamples: int,
                     seed: int, abstain: str = "drop", alpha: float = 0.05, chunk: int = 500, method: str = "percentile") -> Bootstrap:
    """Paired bootstrap over claims of Δ = metric(B) − metric(A); with ``abstain="drop"`` each resample scores each
    system on its own non-abstained items."""
    g, pa, ka = _encode(gold, pred_a, abstain)
    _, pb, kb = _encode(gold, pred_b, abstain)
    per_item = np.concatenate([_counts(g, pa, ka), _counts(g, pb, kb)], axis=1)  # (n, 8)
    out = _bootstrap_units(per_item, n_resamples=n_resamples, seed=seed, metric=metric, alpha=alpha, chunk=chunk, method=method)
    out["abstain_policy"] = abstain
    return out


def cluster_counts(gold: Sequence[object], pred: Sequence[object], clusters: Sequence[Hashable], order: Sequence[Hashable],
                   abstain: str = "drop") -> np.ndarray:
    """(len(order), 4) summed tp/fp/fn/tn of the FALSE class per cluster, clusters in ``order``."""
    if len(clusters) != len(gold):
        raise ValueError(f"{len(gold)} gold labels but {len(clusters)} cluster ids")
    g, p, keep = _encode(gold, pred, abstain)
    pos = {c: i for i, c in enumerate(order)}
    out = np.zeros((len(order), 4), dtype=np.int64)
    np.add.at(out, np.array([pos[c] for c in clusters], dtype=np.int64), _counts(g, p, keep).astype(np.int64))
    return out


def _cluster_sort_key(cluster: Hashable) -> tuple[int, int, str]:
    """Integer ids (and strings of one) numerically, then the others as strings."""
    text = str(cluster).strip()
    if isinstance(cluster, (int, np.integer)) or (text[1:] if text[:1] in "+-" else text).isdigit():
        return (0, int(text), "")
    return (1, 0, text)


def _only(arm: Arm, keep: set[Hashable]) -> tuple[list[object], list[object], list[Hashable]]:
    rows = [(g, p, c) for g, p, c in zip(*arm) if c in keep]
    return [r[0] for r in rows], [r[1] for r in rows], [r[2] for r in rows]


def clustered_paired_bootstrap(arm_a: Arm, arm_b: Arm, abstain: str = "drop", *, seed: int, n_resamples: int, clusters: str = "union",
                               **settings: str | float | int) -> Bootstrap:
    """Paired bootstrap of Δ = metric(B) − metric(A) resampling whole clusters (answers): each arm is (gold, pred,
    cluster ids) over its own units. ``settings``: ``metric``, ``alpha``, ``chunk``, ``method``.

    ``clusters``: ``union`` (either arm's, A's first) or ``sorted_intersection``, the MedSNIP repository's
    ``msb_column_cis.py``: the clusters both arms hold, sorted, the others left out; Δ = 0 where an arm has no
    scored unit; percentile intervals only, at ``alpha`` rounded to 12 decimals (``1 - 0.95`` gives exactly 2.5%).
    """
    _one_of("clusters", clusters, CLUSTER_SETS)
    extra: dict[str, int] = {}
    n_units_a, n_units_b = len(arm_a[0]), len(arm_b[0])
    if clusters == "union":
        order = list(dict.fromkeys([*arm_a[2], *arm_b[2]]))
    else:
        if settings.get("method", "percentile") != "percentile":
            raise ValueError("clusters='sorted_intersection' gives percentile intervals only (as the repository)")
        in_a, in_b = set(arm_a[2]), set(arm_b[2])
        order = sorted(in_a & in_b, key=_cluster_sort_key)
        if not order:
            raise ValueError("no cluster that both arms hold to bootstrap")
        keep = set(order)
        extra = {"n_clusters_a_only": len(in_a - in_b), "n_clusters_b_only": len(in_b - in_a)}
        arm_a, arm_b = _only(arm_a, keep), _only(arm_b, keep)
        extra.update(n_units_a_used=len(arm_a[0]), n_units_b_used=len(arm_b[0]))
        if "alpha" in settings:
            settings = {**settings, "alpha": round(settings["alpha"], 12)}
        settings = {**settings, "empty_arm_zero": True}
    per_cluster = np.concatenate([cluster_counts(*arm_a, order, abstain), cluster_counts(*arm_b, order, abstain)], axis=1)
    out = _bootstrap_units(per_cluster, n_resamples=n_resamples, seed=seed, **settings)
    out.update(abstain_policy=abstain, clusters=clusters, n_clusters=len(order), n_units_a=n_units_a, n_units_b=n_units_b, **extra)
    return out


def answer_verdicts(records: Iterable[Mapping[str, object]], abstain: str = "drop") -> list[str | None]:
    """Answer-level verdicts: ``pred_label`` when present, else OR-FALSE over ``unit_verdicts``."""
    return [or_false(rec["unit_verdicts"] or [], abstain=abstain) if "unit_verdicts" in rec and rec.get("pred_label") is None
            else normalise_verdict(rec.get("pred_label")) for rec in records]
