"""The OpenAI-compatible client on a bad day, against the local fake server (tests/helpers/fake_openai.py):
every answer goes through one check (error objects sent with HTTP 200, missing or empty ``choices``, no
``message``, null or non-string content, missing logprobs, another model), the passing faults are retried and
none is ever cached; a refused request (400/401/403/404) stops at once with :class:`LLMEndpointError` naming
the endpoint, the status, the model and the key's variable, never the key; the CliniFact zero-shot scorer
fails naming the server instead of a KeyError."""

from __future__ import annotations

import logging
import socket
import time

import pytest

from tests.helpers.clock import FakeClock
from tests.helpers.config import section
from tests.helpers.experiment_data import clinifact_data  # noqa: F401  (fixture)
from tests.helpers.fake_openai import FakeOpenAI

from medfc.common.http import HttpClient, HttpError
from medfc.experiments.clinifact import zero_shot as ZS  # imports transformers: here, not in the first test's time
from medfc.experiments.models.options import ZeroShotOptions
from medfc.llm.base import GenerationParams
from medfc.llm.base import LLMEndpointError
from medfc.llm.openai import OpenAICompatibleLM, same_model

PARAMS = GenerationParams(max_tokens=64, temperature=0.0, json_mode=True)
KEY_ENV = "MEDFC_TEST_BAD_DAY_KEY"
KEY = "sk-test-abc123xyz"


def _client(server_url: str, tmp_path, clk: FakeClock, model: str = "served-llm", max_retries: int = 2) -> OpenAICompatibleLM:
    http = HttpClient(cache_dir=tmp_path / "http", rate=1000.0, clock=clk, sleep=clk.sleep, max_retries=max_retries, backoff=1.0)
    return OpenAICompatibleLM(server_url, model, api_key_env=KEY_ENV, http=http)


def _ask(text: str) -> list[dict[str, str]]:
    return [{"role": "user", "content": text}]


def _cache_files(tmp_path) -> list:
    return sorted((tmp_path / "http").rglob("*.json")) if (tmp_path / "http").exists() else []


@pytest.fixture(autouse=True)
def _key(monkeypatch):
    monkeypatch.setenv(KEY_ENV, KEY)


@pytest.mark.parametrize("fault, said", [
    ("error_with_200", "error object: Provider returned error"),
    ("no_choices", "no choices"),
    ("empty_choices", "no choices"),
    ("no_message", "no message"),
    ("null_content", "content null"),
])
def test_a_non_answer_is_retried_never_cached_and_the_healthy_rerun_gets_the_answer(tmp_path, fault, said):
    clk = FakeClock()
    with FakeOpenAI(lambda body: '{"verdict": "TRUE"}') as server:
        server.bad_always = fault
        client = _client(server.base_url, tmp_path, clk)
        [bad] = client.chat([_ask("Is water wet?")], PARAMS, "verify")
        assert not bad.ok and said in bad.error and "after 3 attempts" in bad.error and bad.text == ""
        assert "/v1/chat/completions" in bad.error and len(server.requests) == 3  # retried: max_retries 2
        assert _cache_files(tmp_path) == []  # nothing of it cached
        assert client.ledger.as_dict()["verify"]["failed"] == 1
        # one bad answer then a good one: the retry gets it
        server.bad_always, server.bad_next = None, [fault]
        [ok] = _client(server.base_url, tmp_path, clk).chat([_ask("Is the sky blue?")], PARAMS, "verify")
        assert ok.ok and ok.text == '{"verdict": "TRUE"}' and len(server.requests) == 5
        # the server recovered: the rerun asks again (nothing was cached) and gets the answer, cached now
        rerun = _client(server.base_url, tmp_path, clk)
        [good] = rerun.chat([_ask("Is water wet?")], PARAMS, "verify")
        assert good.ok and good.text == '{"verdict": "TRUE"}' and not good.cached and len(server.requests) == 6
        [again] = _client(server.base_url, tmp_path, clk).chat([_ask("Is water wet?")], PARAMS, "verify")
        assert again.cached and again.text == good.text and len(server.requests) == 6


