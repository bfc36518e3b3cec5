"""The search sources are one registry (medfc.retrieval.search_sources): HealthFC's retrieval step, the plan (its
options, its prerequisite checks, the rule's wildcard pattern), the experiments' systems and MedSNIP's searchers
look a source up there. A test-only source registered here, and nothing else, is searched through the
``healthfc_retrieve`` step and planned; neither the plan nor the factories compare anything with a source's
name."""

from __future__ import annotations

import re
from dataclasses import dataclass, fields

import pytest
import yaml

from medfc.common.io import read_json, read_jsonl, write_jsonl
from medfc.common.options import Options, OptionsError
from medfc.experiments.healthfc.systems import EVIDENCE_SOURCES
from medfc.healthfc import evidence as ev
from medfc.healthfc.steps import retrieve
from medfc.plan import HEALTHFC_WILDCARDS, Plan
from medfc.config.prerequisites import _llms, _retrieval
from medfc.retrieval import search_sources as S
from medfc.retrieval.search import Hit
from tests.helpers.config import SCHEMA, call_step, defaults
from tests.helpers.workflow import REPO

# the test-only source's index: query → its results, in rank order
CORPORA = {"tiny": {"Does sugar make children hyperactive?": [("Sugar", "Sugar does not change behaviour."),
                                                                ("Diet", "No effect in trials.")],
                    "Does ginger relieve nausea?": [("Ginger", "Ginger may help.")]}}


@dataclass(frozen=True)
class DictSourceOptions(Options):
    """``healthfc.retrieval.dict``: which corpus of :data:`CORPORA` answers, and a key's variable."""

    corpus: str
    api_key_env: str
    file: str


class DictSearch:
    """A fake client: answers from a dict, counting the searches it is sent."""

    name = "dict"
    sent: list[tuple[str, int]] = []

    def __init__(self, corpus: str) -> None:
        self.corpus = corpus

    def index_id(self) -> str:
        return f"corpus:{self.corpus}"

    def search(self, query: str, k: int) -> list[Hit]:
        DictSearch.sent.append((query, k))
        return [Hit(title=t, text=x, url=f"https://dict.example/{t}", id=t) for t, x in CORPORA[self.corpus].get(query, [])][:k]


@pytest.fixture
def dict_source():
    """The test-only source, registered for one test (and taken out again)."""
    DictSearch.sent = []
    record = S.register(S.SearchSource("dict", DictSourceOptions, lambda o, c: DictSearch(o.corpus), "a dict", key_env="api_key_env",
                                       complete=lambda own, cache_dir: {**own, "corpus": own["corpus"] or "tiny"}))
    yield record
    del S.REGISTRY["dict"]


CLAIMS = [{"id": "a#0", "claim_en": "Does sugar make children hyperactive?"}, {"id": "b#0", "claim_en": "Does ginger  relieve nausea?"},
          {"id": "c#0", "claim_en": "Nothing is known about this?"}]


def test_a_source_registered_in_a_test_is_searched_by_the_retrieve_step(tmp_path, monkeypatch, dict_source):
    monkeypatch.setattr(ev, "utc_today", lambda: "2026-12-03")
    ds = tmp_path / "dataset.jsonl"
    write_jsonl(ds, CLAIMS)
    options = {"source": "dict", "lang": "en", "top_k": 3, "cache_dir": str(tmp_path / "cache"), "max_retries": 2, "progress": False,
               "max_share_without_evidence": 0.34, "source_options": {"corpus": "tiny", "api_key_env": "", "file": ""}}
    for run in ("first", "again"):
        out = {"evidence": str(tmp_path / run / "dict.jsonl"), "report": str(tmp_path / run / "dict.report.json")}
        call_step(retrieve, {"dataset": str(ds)}, out, options)
        rows, report = list(read_jsonl(out["evidence"])), read_json(out["report"])
        assert rows == [{"id": "a#0", "query": "Does sugar make children hyperactive?", "source": "dict", "searched": "2026-12-03", "rank": 1,
                         "title": "Sugar", "url": "https://dict.example/Sugar", "snippet": "Sugar does not change behaviour.", "origin": "search"},
                        {"id": "a#0", "query": "Does sugar make children hyperactive?", "source": "dict", "searched": "2026-12-03", "rank": 2,
                         "title": "Diet", "url": "https://dict.example/Diet", "snippet": "No effect in trials.", "origin": "search"},
                        {"id": "b#0", "query": "Does ginger relieve nausea?", "source": "dict", "searched": "2026-12-03", "rank": 1,
                         "title": "Ginger", "url": "https://dict.example/Ginger", "snippet": "Ginger may help.", "origin": "search"}]
        assert report["source"] == "dict" and report["mode"] == "search"
        assert report["counts"]["claims_without_evidence"] == 1 and report["skipped_by_reason"] == {"no_results": 1}
    assert len(DictSearch.sent) == 3  # the rerun: every answer from the cache (keyed by the client's name and index)
    # its own section is typed by its own class; an unknown source names the registered ones
    with pytest.raises(OptionsError, match=r"healthfc.retrieval.dict.*corpus"):
        call_step(retrieve, {"dataset": str(ds)}, {"evidence": str(tmp_path / "x.jsonl"), "report": str(tmp_path / "x.json")},
                  {**options, "source_options": {"api_key_env": "", "file": ""}})
    with pytest.raises(ValueError, match=r"unknown evidence source 'nope' \(web \| pubmed \| wikipedia \| dict\)"):
        call_step(retrieve, {"dataset": str(ds)}, {}, {**options, "source": "nope"})


