"""MedHallu as a MedSNIP answer source (``medhallu`` in medfc.medsnip.options.ANSWER_SOURCES; its loader
medfc.medsnip.answers.medhallu_answers): a local file in the published form or in MedSNIP's lowercase copy, as a
JSON array, JSONL or Parquet, or the published Parquet file on the Hugging Face Hub at a pinned commit and SHA-256,
downloaded once (rule medsnip_fetch, served here by a local server that counts its requests). Each row gives its
ground truth (TRUE, ``<row>-gt``) and its hallucinated answer (FALSE, ``<row>-h``); bad rows are skipped with
counted reasons, a file without a field the loader needs stops in one line naming it. The paper's rows of the
dataset stand below ours in its table."""

from __future__ import annotations

import hashlib
import json
from http.server import BaseHTTPRequestHandler
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from medfc.common import pinning
from medfc.common.papers import read_paper_numbers
from medfc.common.provenance import RECORDS_ENV, RUN_ENV
from medfc.common.report import SkipReport
from medfc.medsnip import steps
from medfc.medsnip.answers import MissingField, medhallu_answers, read_records
from medfc.common.sources import url_cache_path
from medfc.medsnip.options import FetchOptions
from medfc.medsnip.table import paper_rows
from medfc.config import checks
from medfc.plan import Plan, cluster
from medfc.config.validate import ConfigError, merged_config, plan_for
from tests.helpers.config import SCHEMA, call_step, defaults
from tests.helpers.http_servers import reply, serving
from tests.helpers.medsnip import prepare_opts
from tests.helpers.workflow import REPO

DEMO = REPO / "resources" / "demo" / "medsnip" / "medhallu_demo.json"
PAPERS = REPO / "resources" / "papers" / "numbers.yaml"
PUBLISHED = ("Question", "Knowledge", "Ground Truth", "Hallucinated Answer", "Difficulty Level", "Category of Hallucination")
LOWER = ("question", "knowledge", "ground_truth", "hallucinated_answer", "difficulty", "hallucination_category")
REVISION = "0123456789abcdef0123456789abcdef01234567"  # a made-up commit of the local server's repository
REPO_ID = "test-org/MedHallu"
FILE = "pqa_labeled/train-00000-of-00001.parquet"


def _demo() -> list[dict]:
    return json.loads(DEMO.read_text(encoding="utf-8"))


def _lower(rows: list[dict], ids: list[object] | None = None) -> list[dict]:
    """The rows in MedSNIP's lowercase form, with ``ids`` (default: the row numbers, as MedSNIP's copy numbers them)."""
    ids = list(range(len(rows))) if ids is None else ids
    return [{"id": i, **{low: r[pub] for pub, low in zip(PUBLISHED, LOWER)}} for i, r in zip(ids, rows)]


def _write(rows: list[dict], path: Path, fmt: str) -> Path:
    if fmt == "json":
        path.write_text(json.dumps(rows, indent=1), encoding="utf-8")
    elif fmt == "jsonl":
        path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    else:
        pq.write_table(pa.Table.from_pylist(rows), path)
    return path


def _load(path: Path) -> tuple[list[dict], SkipReport]:
    report = SkipReport("test")
    return medhallu_answers(read_records(path), report, path), report


def _parquet_bytes(rows: list[dict], tmp_path: Path) -> bytes:
    return _write(rows, tmp_path / "published.parquet", "parquet").read_bytes()


# ------------------------------------------------------------------------------------------ the loader

