from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from medfc.clinifact import claims as C
from medfc.clinifact.ctgov import iter_bulk_zip
from medfc.common.embeddings import CachedEmbedder
from medfc.common.report import SkipReport
from tests.helpers.config import section

DEMO_ZIP = Path(__file__).resolve().parents[3] / "resources" / "demo" / "ctgov" / "studies.zip"

# (NCT9900xx, outcome index, PMID 990000xx, E/I/N, claim) — every labelled pair of the demo snapshot.
EXPECTED = [
    ('01', 0, '01', 'E',
     'Lisinopril is superior to Placebo in terms of Change From Baseline in Seated Systolic Blood Pressure Baseline and Week 12'),
    ('02', 0, '02', 'E',
     'Empagliflozin 25 mg + Metformin is superior to Placebo + Metformin in terms of Change From Baseline in HbA1c Baseline to Week 24'),
    ('03', 0, '03', 'I',
     'MBSR Group is superior to Education Group in terms of Roland-Morris Disability Questionnaire Score 26 weeks'),
    ('04', 0, '04', 'I',
     'Cholecalciferol is superior to Placebo Capsule in terms of Percent Change in Lumbar Spine Bone Mineral Density Baseline and 12 months'),
    ('04', 0, '05', 'N',
     'Cholecalciferol is superior to Placebo Capsule in terms of Percent Change in Lumbar Spine Bone Mineral Density Baseline and 12 months'),
    ('05', 0, '06', 'E',
     'Dabigatran Etexilate is non-inferior to Warfarin (INR 2-3) in terms of Number of Participants With Stroke or Systemic Embolism Up to 24 months'),
    ('06', 0, '07', 'E',
     'Biosimilar Adalimumab 40 mg is equivalent to Humira 40 mg in terms of Percent Improvement in PASI Score Week 16'),
    ('07', 0, '08', 'I',
     '5-Day Course is non-inferior or equivalent to 10-Day Course in terms of Proportion of Children With Clinical Cure Day 14 to Day 21'),
    ('08', 0, '09', 'E',
     'Aerobic Training is superior or other to Stretching and Toning in terms of Change in Delayed Recall Score Baseline and 6 months'),
    ('09', 0, '10', 'E',
     'Generic Tacrolimus is non-inferior or equivalent to Prograf in terms of Tacrolimus Trough Concentration Day 30'),
    ('10', 0, '11', 'I',
     'Acupuncture Group is superior or other to Usual Care Group in terms of Number of Headache Days per Month Months 2 to 3'),
    ('12', 0, '13', 'E',
     'CBT-I is superior or other to Sleep Hygiene in terms of Insomnia Severity Index Post-treatment (week 8)'),
    ('13', 0, '14', 'I',
     'Omega-3 is superior to Placebo (Corn Oil) in terms of Change in HAM-D17 Total Score Baseline to Week 8'),
    ('15', 0, '16', 'E',
     'Lactobacillus GG is superior to Placebo in terms of Incidence of Antibiotic-Associated Diarrhea During antibiotic treatment and 7 days after'),
    ('21', 0, '25', 'N',
     'Dexamethasone 8 mg IV is superior to Placebo IV in terms of Incidence of Postoperative Nausea and Vomiting 0 to 24 hours after surgery'),
    ('22', 0, '26', 'N',
     'SMS Reminders is superior to Standard Care in terms of Proportion With Undetectable Viral Load Month 6'),
    ('22', 0, '27', 'N',
     'SMS Reminders is superior to Standard Care in terms of Proportion With Undetectable Viral Load Month 6'),
    ('22', 0, '28', 'N',
     'SMS Reminders is superior to Standard Care in terms of Proportion With Undetectable Viral Load Month 6'),
    ('28', 0, '33', 'E',
     'Intensive Control (80-110 mg/dL) is superior to Conventional Control (140-180 mg/dL) in terms of Number of Episodes of Severe Hypoglycemia Intensive care unit stay (up to 28 days)'),
    ('28', 1, '33', 'I',
     'Intensive Control (80-110 mg/dL) is superior to Conventional Control (140-180 mg/dL) in terms of 90-Day All-Cause Mortality 90 days'),
    ('29', 1, '34', 'E',
     'Duloxetine 60 mg is superior to Placebo in terms of Change in Weekly Mean 24-Hour Average Pain Score Baseline to Week 12'),
    ('30', 1, '35', 'E',
     'Budesonide/Formoterol is superior to Placebo Inhaler in terms of Rate of Moderate or Severe Exacerbations 52 weeks'),
    ('31', 0, '36', 'E',
     'Motivational Interviewing is superior to Assessment Only in terms of Drinks per Week 3 months'),
    ('32', 0, '37', 'I',
     'Active rTMS is superior to Sham rTMS in terms of Tinnitus Handicap Inventory Score Week 6'),
    ('33', 0, '38', 'E',
     'Nerve Block is superior to IV Morphine in terms of Pain Score at Rest 2 hours after analgesia'),
    ('33', 0, '39', 'N',
     'Nerve Block is superior to IV Morphine in terms of Pain Score at Rest 2 hours after analgesia'),
    ('35', 0, '41', 'E',
     'Single-Tablet Regimen is non-inferior or equivalent to Twice-Daily Regimen in terms of Proportion With HIV-1 RNA Below 50 Copies/mL Week 48'),
    ('37', 0, '43', 'E',
     'Magnesium Sulfate IV is superior to Saline IV in terms of Pain Relief at 2 Hours 2 hours'),
    ('38', 0, '44', 'E',
     'Telemonitoring Group is superior to Usual Care Group in terms of 30-Day Readmission Rate 30 days after discharge'),
    ('39', 0, '45', 'E',  # the single p-value "0.05": significant under the release's "<=" (the default)
     'Metformin 850 mg Twice Daily is superior to Placebo Twice Daily in terms of Ovulation Rate 6 months'),
    ('39', 0, '46', 'N',
     'Metformin 850 mg Twice Daily is superior to Placebo Twice Daily in terms of Ovulation Rate 6 months'),
    ('39', 0, '47', 'N',
     'Metformin 850 mg Twice Daily is superior to Placebo Twice Daily in terms of Ovulation Rate 6 months'),
    ('40', 0, '26', 'N',
     'Yoga Classes is superior to Self-Care Book in terms of Back Pain Bothersomeness 12 weeks'),
    ('40', 0, '48', 'N',
     'Yoga Classes is superior to Self-Care Book in terms of Back Pain Bothersomeness 12 weeks'),
    ('41', 0, '49', 'E',
     'Iloprost is superior to Placebo in terms of Six-Minute Walk Distance Week 12'),
    ('41', 1, '49', 'E',
     'Iloprost is superior to Placebo in terms of Six-Minute Walk Distance Week 12'),
    ('42', 0, '50', 'I',
     'Buprenorphine Implants is non-inferior to Sublingual Buprenorphine in terms of Proportion of Responders (Urine Negative for Illicit Opioids) Weeks 1 to 24'),
    ('43', 0, '51', 'N',
     'Generic Levothyroxine is equivalent to Brand Levothyroxine in terms of Serum TSH Concentration Week 6'),
    ('44', 0, '52', 'E',
     'Early Rhythm Control is superior to Usual Care in terms of Composite of Cardiovascular Death, Stroke or Hospitalisation Median 5.1 years'),
]

