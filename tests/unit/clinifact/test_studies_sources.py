"""The sources of CliniFact's studies, one registry (medfc.clinifact.studies_sources): each source declared once
and looked up — how the step reads or fetches the studies, and whether it reads the bulk zip (the rule's input,
the prerequisite check); a source registered in a test alone runs through ``fetch_studies``, and no choice in
the step or the plan compares a source's name."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from medfc.clinifact import steps
from medfc.clinifact.options import StudiesOptions
from medfc.clinifact.studies_sources import STUDIES_SOURCES, StudiesSource, studies_source
from medfc.common.io import read_jsonl, write_jsonl
from medfc.common.options import OptionsError
from medfc.common.report import SkipReport
from medfc.common.stepfiles import StepFiles
from medfc.plan import Plan
from medfc.config.prerequisites import missing_prerequisites
from tests.helpers.config import SCHEMA, call_step, defaults, section
from tests.helpers.name_comparisons import comparisons_in, name_comparisons

SRC = Path(__file__).resolve().parents[3] / "src" / "medfc"


def _options(tmp_path: Path, **extra: object) -> dict:
    """``clinifact.studies`` as the rule passes it (less ``bulk_zip``, + the cache and the user agent)."""
    opts = {k: v for k, v in section("clinifact.studies", progress=False, **extra).items() if k != "bulk_zip"}
    return opts | {"cache_dir": str(tmp_path / "cache"), "user_agent": "medfc-test"}


def _outputs(tmp_path: Path) -> dict[str, str]:
    return {k: str(tmp_path / f"out/{k}") for k in ("studies", "excluded", "report")}


def _study(n: int) -> dict:
    return {"protocolSection": {"identificationModule": {"nctId": f"NCT9922{n:04d}"}}, "hasResults": True}


def test_the_sources_are_looked_up():
    assert [(s.name, s.reads_zip) for s in STUDIES_SOURCES.values()] == [("bulk_zip", True), ("api", False)]
    schema = yaml.safe_load(SCHEMA.read_text(encoding="utf-8"))["properties"]["clinifact"]["properties"]["studies"]
    assert schema["properties"]["source"]["enum"] == list(STUDIES_SOURCES)  # the config takes the registry's names
    with pytest.raises(ValueError, match=r"unknown studies source 'aact' \(bulk_zip \| api\)"):
        studies_source("aact")


def test_the_api_source_pages_through_the_search_and_excludes_none(server, tmp_path):
    """``api`` through the step: the search's pages (its filter runs on the server), an empty ``excluded``."""
    pages = {None: ([1, 2], "tok"), "tok": ([3], None)}

    def handler(method, path, query, body):
        ids, nxt = pages[query.get("pageToken", [None])[0]]
        return 200, {"Content-Type": "application/json"}, json.dumps({"studies": [_study(i) for i in ids], "totalCount": 3,
                                                                      **({"nextPageToken": nxt} if nxt else {})}).encode()

    server.handler = handler
    out = _outputs(tmp_path)
    options = _options(tmp_path, source="api", api_url=server.url + "/api/v2/studies", page_size=2, requests_per_minute=60_000)
    assert call_step(steps.fetch_studies, {}, out, options) == 3
    assert [s["protocolSection"]["identificationModule"]["nctId"] for s in read_jsonl(out["studies"])] == ["NCT99220001", "NCT99220002", "NCT99220003"]
    assert list(read_jsonl(out["excluded"])) == [] and len(server.requests) == 2
    assert json.loads(Path(out["report"]).read_text())["counts"] == {"cache_hits": 0, "network_requests": 2, "pages": 2, "studies": 3}
    assert json.loads((tmp_path / "cache/ctgov_search_state.json").read_text())["complete"] is True


def test_a_new_source_is_one_registry_entry(tmp_path, monkeypatch):
    """A source registered here alone: the options take it, ``fetch_studies`` runs it (its studies, its exclusions,
    its skips in the step's report), and the plan gives its rule the bulk zip and checks that file only when the
    source's record says it reads it."""
    calls: list[StudiesOptions] = []

    def fetch(inputs: StepFiles, outputs: StepFiles, options: StudiesOptions, report: SkipReport) -> int:
        calls.append(options)
        report.skip("NCT99220009", "no_results")
        write_jsonl(outputs["excluded"], [{"nctId": "NCT99220009", "reason": "no_results"}])
        return write_jsonl(outputs["studies"], [_study(1), _study(2)])

    monkeypatch.setitem(STUDIES_SOURCES, "fixture", StudiesSource("fixture", fetch))
    out = _outputs(tmp_path)
    assert call_step(steps.fetch_studies, {}, out, _options(tmp_path, source="fixture", limit=5)) == 2
    assert len(calls) == 1 and (calls[0].source, calls[0].limit, calls[0].cache_dir) == ("fixture", 5, str(tmp_path / "cache"))
    assert [s["protocolSection"]["identificationModule"]["nctId"] for s in read_jsonl(out["studies"])] == ["NCT99220001", "NCT99220002"]
    assert list(read_jsonl(out["excluded"])) == [{"nctId": "NCT99220009", "reason": "no_results"}]
    assert json.loads(Path(out["report"]).read_text())["skipped_by_reason"] == {"no_results": 1}

    cfg = defaults()
    gone = str(tmp_path / "studies.zip")
    cfg["clinifact"]["studies"] |= {"source": "fixture", "bulk_zip": gone}
    plan = Plan(cfg)
    assert plan.clinifact_data_planned() and plan.inputs("clinifact_fetch_studies", {}) == {}
    assert StudiesOptions.from_mapping(plan.job_options("clinifact_fetch_studies", {})).source == "fixture"
    assert not any("clinifact.studies.bulk_zip" in line for line in missing_prerequisites(plan))
    monkeypatch.setitem(STUDIES_SOURCES, "fixture", StudiesSource("fixture", fetch, reads_zip=True))
    plan = Plan(cfg)
    assert plan.inputs("clinifact_fetch_studies", {}) == {"zip": gone}
    assert any(line.startswith(f"prerequisite: clinifact.studies.bulk_zip {gone!r}") for line in missing_prerequisites(plan))
    with pytest.raises(OptionsError, match=r"options\.source: 'aact' is not one of \['bulk_zip', 'api', 'fixture'\]"):
        StudiesOptions.from_mapping(_options(tmp_path, source="aact"), where="options")


def test_no_choice_compares_a_sources_name():
    pattern = name_comparisons("source", list(STUDIES_SOURCES))
    assert pattern.search('if studies["source"] == "bulk_zip" and studies["bulk_zip"]:') and pattern.search('if options.source != "api":')
    assert not pattern.search('{"zip": studies["bulk_zip"]}') and not pattern.search('if k != "bulk_zip"')  # the zip's key, not the source
    files = [*sorted((SRC / "plan").glob("*.py")), SRC / "clinifact" / "steps.py"]
    assert comparisons_in(files, "source", list(STUDIES_SOURCES), SRC) == []
