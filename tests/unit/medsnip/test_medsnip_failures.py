"""MedSNIP on a bad day: a failed LLM call is never a verdict or a unit (the step fails naming the count and the
reason, unless ``max_failed_share`` allows it, and then the failed items are written as failed, counted and not
scored); ``<think>`` blocks are removed before an answer is read; the unit cache is written as each answer
arrives and heals entries of the wrong shape; the key's value never reaches a file, a report, a log or an error.
Every server is a local fake (127.0.0.1)."""

from __future__ import annotations

import json
import logging

import pytest

from tests.helpers.config import call_step
from tests.helpers.medsnip import FlakyOpenAI, decompose_opts, llm_opts, prepare_opts, score_opts, scripted, statement, verify_opts
from tests.unit.medsnip.conftest import DEMO_BENCH

from medfc.common.io import read_json, read_jsonl, write_jsonl
from medfc.llm.structured import parse_json_answer, strip_think
from medfc.medsnip import steps
from medfc.medsnip.calls import LLMCallsFailed
from medfc.medsnip.verify import parse_one_word

KEY = "sk-medfc-Zq8Xw2Lp9Rt4Vb7"  # no pattern of the redaction finds it: only its value does
DOWN = (500, {"error": {"message": "backend down"}})
FALSE_UNITS = ("cures", "antibiotic")  # the human atoms the scripted verifier calls FALSE (rightly)


def _bench(tmp_path):
    """The demo bench's answers and its 14 human atoms (no LLM)."""
    d = tmp_path / "in"
    call_step(steps.prepare, {"source": str(DEMO_BENCH)}, {"answers": d / "answers.jsonl"}, prepare_opts())
    call_step(steps.decompose, {"answers": d / "answers.jsonl"}, {"units": d / "units.jsonl"}, decompose_opts("human_atoms", None))
    return d


def _verify(tmp_path, d, url, name="co", cache=True, **llm):
    out = tmp_path / name
    outputs = {"verdicts": out / "v.jsonl", "info": out / "info.json", "report": out / "report.json"}
    opts = verify_opts("claim_only", name, llm_opts(url, max_retries=0, **llm),
                       unit_cache_dir=str(tmp_path / "units") if cache else "")
    info = call_step(steps.verify, {"units": d / "units.jsonl", "answers": d / "answers.jsonl"}, outputs, opts)
    return info, outputs


def _decompose(tmp_path, d, url, mode="direct", **llm):
    out = tmp_path / f"dec_{mode}"
    outputs = {"units": out / "units.jsonl", "info": out / "info.json", "report": out / "report.json"}
    info = call_step(steps.decompose, {"answers": d / "answers.jsonl"}, outputs,
                     decompose_opts(mode, llm_opts(url, max_retries=0, **llm), unit_cache_dir=str(tmp_path / "units")))
    return info, outputs


def _text(root) -> str:
    return "\n".join(p.read_bytes().decode("utf-8", "replace") for p in sorted(root.rglob("*")) if p.is_file())


# -- 1. a failed call is no verdict and no unit ---------------------------------------------------------------


def test_a_server_failing_every_call_fails_verify_and_decompose_naming_count_and_reason(tmp_path):
    d = _bench(tmp_path)
    with FlakyOpenAI(scripted, fail=lambda body: DOWN) as server:
        with pytest.raises(LLMCallsFailed, match=r"^medsnip verify co: 14 LLM calls failed, for 14 of 14 units \(101:human_atoms:1, .*…\); "
                                                 r"max_failed_share 0\.0 allows 0\. First errors: POST http://127\.0\.0\.1:\d+/v1/chat/"
                                                 r"completions: HTTP 500.*backend down \(14×\)"):
            _verify(tmp_path, d, server.base_url)
        assert not (tmp_path / "co").exists()  # no verdict file, no FALSE verdicts
        for mode in ("atoms", "direct"):
            with pytest.raises(LLMCallsFailed, match=rf"^medsnip decompose {mode}: 4 LLM calls failed, for 4 of 4 answers .*HTTP 500"):
                _decompose(tmp_path, d, server.base_url, mode)
            assert not (tmp_path / f"dec_{mode}").exists()  # no whole-text fallback units
        assert server.failed == len(server.requests) == 14 + 4 + 4
    assert not list((tmp_path / "units").rglob("*.json"))  # nothing of it cached