def test_an_empty_json_object_in_the_cache_is_a_counted_miss_asked_again(tmp_path):
    clk = FakeClock()
    with FakeOpenAI(lambda body: "TRUE") as server:
        client = _client(server.base_url, tmp_path, clk)
        client.chat([_ask("a")], PARAMS, "verify")
        [path] = _cache_files(tmp_path)
        path.write_text("{}")  # what an older version stored for an error answer
        again = _client(server.base_url, tmp_path, clk)
        [c] = again.chat([_ask("a")], PARAMS, "verify")
        assert c.ok and c.text == "TRUE" and not c.cached and len(server.requests) == 2
        assert again.http.stats["cache_damaged"] == 1
        assert '"choices"' in path.read_text()  # replaced by the answer


def test_the_answer_of_another_model_stops_at_once_and_dated_variants_pass(tmp_path):
    clk = FakeClock()
    with FakeOpenAI(lambda body: "TRUE") as server:
        server.bad_always = "wrong_model"
        client = _client(server.base_url, tmp_path, clk)
        with pytest.raises(LLMEndpointError, match="answered by model 'some-other-model'") as exc:
            client.chat([_ask("a")], PARAMS, "verify")
        assert "served-llm" in str(exc.value) and server.base_url in str(exc.value) and KEY not in str(exc.value)
        assert len(server.requests) == 1 and _cache_files(tmp_path) == []
        server.bad_always = "dated_model"
        [c] = _client(server.base_url, tmp_path, clk, model="gpt-4o").chat([_ask("a")], PARAMS, "verify")
        assert c.ok and c.text == "TRUE"
    assert same_model("gpt-4o", "gpt-4o-2024-08-06") and same_model("gpt-4", "gpt-4-0613")
    assert same_model("llama3", "llama3:latest") and same_model("Qwen/Qwen2.5-7B-Instruct", "Qwen2.5-7B-Instruct")
    assert same_model("/models/qwen", "qwen") and same_model("m", "M")
    assert not same_model("gpt-4o", "gpt-4o-mini") and not same_model("qwen2.5-7b", "qwen2.5-7b-instruct")
    assert not same_model("org-a/x", "org-b/x") and not same_model("gpt-4", "gpt-4-32k")


def test_a_non_string_content_is_an_endpoint_error(tmp_path):
    with FakeOpenAI(lambda body: "TRUE") as server:
        server.bad_always = "list_content"
        with pytest.raises(LLMEndpointError, match="content is a list"):
            _client(server.base_url, tmp_path, FakeClock()).chat([_ask("a")], PARAMS, "verify")
        assert len(server.requests) == 1 and _cache_files(tmp_path) == []


@pytest.mark.parametrize("status, body, hint", [
    (401, {"error": {"message": f"Incorrect API key provided: {KEY}", "type": "invalid_request_error", "code": "invalid_api_key"}},
     f"check the key in the environment variable {KEY_ENV}"),
    (403, {"error": {"message": "forbidden"}}, f"check the key in the environment variable {KEY_ENV}"),
    (404, {"error": {"message": "The model `served-llm` does not exist."}}, "does the server serve model 'served-llm'"),
    (400, {"object": "error", "message": "max_tokens 8000 is above the model's context length 2048", "code": 400},
     "a parameter the server refuses"),
])
def test_a_refused_request_stops_at_once_naming_url_status_model_and_variable_never_the_key(tmp_path, caplog, status, body, hint):
    clk = FakeClock()
    with FakeOpenAI(lambda b: "TRUE") as server, caplog.at_level(logging.DEBUG):
        server.fail_next = [(status, {}, body)]
        client = _client(server.base_url, tmp_path, clk)
        with pytest.raises(LLMEndpointError) as exc:
            client.chat([_ask("a"), _ask("b")], PARAMS, "verify")
        err = exc.value
        assert (err.status, err.model, err.api_key_env) == (status, "served-llm", KEY_ENV)
        text = str(err)
        assert f"HTTP {status}" in text and server.base_url + "/chat/completions" in text and hint in text and KEY_ENV in text
        assert len(server.requests) == 1 and clk.sleeps == [] and _cache_files(tmp_path) == []  # not retried, nothing cached
    assert KEY not in text and KEY not in caplog.text
    if status == 401:
        assert "Incorrect API key provided: ***" in text


def test_an_error_naming_a_refused_key_with_http_200_stops_at_once(tmp_path):
    with FakeOpenAI(lambda b: "TRUE") as server:
        server.bad_always = "error_401_with_200"
        with pytest.raises(LLMEndpointError, match=f"HTTP 401.*{KEY_ENV}"):
            _client(server.base_url, tmp_path, FakeClock()).chat([_ask("a")], PARAMS, "verify")
        assert len(server.requests) == 1 and _cache_files(tmp_path) == []


