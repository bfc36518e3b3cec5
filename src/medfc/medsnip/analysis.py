"""MedSNIP analyses (docs/medsnip.md): gold for automatic snippets, per-pattern gaps, boundary fidelity (sentence-set
F1, ROUGE-L as the ``rouge-score`` package, adjusted Rand index), cost and the structure of MedSNIP Table 3."""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Hashable, Iterable, Mapping, Sequence
from functools import lru_cache
from math import comb
from typing import TypedDict

from medfc.common.nltk_import import import_nltk
from medfc.llm.base import Prices
from medfc.medsnip.decompose import answer_sentences, human_units
from medfc.medsnip.options import MODES
from medfc.medsnip.records import USAGE_KEYS, Answer, Unit, UnitFields
from medfc.scoring.medsnip import FALSE, TRUE, binary_scores, clustered_paired_bootstrap, or_false, paired_bootstrap


class PatternRow(TypedDict):
    """One human snippet for :func:`per_pattern`: its pattern, gold label, verdict and its atoms' verdicts."""

    pattern: str | None
    gold: str | None
    snippet: str | None
    atoms: list[str | None]
    cluster: Hashable  # its answer


def sentence_votes(answer: Answer, gold: str = "atomic") -> dict[int, Counter[str]]:
    """{sentence index: Counter of the labels of the human snippets that contain it} of a bench answer."""
    votes: dict[int, Counter] = defaultdict(Counter)
    for unit in human_units(dict(answer), "human_snippets"):
        for s in unit["source_sentences"]:
            votes[s][unit["labels"][gold]] += 1
    return dict(votes)


def project_labels(answer: Answer, units: Sequence[UnitFields], policy: str = "drop_mixed", gold: str = "atomic") -> list[str | None]:
    """Gold label of each automatic unit of one bench answer (None = no gold): the AND of the labels of its
    sentences, each the label of the human snippets containing it. A *mixed* sentence (both labels): ``drop_mixed``
    gives no gold, ``and`` counts it FALSE, ``majority`` takes the majority (ties TRUE), as the MedSNIP repository."""
    votes = sentence_votes(answer, gold)
    labels = {s: (next(iter(v)) if len(v) == 1 else None) for s, v in votes.items()}  # None: a mixed sentence
    majority = {s: FALSE if v[FALSE] > sum(v.values()) - v[FALSE] else TRUE for s, v in votes.items()}
    out: list[str | None] = []
    for u in units:
        covered = [s for s in u.get("source_sentences") or [] if s in labels]
        if not covered:
            out.append(None)
            continue
        vals = [labels[s] for s in covered]
        if policy == "drop_mixed":
            out.append(None if any(v is None for v in vals) else (FALSE if FALSE in vals else TRUE))
        elif policy == "and":
            out.append(FALSE if any(v != TRUE for v in vals) else TRUE)
        else:  # majority
            out.append(FALSE if any(majority[s] == FALSE for s in covered) else TRUE)
    return out


def ff1_interval(gold: Sequence[object], pred: Sequence[object], clusters: Sequence[Hashable], n_resamples: int, seed: int,
                 alpha: float = 0.05) -> dict[str, float | int]:
    """FF1 of one arm with its percentile interval over resampled clusters (answers): the paired bootstrap against
    an arm without units, whose FF1 is 0 on every resample (abstentions dropped)."""
    bs = clustered_paired_bootstrap(([], [], []), (gold, pred, clusters), n_resamples=n_resamples, seed=seed, alpha=alpha)
    return {"ff1": bs["diff"], "ci_low": bs["ci_low"], "ci_high": bs["ci_high"], "ci_level": bs["ci_level"],
            "n_clusters": bs["n_clusters"], "n_resamples": n_resamples, "seed": seed}