def test_a_source_registered_in_a_test_is_planned_and_checked(tmp_path, monkeypatch, dict_source):
    """The plan completes its section and checks what it needs with the record's declarations alone."""
    cfg = defaults()
    cfg["healthfc"]["retrieval"]["dict"] = {"corpus": "", "api_key_env": "MEDFC_TEST_DICT_KEY", "file": ""}
    plan = Plan(cfg)
    assert plan.healthfc.healthfc_retrieve("dict")["source_options"] == {"corpus": "tiny", "api_key_env": "MEDFC_TEST_DICT_KEY", "file": ""}
    assert plan.healthfc.healthfc_retrieve_inputs("dict") == {}
    assert S.wildcard_pattern() == "web|pubmed|wikipedia|dict"
    monkeypatch.setattr(plan.healthfc, "healthfc_systems_run", lambda: ["retrieved_dict"])  # its systems: made by the registry at import
    monkeypatch.setattr("medfc.config.prerequisites.evidence_source", lambda system: system.removeprefix("retrieved_"))
    monkeypatch.setattr(plan, "stage_enabled", lambda stage: stage == "experiments")
    monkeypatch.delenv("MEDFC_TEST_DICT_KEY", raising=False)
    assert [line for line in _retrieval(plan) if line] == [
        "prerequisite: MEDFC_TEST_DICT_KEY (named by healthfc.retrieval.dict.api_key_env) is not set: the dict evidence of the HealthFC "
        "systems *_dict is searched live (healthfc_retrieve); export MEDFC_TEST_DICT_KEY=<your key>, or set healthfc.retrieval.dict.file "
        "to a prepared evidence file"]
    monkeypatch.setenv("MEDFC_TEST_DICT_KEY", "k")
    assert [line for line in _retrieval(plan) if line] == []


def test_medsnip_s_shared_sources_need_what_their_records_declare(monkeypatch):
    """MedSNIP's web and pubmed need, from its own sections, what the registry declares, one line each:
    the web's key, PubMed's contact unless E-utilities run on this machine."""
    cfg = defaults()
    ms = cfg["medsnip"]
    ms["verifiers"] = [{"name": "r", "kind": "retrieval"}]
    ms["retrieval"]["sources"] = ["pubmed", "web", "bm25"]
    ms["retrieval"]["web"]["api_key_env"] = "MEDFC_TEST_WEB_KEY"
    ms["retrieval"]["pubmed"]["email"] = ""
    ms["retrieval"]["bm25"]["passages"] = ""
    plan = Plan(cfg)
    monkeypatch.setattr(plan, "stage_enabled", lambda stage: stage == "medsnip")
    monkeypatch.setattr(plan.medsnip, "medsnip_datasets", lambda: ["bench"])
    monkeypatch.setattr(plan.medsnip, "medsnip_llm", lambda overrides: {"backend": "transformers"})
    monkeypatch.delenv("MEDFC_TEST_WEB_KEY", raising=False)
    monkeypatch.delenv("NCBI_EMAIL", raising=False)
    assert [line for line in _llms(plan) if line] == [
        "prerequisite: MEDFC_TEST_WEB_KEY (named by medsnip.retrieval.web.api_key_env) is not set: a retrieval verifier searches the web; "
        "export MEDFC_TEST_WEB_KEY=<your key>",
        "prerequisite: medsnip.retrieval.pubmed.email (or NCBI_EMAIL) is empty: a retrieval verifier searches PubMed; set it to your "
        "e-mail address (e.g. export NCBI_EMAIL=you@your-institution.org)",
        "prerequisite: medsnip.retrieval.bm25.passages is empty but bm25 is in medsnip.retrieval.sources: set it to a JSONL of passages"]
    ms["retrieval"]["pubmed"]["eutils_url"] = "http://127.0.0.1:8/eutils/"
    monkeypatch.setenv("MEDFC_TEST_WEB_KEY", "k")
    assert [line for line in _llms(plan) if line] == [
        "prerequisite: medsnip.retrieval.bm25.passages is empty but bm25 is in medsnip.retrieval.sources: set it to a JSONL of passages"]


