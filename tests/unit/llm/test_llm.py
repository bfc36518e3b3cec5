"""The LLM layer: prompt files, JSON answers with one repair, the OpenAI-compatible backend through
the HttpClient (retries, Retry-After, cache, rate limit, key), and the local transformers backend."""

from __future__ import annotations

import json
import logging

import pytest

from tests.helpers.clock import FakeClock
from tests.helpers.fake_openai import FakeOpenAI
from tests.helpers.tiny_models import build_tiny_causal_lm

from medfc.common.http import HttpClient
from medfc.llm.base import GenerationParams
from medfc.llm.prompts import PromptError, load_prompt, prompt_hashes
from medfc.llm.structured import ask_json, parse_json_answer
from medfc.llm.base import LLMEndpointError
from medfc.llm.openai import OpenAICompatibleLM
from medfc.llm.prompts import parse_prompt

PARAMS = GenerationParams(max_tokens=64, temperature=0.0, json_mode=True)
SCHEMA = {"type": "object", "required": ["verdict"], "properties": {"verdict": {"enum": ["TRUE", "FALSE"]}}}
PROMPT_DIR = "resources/prompts"


def test_prompt_file_renders_fields_and_hashes_bytes(tmp_path):
    text = "# name: demo/ask\n# version: 3\n# a comment\n=== system ===\nSay JSON like {\"a\": 1}.\n=== user ===\nQ: {{question}} ({{ n }})\n"
    (tmp_path / "demo").mkdir()
    (tmp_path / "demo" / "ask.txt").write_text(text, encoding="utf-8")
    p = load_prompt("demo/ask", tmp_path)
    assert p.version == "3"
    assert p.render(question="why?", n=2) == [{"role": "system", "content": 'Say JSON like {"a": 1}.'},
                                             {"role": "user", "content": "Q: why? (2)"}]
    with pytest.raises(PromptError, match="field 'n'"):
        p.render(question="why?")
    before = prompt_hashes(["demo/ask"], tmp_path)["demo/ask"]
    (tmp_path / "demo" / "ask.txt").write_text(text.replace("Q:", "Question:"), encoding="utf-8")
    assert prompt_hashes(["demo/ask"], tmp_path)["demo/ask"] != before
    with pytest.raises(PromptError, match="version"):
        parse_prompt("=== user ===\nhi\n", "x")
    with pytest.raises(PromptError, match="not found"):
        load_prompt("demo/missing", tmp_path)


def test_every_shipped_prompt_loads():
    names = ["llm/json_repair", "medsnip/extract", "medsnip/cluster", "medsnip/direct", "medsnip/verify_claim_only",
             "medsnip/verify_full_context", "medsnip/rag_turn", "medsnip/rag_final", "medsnip/healthfc_statement"]
    hashes = prompt_hashes(names, PROMPT_DIR)
    assert sorted(hashes) == sorted(names) and all(len(h) == 64 for h in hashes.values())


def test_parse_json_answer_finds_the_object_and_validates():
    assert parse_json_answer('```json\n{"verdict": "TRUE"}\n```', SCHEMA) == ({"verdict": "TRUE"}, None)
    assert parse_json_answer('Sure. {"verdict": "FALSE"} Hope it helps {x', SCHEMA) == ({"verdict": "FALSE"}, None)
    value, err = parse_json_answer('{"verdict": "MAYBE"}', SCHEMA)
    assert value is None and err.startswith("schema: verdict: 'MAYBE' is not one of")
    assert parse_json_answer("no json", SCHEMA) == (None, "no JSON object in the answer")
    assert parse_json_answer("  ", SCHEMA) == (None, "empty answer")


def _client(server: FakeOpenAI, tmp_path, clk: FakeClock, rate: float = 1000.0, **kw) -> OpenAICompatibleLM:
    http = HttpClient(cache_dir=tmp_path / "http", rate=rate, clock=clk, sleep=clk.sleep, max_retries=3, backoff=1.0)
    return OpenAICompatibleLM(server.base_url, "served-llm", api_key_env="MEDFC_TEST_LLM_KEY", http=http, **kw)


def _ask(text: str) -> list[dict[str, str]]:
    return [{"role": "system", "content": "Answer in JSON."}, {"role": "user", "content": text}]