def per_pattern(rows: Sequence[PatternRow], n_resamples: int, seed: int, method: str = "bca",
                alpha: float = 0.05) -> dict[str, dict[str, float | int | str]]:
    """Per pattern (and ``all``): n, FF1 of the atoms (OR-FALSE inside the snippet) and of the snippets, and the
    paired bootstrap of snippets − atoms over snippets; also the percentile interval resampling whole answers
    (``cluster_*``, as the repository's clustered script)."""
    groups: dict[str, list[PatternRow]] = defaultdict(list)
    for r in rows:
        groups[str(r["pattern"])].append(r)
        groups["all"].append(r)
    out: dict[str, dict[str, float | int | str]] = {}
    for pattern in sorted(groups, key=lambda p: (p == "all", p)):
        g = groups[pattern]
        gold = [r["gold"] for r in g]
        atom_pred = [or_false(r["atoms"]) for r in g]
        snip_pred = [r["snippet"] for r in g]
        ff1_atoms, ff1_snippets = binary_scores(gold, atom_pred)["ff1"], binary_scores(gold, snip_pred)["ff1"]
        res: dict[str, float | int | str] = {"n": len(g), "n_gold_false": sum(x == FALSE for x in gold),
                                             "ff1_atoms": ff1_atoms, "ff1_snippets": ff1_snippets, "delta": ff1_snippets - ff1_atoms}
        bs = paired_bootstrap(gold, atom_pred, snip_pred, n_resamples=n_resamples, seed=seed, method=method, alpha=alpha)
        res.update(ci_low=bs["ci_low"], ci_high=bs["ci_high"], p_gt_0=bs["p_gt_0"], method=method)
        clusters = [r["cluster"] for r in g]
        cb = clustered_paired_bootstrap((gold, atom_pred, clusters), (gold, snip_pred, clusters),
                                        n_resamples=n_resamples, seed=seed, alpha=alpha, method="percentile")
        res.update(cluster_ci_low=cb["ci_low"], cluster_ci_high=cb["ci_high"], cluster_p_gt_0=cb["p_gt_0"],
                   n_clusters=cb["n_clusters"])
        out[pattern] = res
    return out


def best_human_pairs(auto: Sequence[Iterable[int]], human: Sequence[Iterable[int]]) -> list[tuple[int | None, float]]:
    """For each automatic snippet, the index of the human snippet of best set-F1 (the first on ties; None, and 0,
    when either has no sentence) and that set-F1."""
    h_sets = [(i, set(x)) for i, x in enumerate(human) if set(x)]
    out: list[tuple[int | None, float]] = []
    for a in map(set, auto):
        best: tuple[int | None, float] = (None, 0.0)
        if a:
            for i, h in h_sets:
                inter = len(a & h)
                p, r = inter / len(a), inter / len(h)
                f = 2 * p * r / (p + r) if inter else 0.0
                if best[0] is None or f > best[1]:
                    best = (i, f)
        out.append(best)
    return out


_ROUGE_TOKEN = re.compile(r"[a-z0-9]+")


@lru_cache(maxsize=1)
def _stemmer():
    import_nltk()  # without the scikit-learn and scipy.stats nltk's package would load
    from nltk.stem.porter import PorterStemmer  # rule-based: no data to download

    return PorterStemmer()


def rouge_tokens(text: str, stem: bool = True) -> list[str]:
    tokens = _ROUGE_TOKEN.findall(text.lower())
    if stem:
        st = _stemmer()
        tokens = [st.stem(t) if len(t) > 3 else t for t in tokens]
    return tokens


def lcs_length(a: Sequence[str], b: Sequence[str]) -> int:
    """Length of the longest common subsequence (dynamic programming over one row)."""
    if len(a) < len(b):
        a, b = b, a
    row = [0] * (len(b) + 1)
    for x in a:
        prev = 0
        for j, y in enumerate(b, 1):
            cur = row[j]
            row[j] = prev + 1 if x == y else max(row[j], row[j - 1])
            prev = cur
    return row[-1]


def rouge_l(candidate: str, reference: str, stem: bool = True) -> float:
    """ROUGE-L F1 of ``candidate`` against ``reference`` (0 when either has no token)."""
    c, r = rouge_tokens(candidate, stem), rouge_tokens(reference, stem)
    lcs = lcs_length(c, r) if c and r else 0
    if not lcs:
        return 0.0
    p, rec = lcs / len(c), lcs / len(r)
    return 2 * p * rec / (p + rec)


