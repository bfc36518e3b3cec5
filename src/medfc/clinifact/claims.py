"""CliniFact claims from ClinicalTrials.gov study records (Zhang et al., Sci Data 2025), built by the construction
rules of docs/clinifact.md; whatever a study does not yield is recorded with a reason in a :class:`SkipReport`."""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from medfc.common.embeddings import Embedder
from medfc.common.jsontypes import JSONValue
from medfc.common.labels import CLINIFACT_RECORD_NAMES
from medfc.clinifact.ctgov import passes_clinifact_filter
from medfc.clinifact.options import Significance
from medfc.common.report import SkipReport

Study = Mapping[str, JSONValue]  # one ClinicalTrials.gov study record (API v2 JSON)
JSONRecord = Mapping[str, JSONValue]  # a part of one (an arm group, an outcome group, an intervention)


# one usable primary outcome of a study (the fields :func:`extract_claims` writes) with the study's ``references``
Claim = dict[str, Any]
# a claim × reference pair (:func:`label_claims`): the claim without its references, with PMID, reference_type, label
LabelledPair = dict[str, Any]
DiseaseClass = dict[str, str]  # abbrev, name

COMPARATOR_TYPES = frozenset({"ACTIVE_COMPARATOR", "PLACEBO_COMPARATOR", "SHAM_COMPARATOR", "NO_INTERVENTION", "OTHER"})

LEGACY_FOLD = {"NON_INFERIORITY_OR_EQUIVALENCE_LEGACY": "NON_INFERIORITY_OR_EQUIVALENCE", "SUPERIORITY_OR_OTHER_LEGACY": "SUPERIORITY_OR_OTHER"}
TEST_TYPE_NAMES = {"SUPERIORITY": "Superiority", "NON_INFERIORITY": "Non-Inferiority", "EQUIVALENCE": "Equivalence",
                   "NON_INFERIORITY_OR_EQUIVALENCE": "Non-Inferiority or Equivalence", "SUPERIORITY_OR_OTHER": "Superiority or Other"}
TEST_TYPE_PHRASES = {"SUPERIORITY": "superior", "NON_INFERIORITY": "non-inferior", "EQUIVALENCE": "equivalent",
                     "NON_INFERIORITY_OR_EQUIVALENCE": "non-inferior or equivalent", "SUPERIORITY_OR_OTHER": "superior or other"}

# the labelled pairs' words for the release codes (medfc.common.labels: kept as first written)
EVIDENCE, INCONCLUSIVE, NEI = (CLINIFACT_RECORD_NAMES[code] for code in (1, 0, 2))
LABEL_IDS = {CLINIFACT_RECORD_NAMES[code]: code for code in (0, 1, 2)}


_PVALUE = re.compile(r"^\s*(<=|>=|=<|=>|≤|≥|<|>|=)?\s*(\d*\.?\d+(?:[eE][-+]?\d+)?)\s*$")
_OP_NORMAL = {"=<": "<=", "≤": "<=", "=>": ">=", "≥": ">="}


@dataclass(frozen=True)
class PValue:
    raw: str
    op: str  # one of "<", "<=", "=", ">", ">="
    value: float

    def significant(self, alpha: float, significance: Significance) -> bool:
        """Significant at ``alpha``: ``"<="`` (the release's labels) or ``"<"`` (the paper's text); "<x" counts when
        x ≤ alpha under either rule, ">" forms never."""
        if self.op in (">", ">="):
            return False
        if self.op == "<" or significance == "<=":
            return self.value <= alpha
        return self.value < alpha


def parse_pvalue(raw: object) -> PValue | None:
    """Parse "<0.001", "=0.0002", ".08", "0.65", "> 0.05", "≤0.01"; None for "NA" and the like."""
    m = _PVALUE.match(str(raw)) if raw is not None else None
    if not m:
        return None
    op = _OP_NORMAL.get(m.group(1) or "=", m.group(1) or "=")
    value = float(m.group(2))
    if not 0.0 <= value <= 1.0:
        return None
    return PValue(str(raw), op, value)


def resolve_test_type(types: Iterable[str | None]) -> tuple[str | None, str | None]:
    """Combine the analyses' nonInferiorityType values into one test type: (type, None) or (None, reason)."""
    folded = {LEGACY_FOLD.get(t, t) for t in types if t}
    if not folded:
        return None, "outcome_no_test_type"
    if folded - set(TEST_TYPE_NAMES) - {"OTHER"}:
        return None, "outcome_unknown_test_type"
    if folded == {"OTHER"}:
        return None, "outcome_test_type_other_only"
    if len(folded) > 1 and folded <= {"SUPERIORITY", "SUPERIORITY_OR_OTHER", "OTHER"}:
        return "SUPERIORITY_OR_OTHER", None
    if len(folded) == 1:
        return next(iter(folded)), None
    if folded <= {"NON_INFERIORITY", "EQUIVALENCE", "NON_INFERIORITY_OR_EQUIVALENCE"}:
        return "NON_INFERIORITY_OR_EQUIVALENCE", None
    return None, "outcome_mixed_test_types"