def test_openai_backend_retries_honour_retry_after_and_the_cache_keys_on_model_messages_params(tmp_path, monkeypatch, caplog):
    monkeypatch.setenv("MEDFC_TEST_LLM_KEY", "sk-secret-123")
    clk = FakeClock()
    with FakeOpenAI(lambda body: '{"verdict": "TRUE"}') as server:
        server.fail_next = [(429, {"Retry-After": "3"}), (503, {})]
        client = _client(server, tmp_path, clk)
        with caplog.at_level(logging.DEBUG):
            [c] = client.chat([_ask("Is water wet?")], PARAMS, "verify")
        assert (c.text, c.prompt_tokens, c.completion_tokens, c.cached) == ('{"verdict": "TRUE"}', 6, 2, False)
        assert clk.sleeps == [3.0, 2.0]  # Retry-After, then backoff 1.0 * 2**1
        assert client.http.stats["retries"] == 2 and len(server.requests) == 3
        path, body, auth = server.requests[-1]
        assert path == "/v1/chat/completions" and auth == "Bearer sk-secret-123"
        assert body == {"model": "served-llm", "messages": _ask("Is water wet?"), "max_tokens": 64, "temperature": 0.0,
                        "response_format": {"type": "json_object"}}
        assert "sk-secret-123" not in caplog.text
        # same model, messages and parameters: from the cache, whatever the key
        monkeypatch.setenv("MEDFC_TEST_LLM_KEY", "another-key")
        again = _client(server, tmp_path, clk, ledger=client.ledger)
        [c2] = again.chat([_ask("Is water wet?")], PARAMS, "verify")
        assert c2.cached and c2.text == c.text and len(server.requests) == 3
        for f in (tmp_path / "http").rglob("*.json"):
            assert "sk-secret" not in f.read_text() and "another-key" not in f.read_text()
        # another parameter or another model is another request
        again.chat([_ask("Is water wet?")], GenerationParams(64, 0.5, True), "verify")
        OpenAICompatibleLM(server.base_url, "other-llm", http=again.http, ledger=client.ledger).chat([_ask("Is water wet?")], PARAMS, "verify")
        assert len(server.requests) == 5
    assert client.ledger.as_dict()["verify"] == {"calls": 4, "cache_hits": 1, "failed": 0, "prompt_tokens": 24,
                                                 "completion_tokens": 8, "usage_missing": 0, "malformed": 0, "repaired": 0}


def test_openai_backend_rate_limit_and_failure_without_crash(tmp_path):
    clk = FakeClock()
    with FakeOpenAI(lambda body: "true") as server:
        client = _client(server, tmp_path, clk, rate=2.0)
        client.chat([_ask("a"), _ask("b"), _ask("c")], PARAMS, "verify")
        assert clk.sleeps == [0.5, 0.5]  # 2 requests per second, burst 1
        server.fail_next = [(500, {})] * 4
        [bad] = client.chat([_ask("d")], PARAMS, "verify")
    assert not bad.ok and "HTTP 500 after 4 attempts" in bad.error and bad.text == ""
    assert client.ledger.as_dict()["verify"]["failed"] == 1


def test_malformed_answer_repaired_once_and_one_left_unrepaired(tmp_path):
    def responder(body):
        last = body["messages"][-1]["content"]
        if last.startswith("Your previous answer could not be used"):
            return '{"verdict": "FALSE"}' if "fixable" in body["messages"][1]["content"] else "still not JSON"
        return "I think it is false."

    repair = load_prompt("llm/json_repair", PROMPT_DIR)
    with FakeOpenAI(responder) as server:
        client = _client(server, tmp_path, FakeClock())
        ok, bad = ask_json(client, [_ask("fixable claim"), _ask("hopeless claim")], SCHEMA, PARAMS, repair, "verify")
        repair_msgs = server.chat_requests()[2]["messages"]
    assert (ok.ok, ok.value, ok.repaired, len(ok.completions)) == (True, {"verdict": "FALSE"}, True, 2)
    assert (bad.ok, bad.value, bad.error, bad.raw) == (False, None, "no JSON object in the answer", "still not JSON")
    assert repair_msgs[2] == {"role": "assistant", "content": "I think it is false."}
    assert repair_msgs[3]["content"].startswith("Your previous answer could not be used: no JSON object in the answer")
    assert json.loads(repair_msgs[3]["content"].split("nothing else:\n", 1)[1]) == SCHEMA
    led = client.ledger.as_dict()
    assert (led["verify"]["calls"], led["verify"]["malformed"], led["verify"]["repaired"]) == (2, 1, 1)
    assert led["verify:repair"]["calls"] == 2 and led["total"]["calls"] == 4