def adjusted_rand_index(labels_a: Sequence[Hashable], labels_b: Sequence[Hashable]) -> float:
    """ARI of two labelings of the same items (1.0 for identical partitions, also when trivial)."""
    n = len(labels_a)
    if n < 2:
        return 1.0
    table = Counter(zip(labels_a, labels_b))
    sum_ij = sum(comb(c, 2) for c in table.values())
    sum_a = sum(comb(c, 2) for c in Counter(labels_a).values())
    sum_b = sum(comb(c, 2) for c in Counter(labels_b).values())
    expected = sum_a * sum_b / comb(n, 2)
    max_index = (sum_a + sum_b) / 2
    if max_index == expected:
        return 1.0
    return (sum_ij - expected) / (max_index - expected)


def partition_labels(units: Sequence[Mapping[str, object]], key: str, items: Sequence[int]) -> list[int]:
    """Cluster id (the unit's position) of each item; an item in no unit is its own cluster, one in several goes
    to the first."""
    where: dict[int, int] = {}
    for pos, u in enumerate(units):
        for x in u.get(key) or []:
            where.setdefault(int(x), pos)
    return [where.get(x, len(units) + k) for k, x in enumerate(items)]


def partition_ari(human: Sequence[Unit], auto: Sequence[UnitFields], n_sentences: int,
                  atom_indices: Sequence[int] = ()) -> dict[str, object]:
    """ARI of the atom partitions when the automatic units group the bench's atoms, else of the sentence partitions."""
    if atom_indices and auto and all(u.get("atoms_from") == "given" for u in auto):
        return {"over": "atoms", "ari": adjusted_rand_index(partition_labels(human, "source_atoms", atom_indices),
                                                            partition_labels(auto, "source_atoms", atom_indices))}
    items = list(range(n_sentences))
    return {"over": "sentences", "ari": adjusted_rand_index(partition_labels(human, "source_sentences", items),
                                                            partition_labels(auto, "source_sentences", items))}


def cost_summary(decompose_usage: Mapping[str, int], verify_usage: Mapping[str, int], prices_decompose: Prices | None,
                 prices_verify: Prices | None) -> dict[str, dict[str, int | float | None]]:
    """Calls, tokens and dollars of decomposition, verification and both (``cost_usd`` None: calls without prices)."""
    def part(u: Mapping[str, int], prices: Prices | None) -> dict[str, int | float | None]:
        calls, prompt, completion = (int(u.get(k, 0)) for k in USAGE_KEYS)
        # no calls cost nothing (the bench's own units); calls without prices have no known cost
        cost = prices.cost(prompt, completion) if prices else (0.0 if not calls else None)
        return {"calls": calls, "prompt_tokens": prompt, "completion_tokens": completion, "cost_usd": cost}

    dec, ver = part(decompose_usage, prices_decompose), part(verify_usage, prices_verify)
    total = {k: dec[k] + ver[k] for k in USAGE_KEYS}
    costs = (dec["cost_usd"], ver["cost_usd"])
    total["cost_usd"] = None if None in costs else costs[0] + costs[1]
    return {"decompose": dec, "verify": ver, "total": total}


SNIPPET_MODES = ("group", "human_snippets")  # the modes whose units group atoms (``source_atoms``)


def _mean(values: Sequence[float]) -> float | None:
    return sum(values) / len(values) if values else None


def structure_stats(answers: Sequence[Answer], units_by_mode: Mapping[str, Sequence[UnitFields]]) -> dict[str, float | int | None]:
    """The structure of one dataset (MedSNIP Table 3; None: a mode not run)."""
    sentences = [len(answer_sentences(dict(a))) for a in answers]
    n = len(answers)
    out: dict[str, float | int | None] = {
        "answers": n, "words_per_answer": _mean([len(str(a["text"]).split()) for a in answers]),
        "sentences_per_answer": _mean(sentences), "single_sentence_share": (sum(s == 1 for s in sentences) / n) if n else None}
    for mode in MODES:  # Table 3's unit columns, in order
        units = units_by_mode.get(mode)
        out[f"units_{mode}"] = (len(units) / n if n else None) if units is not None else None
        if mode in SNIPPET_MODES:
            out[f"atoms_per_snippet_{mode}"] = _mean([len(u.get("source_atoms") or []) for u in units]) if units else None
    return out