EXPECTED_SKIPS = {
    "arms_not_experimental_vs_comparator": 2,  # 18 both EXPERIMENTAL, 19 an arm without type
    "multiple_result_references": 2,  # 20, 21 (21 still gives its BACKGROUND pair)
    "no_claimable_primary_outcome": 4,  # 11, 14, 16, 34
    "no_primary_outcome": 1,  # 36 (only a SECONDARY outcome)
    "no_result_or_background_reference": 2,  # 23 DERIVED only, 24 no references
    "no_results": 1,  # 25
    "not_interventional": 1,  # 27
    "not_two_arm_groups": 1,  # 17
    "outcome_mixed_test_types": 1,  # 34 {NON_INFERIORITY, SUPERIORITY}
    "outcome_no_pvalue": 2,  # 16, 29#0
    "outcome_not_two_groups": 1,  # 30#0
    "outcome_pvalue_unparseable": 1,  # 14 "NA"
    "outcome_test_type_other_only": 1,  # 11
    "status_not_completed_or_terminated": 1,  # 26 WITHDRAWN
}


def label_rule(**overrides):
    """alpha, significance and use_description as the rule passes them (the schema's defaults)."""
    cfg = section("clinifact.claims", **overrides)
    return {k: cfg[k] for k in ("alpha", "significance", "use_description")}


@pytest.fixture(scope="module")
def demo_build(minilm):
    report = SkipReport("claims")
    claims, pairs = [], []
    for c, p in C.build_claims(iter_bulk_zip(DEMO_ZIP), minilm, report, **label_rule()):
        claims.extend(c)
        pairs.extend(p)
    return claims, pairs, report