@pytest.fixture(scope="module")
def tiny_chat_lm(tmp_path_factory):
    from transformers import AutoTokenizer

    path = build_tiny_causal_lm(tmp_path_factory.mktemp("llm") / "tiny-chat")
    tok = AutoTokenizer.from_pretrained(path)
    tok.chat_template = ("{% for m in messages %}<|{{ m['role'] }}|>{{ m['content'] }}\n{% endfor %}"
                         "{% if add_generation_prompt %}<|assistant|>{% endif %}")
    tok.save_pretrained(path)
    return path


def test_local_backend_chat_template_batched_greedy(tiny_chat_lm):
    import torch

    from medfc.common.tokens import token_ids
    from medfc.llm.local import TransformersLM

    lm = TransformersLM(str(tiny_chat_lm), device="cpu", batch_size=2)
    assert lm.dtype == torch.float32  # bf16 only on a GPU that supports it
    convs = [_ask("The study lasted twelve weeks."), _ask("Side effects were rare."), _ask("Exercise lowers blood pressure, says the trial.")]
    params = GenerationParams(max_tokens=6, temperature=0.0, json_mode=False)
    outs = lm.chat(convs, params, "verify")
    rendered = lm.render(convs[0])
    assert rendered == "<|system|>Answer in JSON.\n<|user|>The study lasted twelve weeks.\n<|assistant|>"
    # one at a time gives the same greedy answers as the padded batches
    single = TransformersLM(str(tiny_chat_lm), device="cpu", batch_size=1)
    assert [o.text for o in single.chat(convs, params)] == [o.text for o in outs]
    ids = token_ids(lm.tokenizer, rendered)
    with torch.no_grad():
        ref = lm.model.generate(input_ids=torch.tensor([ids]), attention_mask=torch.ones(1, len(ids), dtype=torch.long),
                                max_new_tokens=6, do_sample=False, pad_token_id=lm.pad_id)[0, len(ids):].tolist()
    if lm.tokenizer.eos_token_id in ref:
        ref = ref[: ref.index(lm.tokenizer.eos_token_id) + 1]
    assert outs[0].text == lm.tokenizer.decode(ref, skip_special_tokens=True)
    assert (outs[0].prompt_tokens, outs[0].completion_tokens) == (len(ids), len(ref))
    led = lm.ledger.as_dict()["verify"]
    assert led["calls"] == 3 and led["prompt_tokens"] == sum(o.prompt_tokens for o in outs)


def test_openai_backend_failure_text_holds_no_key_or_password(tmp_path, monkeypatch, caplog):
    monkeypatch.setenv("MEDFC_TEST_LLM_KEY", "sk-secret-456")
    clk = FakeClock()
    with FakeOpenAI(lambda body: "true") as server, caplog.at_level(logging.DEBUG):
        server.fail_next = [(400, {}), (503, {}), (503, {})]
        http = HttpClient(cache_dir=tmp_path / "http", rate=1000.0, clock=clk, sleep=clk.sleep, max_retries=1, backoff=1.0)
        base = server.base_url.replace("http://", "http://me:pw-secret-789@")
        client = OpenAICompatibleLM(base, "served-llm", api_key_env="MEDFC_TEST_LLM_KEY", http=http)
        with pytest.raises(LLMEndpointError) as refused:  # a 400 stops the step: no retry, never an answer
            client.chat([_ask("a")], PARAMS, "verify")
        (worse,) = client.chat([_ask("b")], PARAMS, "verify")
    bad = str(refused.value)
    assert "http://***@127.0.0.1:" in bad and "HTTP 400" in bad and "MEDFC_TEST_LLM_KEY" in bad
    assert "HTTP 503 after 2 attempts" in worse.error
    for text in (bad, worse.error, caplog.text):
        assert "pw-secret-789" not in text and "sk-secret-456" not in text