def test_allowed_failures_are_written_as_failed_counted_and_left_out_of_scoring(tmp_path):
    d = _bench(tmp_path)
    fail = lambda body: DOWN if any(m in statement(body) for m in FALSE_UNITS) else None  # noqa: E731
    with FlakyOpenAI(scripted, fail=fail) as server:
        with pytest.raises(LLMCallsFailed, match=r"for 2 of 14 units \(101:human_atoms:4, 102:human_atoms:4\); max_failed_share 0\.1 allows 1"):
            _verify(tmp_path, d, server.base_url, max_failed_share=0.1)
        assert len(server.requests) == 14
        info, out = _verify(tmp_path, d, server.base_url, max_failed_share=0.15)
        assert len(server.requests) == 14 + 2  # the 12 answered were cached
    recs = list(read_jsonl(out["verdicts"]))
    failed = [r for r in recs if r["failed"]]
    assert [(r["unit_id"], r["verdict"], r["unparsed"]) for r in failed] == [("101:human_atoms:4", None, False), ("102:human_atoms:4", None, False)]
    assert all("HTTP 500" in r["error"] for r in failed) and [r["verdict"] for r in recs].count("FALSE") == 1  # only the 4,000 IU one
    assert (info["failed"], info["unparsed"], info["counts"], info["verdicts"]) == (2, 0, {"failed_call": 2}, {"TRUE": 11, "FALSE": 1, "None": 2})
    report = read_json(out["report"])
    assert report["counts"] == {"failed_calls": 2, "failed_items": 2, "unparsed": 0, "unit_cache_damaged": 0}
    assert report["skipped_by_reason"] == {"call_failed": 2}
    # scoring leaves them out (not abstentions, not FALSE) and counts them; the table shows them
    res = call_step(steps.score, {"answers": d / "answers.jsonl", "verdicts": [out["verdicts"]]},
                    {"scores": tmp_path / "s.json", "report": tmp_path / "sr.json"}, score_opts(baseline_mode="human_atoms"))
    arm = res["arms"]["co/human_atoms"]
    assert (arm["n_units"], arm["n_failed"], arm["n"], arm["n_scored"], arm["unit_coverage"]) == (14, 2, 12, 12, 1.0)
    assert arm["counts"] == {"tp_false": 0, "fp_false": 1, "fn_false": 1, "tn_false": 10}  # the failed two are not FN
    assert read_json(tmp_path / "sr.json")["excluded_by_reason"]["co/human_atoms:failed_calls"] == 2
    rows = call_step(steps.table, {"scores": tmp_path / "s.json"}, {"csv": tmp_path / "t.csv", "md": tmp_path / "t.md", "tex": tmp_path / "t.tex"},
                     {"title": "demo", "dataset": "bench"})
    assert [(r["mode"], r["units"], r["failed"], r["unparsed"], r["scored"]) for r in rows] == [("human_atoms", 14, 2, 0, 12)]
    assert "Failed calls (allowed by max_failed_share), not scored: 2 units not verified" in (tmp_path / "t.md").read_text()


def test_an_allowed_failed_decomposition_has_no_units_and_no_fallback(tmp_path):
    d = _bench(tmp_path)
    with FlakyOpenAI(scripted, fail=lambda body: DOWN if "How much water" in body["messages"][1]["content"] else None) as server:
        with pytest.raises(LLMCallsFailed, match=r"^medsnip decompose direct: 1 LLM calls failed, for 1 of 4 answers \(104\)"):
            _decompose(tmp_path, d, server.base_url)
        info, out = _decompose(tmp_path, d, server.base_url, max_failed_share=0.25)
        assert len(server.requests) == 4 + 1  # the other three answers came from the unit cache
    units = list(read_jsonl(out["units"]))
    assert sorted({u["answer_id"] for u in units}) == ["101", "102", "103"] and not any(u["fallback"] for u in units)
    assert (info["failed"], info["counts"]["direct_failed"], info["counts"].get("fallback_whole_text", 0)) == (1, 1, 0)
    report = read_json(out["report"])
    assert report["counts"]["failed_calls"] == 1 and report["skipped_by_reason"] == {"direct_call_failed": 1}
    # scoring: the mode's row counts the answer that has no units
    verdicts = tmp_path / "v.jsonl"
    with FlakyOpenAI(scripted) as server:
        call_step(steps.verify, {"units": out["units"], "answers": d / "answers.jsonl"}, {"verdicts": verdicts},
                  verify_opts("claim_only", "co", llm_opts(server.base_url)))
    res = call_step(steps.score, {"answers": d / "answers.jsonl", "verdicts": [verdicts], "decompositions": [out["info"]]},
                    {"scores": tmp_path / "s.json"}, score_opts("answer", baseline_mode="direct", fidelity_embedding_model="none"))
    assert res["arms"]["co/direct"]["decompose"] == {"failed": 1, "unparsed": 0}
    assert res["arms"]["co/direct"]["n_scored"] == 3  # the answer without units abstains