def test_each_question_of_the_demo_gives_its_ground_truth_and_its_hallucinated_answer():
    answers, report = _load(DEMO)
    rows = _demo()
    assert [(a["answer_id"], a["label"]) for a in answers[:2]] == [("0-gt", "TRUE"), ("0-h", "FALSE")]
    assert [a["answer_id"] for a in answers] == [f"{n}-{k}" for n in range(5) for k in ("gt", "h")] + ["5-gt"]
    gt, hallucinated = answers[0], answers[1]
    assert (gt["query"], gt["text"], gt["subset"], gt["source"]) == (rows[0]["Question"], rows[0]["Ground Truth"], "vignette", "medhallu")
    assert hallucinated["text"] == rows[0]["Hallucinated Answer"] and hallucinated["query"] == gt["query"]
    assert (gt["row_id"], gt["kind"], gt["difficulty"], "hallucination_category" in gt) == ("0", "ground_truth", "easy", False)
    assert (hallucinated["kind"], hallucinated["hallucination_category"]) == ("hallucinated", rows[0]["Category of Hallucination"])
    assert all(a["shared_context"] == {} and "knowledge" not in a for a in answers)  # the abstract is never shown to a verifier
    # the last row's hallucinated answer is empty: that answer is skipped, counted, its ground truth kept
    assert report.counts == {"rows": 6, "answers": 11} and report.reasons() == {"empty_hallucinated_answer": 1}
    assert report.skipped == [{"id": "5-h", "reason": "empty_hallucinated_answer", "detail": ""}]


@pytest.mark.parametrize("fmt", ["json", "jsonl", "parquet"])
def test_both_forms_in_every_format_give_the_same_answers(tmp_path, fmt):
    expected, _ = _load(DEMO)
    published, _ = _load(_write(_demo(), tmp_path / f"published.{fmt}", fmt))
    lower, _ = _load(_write(_lower(_demo()), tmp_path / f"lower.{fmt}", fmt))
    assert published == expected and lower == expected  # MedSNIP's copy numbers the published rows from 0
    # the file's kind is read from its bytes, not its name
    assert read_records(_write(_demo(), tmp_path / "no-suffix", fmt)) == read_records(tmp_path / f"published.{fmt}")


def test_the_ids_come_from_the_rows_and_are_the_same_on_every_read(tmp_path):
    path = _write(_lower(_demo(), ids=["a7", 12, "x", 3, 40, "last"]), tmp_path / "lower.json", "json")
    first, _ = _load(path)
    assert [a["answer_id"] for a in first[:4]] == ["a7-gt", "a7-h", "12-gt", "12-h"] and first[-1]["answer_id"] == "last-gt"
    assert _load(path)[0] == first
    # without ids, a row's id is its position in the file: a skipped row keeps its number, the others theirs
    rows = _demo()
    rows[1]["Question"] = None
    answers, report = _load(_write(rows, tmp_path / "published.json", "json"))
    assert [a["answer_id"] for a in answers[:4]] == ["0-gt", "0-h", "2-gt", "2-h"] and report.reasons()["missing_question"] == 1


def test_bad_rows_and_answers_are_skipped_with_counted_reasons(tmp_path):
    rows = _demo()[:5]
    rows[1] = {k: v for k, v in rows[1].items() if k != "Question"}  # no question: the row
    rows[2]["Question"] = "   "  # empty question: the row
    rows[3] = {k: v for k, v in rows[3].items() if k != "Ground Truth"}  # no ground truth: that answer
    rows[4]["Hallucinated Answer"] = 7  # not text: that answer
    rows.append(dict(rows[0]))  # the first row again
    rows.append(_demo()[5])  # an empty answer
    rows.append(["not", "a", "row"])
    answers, report = _load(_write(rows, tmp_path / "bad.jsonl", "jsonl"))
    assert [a["answer_id"] for a in answers] == ["0-gt", "0-h", "3-h", "4-gt", "6-gt"]
    assert report.reasons() == {"duplicate_row": 1, "empty_hallucinated_answer": 1, "empty_question": 1, "missing_ground_truth": 1,
                                "missing_question": 1, "not_an_object": 1, "not_text_hallucinated_answer": 1}
    assert report.counts == {"rows": 4, "answers": 5}
    # MedSNIP's copy: a repeated id is skipped, its first row kept
    lower = _lower(_demo()[:3], ids=[1, 2, 1])
    answers, report = _load(_write(lower, tmp_path / "dup.json", "json"))
    assert [a["answer_id"] for a in answers] == ["1-gt", "1-h", "2-gt", "2-h"]
    assert report.skipped == [{"id": "1", "reason": "duplicate_id", "detail": "row 2"}]