def test_the_registry_is_what_the_systems_the_rule_and_the_schema_name():
    names = S.source_names()
    assert names == ("web", "pubmed", "wikipedia") == EVIDENCE_SOURCES
    assert HEALTHFC_WILDCARDS["source"] == "web|pubmed|wikipedia"
    rules = (REPO / "workflow" / "rules" / "healthfc.smk").read_text(encoding="utf-8")
    assert 'source=HEALTHFC_WILDCARDS["source"]' in rules and "web|pubmed" not in rules
    schema = yaml.safe_load(SCHEMA.read_text(encoding="utf-8"))
    retrieval = schema["properties"]["healthfc"]["properties"]["retrieval"]["properties"]
    for name in names:  # each source's section has exactly its options' keys
        assert set(retrieval[name]["properties"]) == {f.name for f in fields(S.search_source(name).options)}, name
    with pytest.raises(ValueError, match=r"unknown evidence source 'nope' \(web \| pubmed \| wikipedia\)"):
        S.search_source("nope")
    with pytest.raises(ValueError, match="registered twice"):
        S.register(S.search_source("web"))


def test_the_shared_clients_are_built_as_before():
    """HealthFC's options and MedSNIP's connection build the same clients the if-chains built (cache keys
    included: the client's name and index)."""
    web = S.build_client("web", S.WebSourceOptions("http://127.0.0.1:9/search", "K", 2.0, ""), S.Connection(max_retries=4))
    assert (web.name, web.index_id(), web.require_key, web.http.max_retries, web.http.cache_dir) == ("web", "http://127.0.0.1:9/search", True, 4, None)
    loose = S.build_client("web", S.WebSourceOptions("http://127.0.0.1:9/search", "K", 1.0, ""),
                           S.Connection(max_retries=3, http_cache_dir="/tmp/h", require_key=False))
    assert (loose.require_key, loose.http.max_retries, str(loose.http.cache_dir)) == (False, 3, "/tmp/h")
    pm = S.build_client("pubmed", S.PubMedSourceOptions("a@b.org", "http://127.0.0.1:9/eutils", "", 0.0, "/tmp/r", ""), S.Connection())
    assert (pm.name, pm.index_id(), pm.fetcher.email, str(pm.fetcher.cache_dir)) == ("pubmed", "http://127.0.0.1:9/eutils/esearch.fcgi", "a@b.org", "/tmp/r")
    wiki = S.build_client("wikipedia", S.WikipediaSourceOptions("http://127.0.0.1:9/w/api.php", "https://w/", 1.0, ""), S.Connection(max_retries=1))
    assert (wiki.name, wiki.page_url, wiki.http.max_retries) == ("wikipedia", "https://w/", 1)


FACTORIES = [REPO / "src/medfc/retrieval/search_sources.py", REPO / "src/medfc/healthfc/evidence.py", REPO / "src/medfc/healthfc/steps.py",
             REPO / "src/medfc/medsnip/verify.py", REPO / "src/medfc/medsnip/steps.py",
             REPO / "src/medfc/experiments/healthfc/systems.py", *sorted((REPO / "src/medfc/plan").glob("*.py"))]


def test_no_comparison_with_a_source_name_is_left_in_the_plan_or_the_factories():
    """A registered source is looked up, never tested for by name (``source == "pubmed"``, ``"web" in sources``).
    MedSNIP's ``bm25`` is no registered source: its local index, the one special case MedSNIP keeps (its passages
    file an input of the verify job and a prerequisite, its searcher in ``medfc.medsnip.verify.SEARCHERS``)."""
    names = "|".join(S.source_names())
    compared = re.compile(rf'(==|!=)\s*"({names})"|"({names})"\s+(not\s+)?in\b')
    found = [f"{p.relative_to(REPO)}:{n}: {line.strip()}" for p in FACTORIES for n, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1)
             if compared.search(line) or ('source == "' in line and "medsnip" not in p.parts)]
    assert found == []