# -- the paper's rule for unreadable answers, after <think> blocks ---------------------------------------------


def test_think_blocks_are_removed_before_an_answer_is_read(tmp_path):
    assert strip_think("<think>Is it false? Maybe.</think>\n\nTRUE") == "TRUE"
    assert strip_think("the template opened it... false?</think> FALSE.") == "FALSE."  # only the closing tag
    assert strip_think("<THINK>one</THINK> <think>two\n</think>true") == "true"
    assert strip_think("  <think>ran out of tokens, {\"a\": 1}") == ""  # unterminated: no answer
    assert [parse_one_word(t) for t in ("<think>false</think>True", "<think>true... ", "x</think>false")] == ["TRUE", None, "FALSE"]
    schema = {"type": "object", "required": ["b"]}
    assert parse_json_answer('<think>{"a": 1} no</think>```json\n{"b": 2}\n```', schema) == ({"b": 2}, None)
    d = _bench(tmp_path)

    def thinking(body):
        verdict = "False." if any(m in statement(body) for m in FALSE_UNITS) else "True"
        return f"<think>\nThe statement says {statement(body)!r}. False? True? Let me think.\n</think>\n\n{verdict}"

    with FlakyOpenAI(thinking) as server:
        info, out = _verify(tmp_path, d, server.base_url)
    assert info["verdicts"] == {"TRUE": 12, "FALSE": 2} and info["unparsed"] == 0 and "unparsed" not in info["counts"]
    with FlakyOpenAI(lambda body: "<think>\nThe statement is true, I think, but") as server:  # out of tokens while thinking
        info, out = _verify(tmp_path, d, server.base_url, name="cut", cache=False)
    assert info["verdicts"] == {"FALSE": 14} and info["unparsed"] == 14 and read_json(out["report"])["counts"]["unparsed"] == 14


# -- 2. the unit cache: stored as answered, wrong shapes healed ------------------------------------------------


def test_wrong_shape_unit_cache_entries_are_counted_logged_misses_asked_again(tmp_path, caplog):
    d = _bench(tmp_path)
    with FlakyOpenAI(scripted) as server:
        first, out = _verify(tmp_path, d, server.base_url)
        verdicts = [r["verdict"] for r in read_jsonl(out["verdicts"])]
        _decompose(tmp_path, d, server.base_url)
        n = len(server.requests)
        files = sorted((tmp_path / "units").rglob("*.json"))
        by_kind: dict[str, list] = {"text": [], "structured": []}
        for f in files:
            by_kind["structured" if "ok" in json.loads(f.read_text()) else "text"].append(f)
        damaged = {by_kind["text"][0]: "{}", by_kind["text"][1]: '{"error": null, "usage": {"calls": 1, "prompt_tokens": 1, "completion_tokens": 1}}',
                   by_kind["text"][2]: "not json", by_kind["text"][3]: '["TRUE"]', by_kind["text"][4]: '{"text": "TRUE"}',
                   by_kind["structured"][0]: json.dumps({"ok": True, "value": {}, "raw": "{}", "repaired": False, "error": None,
                                                         "usage": {"calls": 1, "prompt_tokens": 1, "completion_tokens": 1}})}
        for f, text in damaged.items():
            f.write_text(text)
        with caplog.at_level(logging.WARNING):
            again, out = _verify(tmp_path, d, server.base_url)
            dec, _ = _decompose(tmp_path, d, server.base_url)
        assert len(server.requests) - n == 5 + 1  # the damaged ones, asked again
    assert [r["verdict"] for r in read_jsonl(out["verdicts"])] == verdicts
    assert again["cache"] == {"hits": 9, "misses": 5, "damaged": 5} and dec["cache"] == {"hits": 3, "misses": 1, "damaged": 1}
    assert read_json(out["report"])["counts"]["unit_cache_damaged"] == 5
    for f in damaged:
        assert f"damaged cache file {f}" in caplog.text
        assert json.loads(f.read_text()) != {}  # replaced by the answer
    assert "KeyError" in caplog.text and "text" in caplog.text  # the missing text is named, not raised