@pytest.mark.parametrize("form, drop, named", [("published", "Hallucinated Answer", "'Hallucinated Answer'"),
                                               ("published", "Ground Truth", "'Ground Truth'"),
                                               ("lower", "ground_truth", "'ground_truth'"),
                                               ("lower", "question", "'question' (nor 'Question')")])
def test_a_file_without_a_field_the_loader_needs_stops_in_one_line_naming_it(tmp_path, form, drop, named):
    rows = _demo() if form == "published" else _lower(_demo())
    path = _write([{k: v for k, v in r.items() if k != drop} for r in rows], tmp_path / "f.json", "json")
    with pytest.raises(MissingField) as exc:
        _load(path)
    message = str(exc.value)
    assert "\n" not in message and message.startswith(f"{path}: no MedHallu row has the field {named}")
    with pytest.raises(MissingField, match="no MedHallu rows$"):
        _load(_write([], tmp_path / "empty.json", "json"))


def test_the_prepare_step_reads_medhallu_through_the_registry(tmp_path):
    out = {"answers": tmp_path / "answers.jsonl", "info": tmp_path / "info.json", "report": tmp_path / "report.json"}
    info = call_step(steps.prepare, {"source": str(DEMO)}, out, prepare_opts(source="medhallu", splits=[], limit=3))
    answers = [json.loads(line) for line in out["answers"].read_text(encoding="utf-8").splitlines()]
    assert [a["answer_id"] for a in answers] == ["0-gt", "0-h", "1-gt"] and info["labels"] == {"TRUE": 2, "FALSE": 1}
    report = json.loads(out["report"].read_text(encoding="utf-8"))
    assert report["excluded_by_reason"] == {"beyond_limit": 8} and report["skipped_by_reason"] == {"empty_hallucinated_answer": 1}


# ------------------------------------------------------------------------------------------ the plan

def _medhallu_config(tmp_path: Path, **medhallu) -> dict:
    cfg = defaults()
    cfg["stages"] = {stage: stage == "medsnip" for stage in cfg["stages"]}
    cfg["cache_dir"] = str(tmp_path / "cache")
    ds = cfg["medsnip"]["datasets"]
    ds["healthfc"]["enabled"] = False
    ds["medhallu"].update(enabled=True, **medhallu)
    cfg["medsnip"]["llm"].update(model="org/llm", base_url="http://127.0.0.1:8000/v1")
    return cfg


def test_the_plan_reads_a_local_file_or_fetches_the_pinned_hub_file(tmp_path):
    plan = Plan(_medhallu_config(tmp_path, path=str(DEMO)))
    checks.check_medsnip(plan)
    assert plan.medsnip.medsnip_datasets() == ["medhallu"] and not plan.medsnip.medsnip_fetched("medhallu")
    assert plan.inputs("medsnip_prepare", {"dataset": "medhallu"}) == {"source": str(DEMO)}
    assert [w for spec, w in plan.planned_jobs() if spec.rule == "medsnip_fetch"] == []
    # scored per answer against atoms, as HealthFC; the configured modes only; its own table title and paper rows
    assert plan.medsnip.medsnip_modes("medhallu") == list(plan.config["medsnip"]["modes"])
    assert {k: plan.options("medsnip_score", {"dataset": "medhallu"})[k] for k in ("level", "baseline_mode")} == {"level": "answer", "baseline_mode": "atoms"}
    assert plan.options("medsnip_table", {"dataset": "medhallu"}) == {"title": "MedHallu", "dataset": "medhallu"}
    assert plan.inputs("medsnip_table", {"dataset": "medhallu"}) == {"papers": plan.models.papers}
    assert plan.options("medsnip_prepare", {"dataset": "medhallu"})["rewrite_claims"] is False
    # path null: the Hub file at the pinned commit, downloaded by medsnip_fetch, whose rows prepare reads
    plan = Plan(_medhallu_config(tmp_path, path=None, hf={**defaults()["medsnip"]["datasets"]["medhallu"]["hf"], "revision": REVISION}))
    checks.check_medsnip(plan)
    assert [w for spec, w in plan.planned_jobs() if spec.rule == "medsnip_fetch"] == [{"dataset": "medhallu"}]
    assert plan.inputs("medsnip_prepare", {"dataset": "medhallu"}) == {"source": f"{plan.layout.medsnip}/medhallu/source/rows.jsonl"}
    fetch = plan.job_options("medsnip_fetch", {"dataset": "medhallu"})
    assert fetch.url == f"https://huggingface.co/datasets/UTAustin-AIHealth/MedHallu/resolve/{REVISION}/{FILE}"
    assert (fetch.cache_dir, fetch.sha256) == (str(tmp_path / "cache"), None)
    # it downloads where Snakemake runs, unless the compute nodes are online
    assert "medsnip_fetch" in cluster.local_rules(plan.config) and "medsnip_fetch" in cluster.rules_placed("network")
    # without a commit the plan stops naming the key
    plan = Plan(_medhallu_config(tmp_path, path=None))
    with pytest.raises(ValueError) as exc:
        checks.check_medsnip(plan)
    assert str(exc.value).startswith("config: medsnip.datasets.medhallu.path is null (the dataset is read from the Hugging Face Hub) "
                                     "but medsnip.datasets.medhallu.hf.revision is not set")


