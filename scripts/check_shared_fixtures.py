#!/usr/bin/env python
"""Opt-in check (not in CI): run the CliniFact parsers over the real-record fixtures in ../shared/fixtures.

Reads (never copies) ctgov_v2/studies/*.json, ctgov_v2/search_pages/*.json and pubmed_efetch/*.xml and
prints what the claim rules and the PubMed parser make of each file. Usage:
    python scripts/check_shared_fixtures.py [--fixtures ../shared/fixtures] [--model PATH]
"""

from __future__ import annotations

import argparse
import json
import logging
from pathlib import Path

from medfc.clinifact import claims as C
from medfc.clinifact.ctgov import nct_id, passes_clinifact_filter
from medfc.common.report import SkipReport
from medfc.retrieval.pubmed import parse_pubmed_xml

SCHEMA = Path(__file__).resolve().parents[1] / "workflow" / "schemas" / "config.schema.yaml"


def label_rule() -> dict:
    """alpha, significance and use_description of clinifact.claims, from the schema's defaults."""
    from snakemake.utils import validate

    cfg: dict = {}
    validate(cfg, str(SCHEMA), set_default=True)
    return {k: cfg["clinifact"]["claims"][k] for k in ("alpha", "significance", "use_description")}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--fixtures", default=str(Path(__file__).resolve().parents[1].parent / "shared" / "fixtures"))
    ap.add_argument("--model", default=None, help="embedding model (default: offline MiniLM)")
    args = ap.parse_args()
    logging.basicConfig(level=logging.ERROR)
    root = Path(args.fixtures)
    if not root.is_dir():
        print(f"no fixtures at {root}; nothing to check")
        return 0
    embedder = C.TransformersEmbedder(args.model)
    rule = label_rule()
    problems = 0
    print("== ClinicalTrials.gov v2 studies")
    for path in sorted((root / "ctgov_v2" / "studies").glob("*.json")):
        study = json.loads(path.read_text(encoding="utf-8"))
        report = SkipReport(path.name)
        claims = C.extract_claims(study, embedder, report, **rule)
        pairs = C.label_claims(claims, report)
        ok = nct_id(study) == path.stem
        problems += not ok
        labels = sorted({p["label"] for p in pairs})
        print(f"{path.name}: filter={passes_clinifact_filter(study) or 'pass'} claims={len(claims)} pairs={len(pairs)} {labels} skips={report.reasons()}")
        for c in claims[:2]:
            print(f"    {c['claim'][:150]} | p={c['pValues']} | positive={c['positive']}")
    print("== search pages")
    for path in sorted((root / "ctgov_v2" / "search_pages").glob("*.json")):
        page = json.loads(path.read_text(encoding="utf-8"))
        studies = page.get("studies", [])
        reasons: dict[str, int] = {}
        for s in studies:
            r = passes_clinifact_filter(s) or "pass"
            reasons[r] = reasons.get(r, 0) + 1
        ids_ok = all(nct_id(s) for s in studies)
        problems += not ids_ok
        print(f"{path.name}: studies={len(studies)} nextPageToken={'yes' if page.get('nextPageToken') else 'no'} filter={reasons} ids_ok={ids_ok}")
    print("== PubMed efetch")
    for path in sorted((root / "pubmed_efetch").glob("*.xml")):
        try:
            recs = parse_pubmed_xml(path.read_bytes())
        except Exception as exc:  # report and carry on: this is a survey
            problems += 1
            print(f"{path.name}: PARSE ERROR {exc}")
            continue
        for r in recs:
            problems += not (r["pmid"] and r["title"])
            abstract = (r["abstract"] or "").split("\n")
            print(f"{path.name}: pmid={r['pmid']} date={r['publication_date']} words={r['abstract_words']} sections={len(abstract) if r['abstract'] else 0} "
                  f"mesh={len(r['mesh_headings'])} types={r['publication_types'][:2]} first={abstract[0][:70]!r}")
    print(f"problems: {problems}")
    return 1 if problems else 0


if __name__ == "__main__":
    raise SystemExit(main())
