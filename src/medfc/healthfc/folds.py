"""Cross-validation folds of the HealthFC dataset, stratified by label (docs/healthfc.md §4): ``paper`` (the authors'
``StratifiedKFold`` over the release's row order) or ``grouped`` (``StratifiedGroupKFold`` by article)."""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Sequence

import numpy as np
import pandas as pd

from medfc.healthfc.align import normalize_url
from medfc.healthfc.records import DatasetRecord


def _round_robin(labels: Sequence[str], n_splits: int) -> np.ndarray:
    """Deterministic stratified assignment for sets too small for scikit-learn's splitters."""
    folds = np.zeros(len(labels), dtype=int)
    by_label = sorted(range(len(labels)), key=lambda i: (labels[i], i))
    folds[by_label] = np.arange(len(labels)) % n_splits
    return folds


def paper_folds(labels: Sequence[str], n_splits: int, seed: int) -> np.ndarray:
    """Fold of each position: ``StratifiedKFold(n_splits, shuffle=True, random_state=seed)`` over ``labels``."""
    labels = list(labels)
    if not labels:
        return np.full(0, -1, dtype=int)
    if max(Counter(labels).values()) < n_splits:
        return _round_robin(labels, n_splits)
    from sklearn.model_selection import StratifiedKFold  # scikit-learn costs ~0.9 s to import: only here

    return _split(StratifiedKFold(n_splits=n_splits, shuffle=True, random_state=seed), labels)


def grouped_folds(labels: Sequence[str], groups: Sequence[str], n_splits: int, seed: int) -> np.ndarray:
    """Fold of each position: ``StratifiedGroupKFold`` by ``groups`` (no group straddles folds)."""
    if not labels:
        return np.full(0, -1, dtype=int)
    n_groups = len(set(groups))
    if n_groups < n_splits:
        raise ValueError(f"{n_groups} articles cannot fill {n_splits} grouped folds; lower healthfc.folds.n_splits")
    from sklearn.model_selection import StratifiedGroupKFold

    return _split(StratifiedGroupKFold(n_splits=n_splits, shuffle=True, random_state=seed), labels, groups)


def _split(splitter, labels: list[str], *groups: list[str]) -> np.ndarray:
    """Each position's test fold under ``splitter``."""
    folds = np.full(len(labels), -1, dtype=int)
    for k, (_, test) in enumerate(splitter.split(np.zeros(len(labels)), labels, *groups)):
        folds[test] = k
    return folds


def straddling_groups(folds: Sequence[int], groups: Sequence[str]) -> list[str]:
    """Groups (articles) whose members are in more than one fold."""
    seen: dict[str, set[int]] = defaultdict(set)
    for f, g in zip(folds, groups):
        seen[g].add(int(f))
    return sorted(g for g, fs in seen.items() if len(fs) > 1)


def _paper_assignment(records: Sequence[DatasetRecord], n_splits: int, seed: int) -> tuple[dict[str, int], bool]:
    with_row = sorted((r for r in records if r.get("release_row") is not None), key=lambda r: r["release_row"])
    without = sorted((r for r in records if r.get("release_row") is None), key=lambda r: r["id"])
    out: dict[str, int] = {}
    for part in (with_row, without):  # split separately, each with the same splitter
        out.update({r["id"]: int(f) for r, f in zip(part, paper_folds([r["label"] for r in part], n_splits, seed))})
    rows = [r["release_row"] for r in with_row]
    reproduces = bool(rows) and rows == list(range(len(rows))) and not without
    return out, reproduces


def assign_folds(records: Sequence[DatasetRecord], scheme: str, n_splits: int, seed: int) -> tuple[pd.DataFrame, dict[str, object]]:
    """Folds for dataset records → (``DataFrame[id, fold]`` in record order, report); ``scheme``: paper or grouped."""
    ids = [r["id"] for r in records]
    labels = [r["label"] for r in records]
    groups = [normalize_url(r["url"]) for r in records]
    paper, reproduces = _paper_assignment(records, n_splits, seed)
    folds = paper if scheme == "paper" else dict(zip(ids, map(int, grouped_folds(labels, groups, n_splits, seed))))
    chosen = [folds[i] for i in ids]
    straddle = straddling_groups(chosen, groups)
    paper_straddle = straddling_groups([paper[i] for i in ids], groups)
    multi = sum(1 for n in Counter(groups).values() if n > 1)
    total = Counter(labels)
    per_fold: dict[int, Counter[str]] = {k: Counter() for k in range(n_splits)}
    for fold, lab in zip(chosen, labels):
        per_fold[fold][lab] += 1
    report: dict[str, object] = {
        "scheme": scheme, "n_splits": n_splits, "seed": seed, "records": len(records), "articles": len(set(groups)),
        "articles_with_several_claims": multi, "straddling_articles": len(straddle), "straddling_article_urls": straddle,
        "paper_straddling_articles": len(paper_straddle), "paper_straddling_article_urls": paper_straddle,
        "reproduces_release_folds": reproduces if scheme == "paper" else False,
        "sizes": {str(k): sum(c.values()) for k, c in per_fold.items()},
        "labels": {str(k): dict(sorted(c.items())) for k, c in per_fold.items()},
        "ideal_labels_per_fold": {lab: round(n / n_splits, 2) for lab, n in sorted(total.items())},
        "max_label_deviation": round(max(
            (abs(per_fold[k][lab] - total[lab] / n_splits) for k in per_fold for lab in total), default=0.0), 2),
    }
    return pd.DataFrame({"id": ids, "fold": chosen}), report