def test_the_hub_files_location_names_its_commit():
    options = {"dataset": "medhallu", "repo": "UTAustin-AIHealth/MedHallu", "config": "pqa_labeled",
               "revision": REVISION, "sha256": None, "endpoint": "https://huggingface.co/", "cache_dir": "cache"}
    url = FetchOptions.from_mapping(options).url
    assert url == f"https://huggingface.co/datasets/UTAustin-AIHealth/MedHallu/resolve/{REVISION}/{FILE}"
    artificial = FetchOptions.from_mapping({**options, "config": "pqa_artificial"})
    assert artificial.file == "pqa_artificial/train-00000-of-00001.parquet"


# --------------------------------------------------------------------- the Hub file, served locally

class Hub:
    """A local server in the Hub's layout: ``files`` by path (changeable), every request's path in ``requests``."""

    def __init__(self, files: dict[str, bytes]):
        self.files, self.requests = files, []

    def __enter__(self) -> Hub:
        hub = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self):  # noqa: N802
                hub.requests.append(self.path)
                if self.path in hub.files:
                    reply(self, 200, {"Content-Type": "application/octet-stream"}, hub.files[self.path])
                else:
                    reply(self, 404, {}, b"Entry not found")

            def log_message(self, *args):
                pass

        self._serving = serving(Handler)
        self.base = self._serving.__enter__()
        return self

    def __exit__(self, *exc) -> None:
        self._serving.__exit__(*exc)


def _fetch_options(hub: Hub, tmp_path: Path, sha256: str | None) -> dict:
    return {"dataset": "medhallu", "repo": REPO_ID, "config": "pqa_labeled", "revision": REVISION, "sha256": sha256,
            "endpoint": hub.base, "cache_dir": str(tmp_path / "cache")}


def test_the_hub_file_is_downloaded_once_checked_and_recorded(tmp_path, monkeypatch):
    monkeypatch.setenv(RECORDS_ENV, str(tmp_path / "provenance"))
    monkeypatch.setenv(RUN_ENV, "run-1")
    data = _parquet_bytes(_demo(), tmp_path)
    sha = hashlib.sha256(data).hexdigest()
    path = f"/datasets/{REPO_ID}/resolve/{REVISION}/{FILE}"
    out = {"rows": tmp_path / "out" / "rows.jsonl", "report": tmp_path / "out" / "report.json"}
    with Hub({path: data}) as hub:
        report = call_step(steps.fetch, {}, out, _fetch_options(hub, tmp_path, sha))
        assert hub.requests == [path] and report["from_cache"] is False and report["rows"] == 6
        # a rerun reads the cached download: no request
        again = call_step(steps.fetch, {}, out, _fetch_options(hub, tmp_path, sha))
        assert hub.requests == [path] and again["from_cache"] is True
    url = f"{hub.base}{path}"
    assert report["release"] == {"dataset": "medhallu", "source": url, "commit": REVISION, "files": {FILE: {"sha256": sha, "pinned": True}}}
    assert json.loads((tmp_path / "provenance" / pinning.RELEASES_FILE).read_text().splitlines()[0]) == {"run": "run-1", **report["release"]}
    assert Path(report["path"]) == url_cache_path(url, tmp_path / "cache" / "medsnip" / "hub")
    # the rows as published, which prepare reads as it reads the demo file itself
    rows = [json.loads(line) for line in out["rows"].read_text(encoding="utf-8").splitlines()]
    assert rows == _demo()
    assert _load(out["rows"])[0] == _load(DEMO)[0]