def test_demo_pairs_exact(demo_build):
    _, pairs, _ = demo_build
    short = {C.EVIDENCE: "E", C.INCONCLUSIVE: "I", C.NEI: "N"}
    got = [(p["nctId"][-2:], p["outcome_index"], p["PMID"][-2:], short[p["label"]], p["claim"]) for p in pairs]
    assert [g[:4] for g in got] == [e[:4] for e in EXPECTED]
    assert got == EXPECTED
    assert all(p["nctId"] == "NCT990000" + e[0] and p["PMID"] == "990000" + e[2] for p, e in zip(pairs, EXPECTED))
    assert {p["label_id"] for p in pairs if p["label"] == C.EVIDENCE} == {1}
    assert {p["label_id"] for p in pairs if p["label"] == C.NEI} == {2}


def test_demo_skip_reasons_and_counts_exact(demo_build):
    claims, pairs, report = demo_build
    assert report.reasons() == EXPECTED_SKIPS
    assert report.counts["studies"] == 44
    assert len(claims) == 35 and sum(c["positive"] for c in claims) == 25
    assert report.counts["analyses_pvalue_unparseable"] == 2  # "NA" in 14 and 15
    assert report.counts["derived_references_ignored"] == 1
    labels = [p["label"] for p in pairs]
    assert (labels.count(C.EVIDENCE), labels.count(C.INCONCLUSIVE), labels.count(C.NEI)) == (20, 8, 11)
    # every study is either in a pair or has a counted study-level reason
    study_ids = {f"NCT990000{n:02d}" for n in range(1, 45)}
    explained = {s["id"] for s in report.skipped if "#" not in s["id"]} | {p["nctId"] for p in pairs}
    assert study_ids == explained


def test_demo_claim_fields(demo_build):
    claims, _, _ = demo_build
    by = {(c["nctId"], c["outcome_index"]): c for c in claims}
    c02 = by[("NCT99000002", 0)]  # comparator is OG000
    assert (c02["intervention_group_id"], c02["comparator_group_id"]) == ("OG001", "OG000")
    assert c02["intervention_arm_label"] == "Empagliflozin 25 mg" and c02["comparator_arm_label"] == "Placebo"
    assert c02["pValues"] == ["=0.03"] and c02["nonInferiorityTypes"] == ["Superiority"]
    assert c02["intervention_group_intervention_label"] == "DRUG"
    c15 = by[("NCT99000015", 0)]  # "NA" dropped, "0.01" kept
    assert c15["pValues"] == ["0.01"] and c15["statisticalMethods"] == ["Chi-squared"] and c15["positive"]
    c12 = by[("NCT99000012", 0)]  # {OTHER, SUPERIORITY}
    assert c12["test_type"] == "SUPERIORITY_OR_OTHER" and c12["pValues"] == ["0.12", "0.04"]
    assert by[("NCT99000009", 0)]["nonInferiorityTypes"] == ["Non-Inferiority or Equivalence"]  # legacy folded
    assert by[("NCT99000010", 0)]["nonInferiorityTypes"] == ["Superiority or Other"]
    c31 = by[("NCT99000031", 0)]  # NO_INTERVENTION comparator has no intervention type
    assert c31["comparator_group_arm_group_type"] == "NO_INTERVENTION" and c31["comparator_group_intervention_label"] is None
    assert by[("NCT99000033", 0)]["comparator_group_arm_group_type"] == "OTHER"
    assert by[("NCT99000039", 0)]["positive"] is True  # p = 0.05 is significant under "<=" (the release's labels)
    assert by[("NCT99000038", 0)]["positive"] is True  # "< 0.05"
    assert [b["abbrev"] for b in by[("NCT99000041", 0)]["disease_classes"]] == ["BC08", "BC14", "Rare", "All"]


@pytest.mark.parametrize(
    "raw,op,value,sig",
    [
        ("<0.001", "<", 0.001, True),
        ("=0.0002", "=", 0.0002, True),
        (".08", "=", 0.08, False),
        ("0.65", "=", 0.65, False),
        (">0.05", ">", 0.05, False),
        (">0.001", ">", 0.001, False),
        ("< 0.05", "<", 0.05, True),
        ("<.0001", "<", 0.0001, True),
        ("0.05", "=", 0.05, False),
        ("≤0.01", "<=", 0.01, True),
        ("1.0", "=", 1.0, False),
    ],
)
def test_parse_pvalue(raw, op, value, sig):
    pv = C.parse_pvalue(raw)
    assert pv is not None and (pv.op, pv.value, pv.significant(0.05, "<")) == (op, value, sig)