def claim_text(intervention: str, test_type: str, comparator: str, outcome_title: str, time_frame: str | None) -> str:
    text = f"{intervention} is {TEST_TYPE_PHRASES[test_type]} to {comparator} in terms of {outcome_title} {time_frame or ''}"
    return " ".join(text.split())


def _text(title: str | None, description: str | None, use_description: bool) -> str:
    title = (title or "").strip()
    if use_description and description and description.strip():
        return f"{title}. {' '.join(description.split())}"
    return title


def map_groups_to_arms(groups: Sequence[JSONRecord], arms: Sequence[JSONRecord], embedder: Embedder,
                       use_description: bool) -> tuple[list[int], np.ndarray]:
    """The arm index of each of two outcome groups (best one-to-one match by cosine similarity) and the 2×2
    similarity matrix (groups × arms)."""
    g_text = [_text(g.get("title"), g.get("description"), use_description) for g in groups]
    a_text = [_text(a.get("label"), a.get("description"), use_description) for a in arms]
    vecs = embedder.encode(g_text + a_text)
    sim = vecs[: len(groups)] @ vecs[len(groups) :].T
    return ([1, 0] if sim[0, 1] + sim[1, 0] > sim[0, 0] + sim[1, 1] else [0, 1]), sim


def _intervention_type(arm: JSONRecord, interventions: Sequence[JSONRecord]) -> JSONValue:
    label = arm.get("label")
    for iv in interventions:
        if label and label in (iv.get("armGroupLabels") or []):
            return iv.get("type")
    names = arm.get("interventionNames") or []
    for name in names:
        plain = name.split(":", 1)[1].strip() if ":" in name else name
        for iv in interventions:
            if iv.get("name") == plain:
                return iv.get("type")
    for name in names:  # "Drug: Aspirin" without a matching intervention record
        if ":" in name:
            return name.split(":", 1)[0].strip().upper().replace(" ", "_")
    return None


def disease_classes(study: Study) -> list[DiseaseClass]:
    branches = ((study.get("derivedSection") or {}).get("conditionBrowseModule") or {}).get("browseBranches") or []
    return [{"abbrev": b.get("abbrev", ""), "name": b.get("name", "")} for b in branches]


def study_problem(study: Study) -> str | None:
    """Study-level reason it cannot give claims, or None."""
    ps = study.get("protocolSection") or {}
    if problem := passes_clinifact_filter(study):
        return problem
    if not (study.get("resultsSection") or {}).get("outcomeMeasuresModule"):
        return "no_results"
    arms = (ps.get("armsInterventionsModule") or {}).get("armGroups") or []
    if len(arms) != 2:
        return "not_two_arm_groups"
    types = sorted(str(a.get("type")) for a in arms)
    if types.count("EXPERIMENTAL") != 1 or not all(t == "EXPERIMENTAL" or t in COMPARATOR_TYPES for t in types):
        return "arms_not_experimental_vs_comparator"
    return None