def test_a_changed_hub_file_stops_before_it_is_read(tmp_path, monkeypatch):
    original = _parquet_bytes(_demo(), tmp_path)
    pinned = hashlib.sha256(original).hexdigest()
    changed_rows = _demo()
    changed_rows[0]["Ground Truth"] = "A daily walk made no difference."
    changed = _parquet_bytes(changed_rows, tmp_path)
    found = hashlib.sha256(changed).hexdigest()
    path = f"/datasets/{REPO_ID}/resolve/{REVISION}/{FILE}"
    out = {"rows": tmp_path / "out" / "rows.jsonl", "report": tmp_path / "out" / "report.json"}
    with Hub({path: changed}) as hub:
        url = f"{hub.base}{path}"
        with pytest.raises(pinning.ReleaseChanged) as exc:
            call_step(steps.fetch, {}, out, _fetch_options(hub, tmp_path, pinned))
        assert str(exc.value) == (f"release changed: {url} has SHA-256 {found}, but medsnip.datasets.medhallu.hf.sha256 pins {pinned}; "
                                  f"to accept this version of the file, set medsnip.datasets.medhallu.hf.sha256: {found}")
        assert not out["rows"].exists() and len(hub.requests) == 1
        # planning a run on the changed download in the cache stops it before any job, naming the key
        monkeypatch.chdir(REPO)
        overrides = {"stages": {"healthfc": False, "clinifact": False, "experiments": False, "medsnip": True},
                     "cache_dir": str(tmp_path / "cache"),
                     "medsnip": {"llm": {"model": "m", "base_url": "http://127.0.0.1:8000/v1", "api_key_env": ""},
                                 "verifiers": [{"name": "v", "kind": "claim_only"}],
                                 "datasets": {"healthfc": {"enabled": False}, "medhallu": {
                                     "enabled": True, "path": None, "hf": {"repo": REPO_ID, "revision": REVISION, "sha256": pinned,
                                                                           "endpoint": hub.base}}}}}
        with pytest.raises(ConfigError) as plan_exc:
            plan_for(merged_config([REPO / "config" / "config.yaml"], overrides), SCHEMA, prerequisites=True)
        assert str(plan_exc.value).splitlines() == [str(exc.value)]
        # the key set to the found hash (or null) accepts it, from the cache: no second request
        report = call_step(steps.fetch, {}, out, _fetch_options(hub, tmp_path, found))
        assert report["release"]["files"][FILE] == {"sha256": found, "pinned": True} and len(hub.requests) == 1
    assert json.loads(out["rows"].read_text(encoding="utf-8").splitlines()[0])["Ground Truth"] == "A daily walk made no difference."


def test_a_revision_that_is_not_a_commit_is_refused_by_the_options(tmp_path):
    with Hub({}) as hub, pytest.raises(ValueError, match=r"revision: 'main' is not a commit \(40 lower-case hex digits\)"):
        call_step(steps.fetch, {}, {"rows": tmp_path / "r.jsonl", "report": tmp_path / "r.json"},
                  {**_fetch_options(hub, tmp_path, None), "revision": "main"})


# ------------------------------------------------------------------------------------ the paper's rows