def test_a_kill_mid_batch_keeps_what_was_answered_and_the_rerun_asks_only_the_rest(tmp_path, monkeypatch):
    units = [{"unit_id": f"a:atoms:{k}", "answer_id": "a", "mode": "atoms", "text": f"statement number {k}"} for k in range(10)]
    write_jsonl(tmp_path / "units.jsonl", units)
    write_jsonl(tmp_path / "answers.jsonl", [{"answer_id": "a", "query": "Q?", "text": "A."}])
    d = tmp_path

    class Killed(BaseException):
        """What a kill -9 leaves of the step: nothing after the third answer (not caught by anything)."""

    real = steps.make_llm

    def dying(opts, ledger=None, threads=1):
        client = real(opts, ledger, threads)
        chat, answered = client._chat, []

        def _chat(convs, params):  # the calls go out one after the other, whatever the batch; the 4th never returns
            out = []
            for conv in convs:
                if len(answered) >= 3:
                    raise Killed()
                out += chat([conv], params)
                answered.append(out[-1])
            return out

        client._chat = _chat
        return client

    with FlakyOpenAI(lambda body: "true") as server:
        monkeypatch.setattr(steps, "make_llm", dying)
        with pytest.raises(Killed):
            _verify(tmp_path, d, server.base_url)  # no HTTP cache: only the unit cache keeps answers
        assert len(server.requests) == 3 and len(list((tmp_path / "units").rglob("*.json"))) == 3
        monkeypatch.setattr(steps, "make_llm", real)
        info, out = _verify(tmp_path, d, server.base_url)
        assert len(server.requests) == 3 + 7
    assert info["cache"] == {"hits": 3, "misses": 7} and info["verdicts"] == {"TRUE": 10}


def test_an_exception_of_the_client_propagates_unchanged(tmp_path, monkeypatch):
    """A refused key or an unknown model raises in the client: the step does not catch it."""
    d = _bench(tmp_path)

    class Refused(RuntimeError):
        pass

    def refusing(opts, ledger=None, threads=1):
        client = steps_make_llm(opts, ledger, threads)

        def _chat(convs, params):
            raise Refused("HTTP 401 from the endpoint")

        client._chat = _chat
        return client

    steps_make_llm = steps.make_llm
    monkeypatch.setattr(steps, "make_llm", refusing)
    with pytest.raises(Refused, match="HTTP 401"):
        _verify(tmp_path, d, "http://127.0.0.1:9/v1")
    with pytest.raises(Refused, match="HTTP 401"):
        _decompose(tmp_path, d, "http://127.0.0.1:9/v1")


# -- 3. the key's value never written ------------------------------------------------------------------------


def test_a_key_echoed_by_the_server_reaches_no_file_report_log_or_error(tmp_path, monkeypatch, caplog):
    monkeypatch.setenv("MEDFC_TEST_LLM_KEY", KEY)
    d = _bench(tmp_path)
    echo = (500, {"error": {"message": f"Incorrect API key provided: {KEY}. You can find your key at example.org"}})
    fail = lambda body: echo if "cures" in json.dumps(body) else None  # noqa: E731
    with FlakyOpenAI(scripted, fail=fail) as server, caplog.at_level(logging.DEBUG):
        with pytest.raises(LLMCallsFailed, match="Incorrect API key provided") as raised:
            _verify(tmp_path, d, server.base_url, api_key_env="MEDFC_TEST_LLM_KEY")
        assert KEY not in str(raised.value) and "Incorrect API key provided: ***" in str(raised.value)
        info, out = _verify(tmp_path, d, server.base_url, api_key_env="MEDFC_TEST_LLM_KEY", max_failed_share=1.0)
        dec, _ = _decompose(tmp_path, d, server.base_url, "atoms", api_key_env="MEDFC_TEST_LLM_KEY", max_failed_share=1.0)
    assert info["failed"] == 1 and dec["failed"] == 1 and server.failed == 3  # the failed unit is asked again by the rerun
    [rec] = [r for r in read_jsonl(out["verdicts"]) if r["failed"]]
    assert "Incorrect API key provided: ***" in rec["error"]
    assert KEY not in _text(tmp_path) and KEY not in caplog.text


def test_a_retrieval_verdict_entry_of_the_wrong_shape_is_a_damaged_miss(tmp_path):
    from medfc.common.jsoncache import UnitCache
    from medfc.medsnip.verify import _rag_entry

    cache = UnitCache(tmp_path / "c")
    good = {"verdict": "TRUE", "confidence": 0.9, "abstained": False, "cap_hit": False, "forced_final": False, "malformed": False,
            "rounds": 2, "evidence": [], "usage": {"calls": 2, "prompt_tokens": 5, "completion_tokens": 3}}
    for n, value in enumerate([{}, {**good, "failed": True}, {**good, "verdict": "maybe"}, [good], good]):
        cache.put(f"{n:02d}" * 32, value)
    assert [cache.get(f"{n:02d}" * 32, _rag_entry) for n in range(5)] == [None, None, None, None, good]
    assert cache.stats == {"damaged": 4, "misses": 4, "hits": 1}