# (raw p-value, significant under "<=" (the release's labels), under "<" (the paper's text)) at alpha 0.05
@pytest.mark.parametrize(
    "raw,release_rule,paper_rule",
    [
        ("0.05", True, False),  # exactly 0.05: the 7 released EVIDENCE pairs with the single p-value "0.05"
        ("=0.05", True, False),
        ("0.050", True, False),
        ("≤0.05", True, False),  # p ≤ 0.05
        ("<=0.05", True, False),
        ("<0.05", True, True),  # p < 0.05 under either rule
        ("< 0.05", True, True),
        ("<0.051", False, False),  # p < 0.051 does not show p ≤ 0.05
        ("0.0501", False, False),
        ("0.049", True, True),
        (">0.05", False, False),  # ">" forms are never significant
        (">=0.05", False, False),
        (">0.001", False, False),
    ],
)
def test_significance_rules_on_constructed_pvalues(raw, release_rule, paper_rule):
    pv = C.parse_pvalue(raw)
    assert pv is not None
    assert pv.significant(0.05, "<=") is release_rule
    assert pv.significant(0.05, "<") is paper_rule


def _one_outcome_study(pvalues):
    arms = [{"label": "Drug", "type": "EXPERIMENTAL"}, {"label": "Placebo", "type": "PLACEBO_COMPARATOR"}]
    outcome = {"type": "PRIMARY", "title": "Pain", "timeFrame": "Week 4",
               "groups": [{"id": "OG000", "title": "Drug"}, {"id": "OG001", "title": "Placebo"}],
               "analyses": [{"pValue": p, "nonInferiorityType": "SUPERIORITY"} for p in pvalues]}
    return {"protocolSection": {"identificationModule": {"nctId": "NCT00000001"},
                                "statusModule": {"overallStatus": "COMPLETED"},
                                "designModule": {"studyType": "INTERVENTIONAL"},
                                "armsInterventionsModule": {"armGroups": arms},
                                "referencesModule": {"references": [{"pmid": "1", "type": "RESULT"}]}},
            "resultsSection": {"outcomeMeasuresModule": {"outcomeMeasures": [outcome]}}}


@pytest.mark.parametrize(
    "pvalues,release_label,paper_label",
    [
        (["0.05"], C.EVIDENCE, C.INCONCLUSIVE),
        (["=0.05", "0.3"], C.EVIDENCE, C.INCONCLUSIVE),
        (["<0.05"], C.EVIDENCE, C.EVIDENCE),
        ([">0.05"], C.INCONCLUSIVE, C.INCONCLUSIVE),
        ([">0.05", "0.05"], C.EVIDENCE, C.INCONCLUSIVE),
        (["0.06", "NA"], C.INCONCLUSIVE, C.INCONCLUSIVE),
    ],
)
def test_labels_follow_the_configured_significance_rule(pvalues, release_label, paper_label):
    study = _one_outcome_study(pvalues)
    emb = BagOfWords()
    labels = {}
    for rule in ("<=", "<"):
        (_, pairs), = C.build_claims([study], emb, SkipReport("t"), **label_rule(significance=rule))
        labels[rule] = [p["label"] for p in pairs]
    assert labels == {"<=": [release_label], "<": [paper_label]}


def test_schema_default_is_the_release_rule():
    assert section("clinifact.claims")["significance"] == "<="


@pytest.mark.parametrize("raw", ["NA", "", None, "n/a", "<", "1.5", "p<0.05", "0.03*"])
def test_unparseable_pvalues(raw):
    assert C.parse_pvalue(raw) is None


@pytest.mark.parametrize(
    "types,expected",
    [
        (["SUPERIORITY"], ("SUPERIORITY", None)),
        (["NON_INFERIORITY_OR_EQUIVALENCE_LEGACY"], ("NON_INFERIORITY_OR_EQUIVALENCE", None)),
        (["SUPERIORITY_OR_OTHER_LEGACY", "SUPERIORITY_OR_OTHER"], ("SUPERIORITY_OR_OTHER", None)),
        (["OTHER"], (None, "outcome_test_type_other_only")),
        (["OTHER", "OTHER"], (None, "outcome_test_type_other_only")),
        (["OTHER", "SUPERIORITY"], ("SUPERIORITY_OR_OTHER", None)),
        (["SUPERIORITY", "SUPERIORITY_OR_OTHER"], ("SUPERIORITY_OR_OTHER", None)),
        (["NON_INFERIORITY", "EQUIVALENCE"], ("NON_INFERIORITY_OR_EQUIVALENCE", None)),
        (["NON_INFERIORITY", "SUPERIORITY"], (None, "outcome_mixed_test_types")),
        (["OTHER", "EQUIVALENCE"], (None, "outcome_mixed_test_types")),
        ([None, ""], (None, "outcome_no_test_type")),
        (["BAYESIAN"], (None, "outcome_unknown_test_type")),
    ],
)
def test_resolve_test_type(types, expected):
    assert C.resolve_test_type(types) == expected