def test_a_truncated_answer_is_kept_and_counted(tmp_path):
    with FakeOpenAI(lambda b: '{"verdict": "TR') as server:
        server.bad_next = ["length"]
        client = _client(server.base_url, tmp_path, FakeClock())
        [cut] = client.chat([_ask("a")], PARAMS, "verify")
        [whole] = client.chat([_ask("b")], PARAMS, "verify")
    assert cut.ok and cut.truncated and cut.text == '{"verdict": "TR' and not whole.truncated
    assert client.ledger.as_dict()["verify"]["truncated"] == 1 and client.ledger.total()["truncated"] == 1


def test_a_retry_after_of_an_hour_fails_the_call_at_once_and_the_next_is_not_sent(tmp_path):
    clk = FakeClock()
    started = time.monotonic()
    with FakeOpenAI(lambda b: "TRUE") as server:
        server.fail_next = [(429, {"Retry-After": "3600"}, {"error": {"message": "rate limited"}})]
        client = _client(server.base_url, tmp_path, clk)
        first, second = client.chat([_ask("a"), _ask("b")], PARAMS, "verify")
        assert len(server.requests) == 1
    assert time.monotonic() - started < 5 and clk.sleeps == []
    assert "retry after 3600 s, at 20" in first.error and "rerun" in first.error
    assert "not sent" in second.error and "retry after" in second.error


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_a_server_that_is_down_fails_each_call_within_a_small_retry_budget(tmp_path):
    clk = FakeClock()
    started = time.monotonic()
    url = f"http://127.0.0.1:{_closed_port()}/v1"
    client = _client(url, tmp_path, clk, max_retries=6)
    outs = client.chat([_ask(str(i)) for i in range(20)], PARAMS, "verify")
    assert all(not o.ok and "server down at http://127.0.0.1" in o.error for o in outs)
    assert sum(s for s in clk.sleeps if s > 0.01) <= 30.0 and time.monotonic() - started < 5  # not 20 x (1 + 2 + 4 + ...) s


# --- option scoring (/completions with logprobs) and the CliniFact zero-shot scorer ---------------------------


def test_score_options_without_logprobs_is_an_endpoint_error_and_non_answers_name_the_server(tmp_path):
    clk = FakeClock()
    with FakeOpenAI(lambda b: "x") as server:
        server.bad_always = "no_logprobs"
        client = _client(server.base_url, tmp_path, clk)
        with pytest.raises(LLMEndpointError, match="without logprobs"):
            client.score_options(["p"], ["TRUE", "FALSE"])
        server.bad_always = "error_with_200"
        with pytest.raises(HttpError, match=r"/v1/completions: .*error object.* after 3 attempts"):
            client.score_options(["p"], ["TRUE", "FALSE"])
        assert _cache_files(tmp_path) == []
        server.bad_always = None
        scores = _client(server.base_url, tmp_path, clk).score_options(["p"], [" TRUE".strip(), "FALSE"])
        assert scores.shape == (1, 2) and len(_cache_files(tmp_path)) == 1


@pytest.mark.parametrize("fault, error, said", [
    ("error_with_200", HttpError, "error object"),
    ("empty_choices", HttpError, "no choices"),
    ("no_choices", HttpError, "no choices"),
    ("no_logprobs", LLMEndpointError, "without logprobs"),
    ("wrong_model", LLMEndpointError, "answered by model"),
])
def test_zero_shot_bad_answers_fail_naming_the_server_and_nothing_is_cached(clinifact_data, tmp_path, fault, error, said):  # noqa: F811
    with FakeOpenAI(lambda b: "x") as server:
        server.bad_always = fault
        opts = ZeroShotOptions.from_mapping(section("experiments.clinifact.zero_shot", backend="openai", model="served-llm",
                                                    base_url=server.base_url, api_key_env=KEY_ENV, max_retries=0,
                                                    cache_dir=str(tmp_path / "http"), splits=["test"]))
        started = time.monotonic()
        with pytest.raises(error, match=said) as exc:
            ZS.run_zero_shot(clinifact_data, opts)
        assert server.base_url in str(exc.value) and KEY not in str(exc.value)
        assert _cache_files(tmp_path) == [] and time.monotonic() - started < 10
        server.bad_always = None
        records, info = ZS.run_zero_shot(clinifact_data, opts)
        assert len(records) == 6 and info["requests_sent"] == 6 and len(_cache_files(tmp_path)) == 6