def test_the_papers_rows_of_each_dataset_in_our_modes():
    numbers = read_paper_numbers(PAPERS)
    rows = paper_rows(numbers, "medhallu", ["direct", "atoms", "group"])
    assert [(r["source"], r["verifier"], r["mode"], r["FF1"]) for r in rows] == [
        ("paper (Iqbal et al. 2026)", "GPT-5.4 (claim-only)", m, f) for m, f in (("atoms", 0.694), ("group", 0.720), ("direct", 0.721))]
    assert [(r["units"], r["scored"], r["verify_calls_saved_pct"], r["total_calls_change_pct"]) for r in rows] == [
        (3798, 2000, None, None), (2636, 2000, 30.6, 14.5), (2586, 2000, 31.9, -20.9)]
    assert [r["FF1"] for r in paper_rows(numbers, "healthfc", ["atoms", "group", "direct"])] == [0.672, 0.672, 0.693]
    assert [r["mode"] for r in paper_rows(numbers, "bench", ["atoms", "group", "direct", "human_atoms", "human_snippets"])] == [
        "group", "direct", "human_atoms", "human_snippets"]
    assert paper_rows(numbers, "medhallu", ["human_atoms"]) == [] and paper_rows(numbers, "quiz", ["atoms"]) == []


def _arm(verifier: str, mode: str, ff1: float, verify: int, decompose: int) -> dict:
    return {"verifier": verifier, "mode": mode, "n_units": verify, "unit_coverage": 1.0, "n_scored": 4, "coverage": 1.0, "ff1": ff1,
            "ff1_interval": {"ci_low": 0.5, "ci_high": 1.0}, "vs_baseline": None if mode == "atoms" else {"diff": 0.1, "ci_low": 0.0,
                                                                                                     "ci_high": 0.2, "p_gt_0": 0.6},
            "cost": {"verify": {"calls": verify}, "decompose": {"calls": decompose},
                     "total": {"calls": verify + decompose, "prompt_tokens": 10, "completion_tokens": 2, "cost_usd": 0.001}}}


def test_the_table_puts_the_papers_rows_below_ours_with_the_calls_saved(tmp_path):
    scores = {"n_answers": 4, "options": {"level": "answer", "aggregation": "or_false", "ci_level": 0.95, "baseline_mode": "atoms",
                                          "n_resamples": 100, "seed": 42, "tau": 0.9},
              "arms": {"v/atoms": _arm("v", "atoms", 0.6, 10, 4), "v/direct": _arm("v", "direct", 0.7, 7, 4)}}
    (tmp_path / "s.json").write_text(json.dumps(scores), encoding="utf-8")
    out = {"csv": tmp_path / "t.csv", "md": tmp_path / "t.md", "tex": tmp_path / "t.tex"}
    rows = call_step(steps.table, {"scores": tmp_path / "s.json", "papers": str(PAPERS)}, out, {"title": "MedHallu", "dataset": "medhallu"})
    assert [(r["source"], r["mode"], r["FF1"]) for r in rows] == [("ours", "atoms", 0.6), ("ours", "direct", 0.7),
                                                                  ("paper (Iqbal et al. 2026)", "atoms", 0.694),
                                                                  ("paper (Iqbal et al. 2026)", "direct", 0.721)]
    # ours: 7 of 10 verification calls, 11 of 14 calls in all (the decomposition too) against atoms; the paper's as it states them
    assert [(r["verify_calls_saved_pct"], r["total_calls_change_pct"]) for r in rows] == [(None, None), (30.0, -21.4), (None, None),
                                                                                            (31.9, -20.9)]
    csv_lines = out["csv"].read_text(encoding="utf-8").splitlines()
    assert csv_lines[1].startswith("ours,v,atoms,10,") and csv_lines[3].startswith("paper (Iqbal et al. 2026),GPT-5.4 (claim-only),atoms,3798,,")
    md = out["md"].read_text(encoding="utf-8")
    assert ("Below ours, the rows of the paper (Iqbal et al. 2026) with GPT-5.4 (claim-only) as verifier: its units, FF1 and the "
            "calls its modes save against atoms, as it states them") in md.split("\n\n")[0]
    tex = out["tex"].read_text(encoding="utf-8")
    assert "Reported: Iqbal et al. 2026" in tex and "3{,}798" in tex and "0.721" in tex
    # without the papers' numbers (a test, a call by hand): our rows only
    assert [r["source"] for r in call_step(steps.table, {"scores": tmp_path / "s.json"}, out, {"title": "MedHallu", "dataset": "medhallu"})] == ["ours", "ours"]