def test_claim_template_collapses_whitespace():
    assert C.claim_text("Drug  A", "NON_INFERIORITY_OR_EQUIVALENCE", "Drug B", "Pain\nScore", " Week 4 ") == (
        "Drug A is non-inferior or equivalent to Drug B in terms of Pain Score Week 4"
    )
    assert C.claim_text("A", "EQUIVALENCE", "B", "Pain", None) == "A is equivalent to B in terms of Pain"


class BagOfWords(CachedEmbedder):
    VOCAB = ["aspirin", "placebo", "sugar", "pill", "drug", "low", "dose"]

    def _encode_batch(self, texts):
        return np.array([[t.lower().count(w) for w in self.VOCAB] for t in texts], dtype=float)


def test_group_to_arm_mapping_and_embedding_cache():
    emb = BagOfWords(batch_size=2)
    arms = [{"label": "Low-dose aspirin", "type": "EXPERIMENTAL"}, {"label": "Sugar pill", "type": "PLACEBO_COMPARATOR"}]
    groups = [{"id": "OG000", "title": "Placebo (sugar pill)"}, {"id": "OG001", "title": "Aspirin 81 mg"}]
    assignment, sim = C.map_groups_to_arms(groups, arms, emb, use_description=False)
    assert assignment == [1, 0] and sim.shape == (2, 2)
    assert emb.encoded == 4
    C.map_groups_to_arms(groups, arms, emb, use_description=False)
    assert emb.encoded == 4  # all four texts came from the cache


def test_minilm_maps_reordered_groups(minilm):
    arms = [{"label": "Dabigatran 150 mg", "description": "Dabigatran etexilate twice daily."}, {"label": "Warfarin", "description": "Dose-adjusted warfarin."}]
    groups = [{"title": "Warfarin (INR 2-3)", "description": "Warfarin adjusted to INR 2 to 3."}, {"title": "Dabigatran Etexilate", "description": "150 mg twice daily."}]
    assignment, sim = C.map_groups_to_arms(groups, arms, minilm, use_description=True)
    assert assignment == [1, 0]
    assert np.allclose(np.diag(minilm.encode(["x", "y"]) @ minilm.encode(["x", "y"]).T), 1.0, atol=1e-5)


def test_a_pmid_listed_twice_as_result_is_one_result_reference():
    study = _one_outcome_study(["0.01"])
    study["protocolSection"]["referencesModule"]["references"] = [
        {"pmid": "1", "type": "RESULT"}, {"pmid": "1", "type": "RESULT"}, {"pmid": "2", "type": "BACKGROUND"}, {"pmid": "2", "type": "BACKGROUND"},
        {"pmid": "1", "type": "BACKGROUND"}]
    report = SkipReport("t")
    (_, pairs), = C.build_claims([study], BagOfWords(), report, **label_rule())
    # the RESULT publication is not also a background one (no NEI pair beside its EVIDENCE pair)
    assert [(p["PMID"], p["label"]) for p in pairs] == [("1", C.EVIDENCE), ("2", C.NEI)]
    assert report.counts["repeated_references_ignored"] == 2 and report.counts["background_also_result_ignored"] == 1
    assert "multiple_result_references" not in report.reasons()


def test_single_group_analyses_count_towards_the_label_and_are_counted():
    study = _one_outcome_study(["<0.001", "0.4"])
    outcome = study["resultsSection"]["outcomeMeasuresModule"]["outcomeMeasures"][0]
    outcome["analyses"][0]["groupIds"] = ["OG001"]  # a within-arm change from baseline
    outcome["analyses"][1]["groupIds"] = ["OG000", "OG001"]
    report = SkipReport("t")
    (_, pairs), = C.build_claims([study], BagOfWords(), report, **label_rule())
    assert [p["label"] for p in pairs] == [C.EVIDENCE] and report.counts["analyses_single_group"] == 1