def extract_claims(study: Study, embedder: Embedder, report: SkipReport, *, alpha: float, significance: Significance,
                   use_description: bool) -> list[Claim]:
    """All claims of one study (one per usable primary outcome), each with its references."""
    ps = study.get("protocolSection") or {}
    nct = (ps.get("identificationModule") or {}).get("nctId") or "?"
    problem = study_problem(study)
    if problem:
        report.skip(nct, problem)
        return []
    aim = ps.get("armsInterventionsModule") or {}
    arms = aim["armGroups"]
    interventions = aim.get("interventions") or []
    exp_idx = 0 if arms[0].get("type") == "EXPERIMENTAL" else 1
    outcomes = (study["resultsSection"]["outcomeMeasuresModule"].get("outcomeMeasures")) or []
    primaries = [(i, om) for i, om in enumerate(outcomes) if om.get("type") == "PRIMARY"]
    if not primaries:
        report.skip(nct, "no_primary_outcome")
        return []
    references = [{"pmid": str(r.get("pmid")), "type": r.get("type")}
                  for r in ((ps.get("referencesModule") or {}).get("references") or []) if r.get("pmid")]
    classes = disease_classes(study)
    claims: list[Claim] = []
    for idx, om in primaries:
        oid = f"{nct}#{idx}"
        groups = om.get("groups") or []
        if len(groups) != 2:
            report.skip(oid, "outcome_not_two_groups", f"{len(groups)} groups")
            continue
        analyses = [a for a in (om.get("analyses") or []) if str(a.get("pValue") or "").strip()]
        if not analyses:
            report.skip(oid, "outcome_no_pvalue")
            continue
        kept = [(a, pv) for a in analyses if (pv := parse_pvalue(a.get("pValue"))) is not None]
        if len(kept) < len(analyses):
            report.count("analyses_pvalue_unparseable", len(analyses) - len(kept))
        # CliniFact's rule reads every analysis of the outcome, also one whose groupIds name a single group
        # (a within-arm test); they count, and are counted so that a rebuild can tell how many there are
        report.count("analyses_single_group", sum(len(a.get("groupIds") or []) == 1 for a, _ in kept))
        if not kept:
            report.skip(oid, "outcome_pvalue_unparseable", ", ".join(str(a.get("pValue")) for a in analyses))
            continue
        test_type, reason = resolve_test_type(a.get("nonInferiorityType") for a, _ in kept)
        if test_type is None:
            report.skip(oid, str(reason), ", ".join(sorted({str(a.get("nonInferiorityType")) for a, _ in kept})))
            continue
        assignment, sim = map_groups_to_arms(groups, arms, embedder, use_description=use_description)
        g_int = groups[assignment.index(exp_idx)]
        g_cmp = groups[assignment.index(1 - exp_idx)]
        arm_int, arm_cmp = arms[exp_idx], arms[1 - exp_idx]
        positive = any(pv.significant(alpha, significance) for _, pv in kept)
        intervention = " ".join(str(g_int.get("title") or "").split())
        comparator = " ".join(str(g_cmp.get("title") or "").split())
        claims.append({"nctId": nct, "outcome_index": idx,
                       "claim": claim_text(intervention, test_type, comparator, str(om.get("title") or ""), om.get("timeFrame")),
                       "positive": positive, "test_type": test_type, "outcome_type": om.get("type"), "outcome_title": om.get("title"),
                       "outcome_description": om.get("description"), "time_frame": om.get("timeFrame"), "intervention_group_id": g_int.get("id"),
                       "comparator_group_id": g_cmp.get("id"), "intervention_group_title": intervention, "comparator_group_title": comparator,
                       "intervention_group_description": g_int.get("description"), "comparator_group_description": g_cmp.get("description"),
                       "intervention_arm_label": arm_int.get("label"), "comparator_arm_label": arm_cmp.get("label"),
                       "intervention_group_intervention_label": _intervention_type(arm_int, interventions),
                       "comparator_group_intervention_label": _intervention_type(arm_cmp, interventions),
                       "intervention_group_arm_group_type": arm_int.get("type"), "comparator_group_arm_group_type": arm_cmp.get("type"),
                       "arm_similarity": [[round(float(x), 6) for x in row] for row in sim], "pValues": [pv.raw for _, pv in kept],
                       "statisticalMethods": [a.get("statisticalMethod") or "" for a, _ in kept], "nonInferiorityTypes": [TEST_TYPE_NAMES[test_type]],
                       "references": references, "disease_classes": classes})
    if not claims:
        report.skip(nct, "no_claimable_primary_outcome")
    return claims


def label_claims(claims: Sequence[Claim], report: SkipReport) -> list[LabelledPair]:
    """Claim × reference pairs with their label, for the claims of ONE study."""
    if not claims:
        return []
    nct = claims[0]["nctId"]
    # a PMID listed twice with one type is one reference
    refs = list({(r["type"], str(r["pmid"])): r for r in claims[0]["references"]}.values())
    report.count("repeated_references_ignored", len(claims[0]["references"]) - len(refs))
    results = [r for r in refs if r["type"] == "RESULT"]
    result_pmids = {str(r["pmid"]) for r in results}
    background = [r for r in refs if r["type"] == "BACKGROUND" and str(r["pmid"]) not in result_pmids]
    report.count("background_also_result_ignored", sum(r["type"] == "BACKGROUND" for r in refs) - len(background))
    report.count("derived_references_ignored", sum(r["type"] == "DERIVED" for r in refs))
    pairs: list[LabelledPair] = []
    if len(results) > 1:
        report.skip(nct, "multiple_result_references", f"{len(results)} RESULT references")
    for claim in claims:
        base = {k: v for k, v in claim.items() if k != "references"}
        if len(results) == 1:
            label = EVIDENCE if claim["positive"] else INCONCLUSIVE
            pairs.append({**base, "PMID": results[0]["pmid"], "reference_type": "RESULT", "label": label, "label_id": LABEL_IDS[label]})
        for ref in background:
            pairs.append({**base, "PMID": ref["pmid"], "reference_type": "BACKGROUND", "label": NEI, "label_id": LABEL_IDS[NEI]})
    if not pairs and len(results) <= 1:
        report.skip(nct, "no_result_or_background_reference")
    return pairs


def build_claims(studies: Iterable[Study], embedder: Embedder, report: SkipReport, *, alpha: float, significance: Significance,
                 use_description: bool) -> Iterator[tuple[list[Claim], list[LabelledPair]]]:
    """For each study: (its claims, its labelled claim × reference pairs)."""
    for study in studies:
        report.count("studies")
        claims = extract_claims(study, embedder, report, alpha=alpha, significance=significance, use_description=use_description)
        pairs = label_claims(claims, report)
        report.count("claims", len(claims))
        report.count("claims_positive", sum(c["positive"] for c in claims))
        for p in pairs:
            report.count(f"pairs_{p['label']}")
        yield claims, pairs
