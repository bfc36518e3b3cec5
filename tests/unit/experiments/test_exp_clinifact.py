from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import numpy as np
import pandas as pd
import pytest
from transformers import AutoTokenizer

from medfc.common.report import SkipReport
from medfc.experiments import pairs as CF
from medfc.experiments import pairs as CD
from medfc.experiments.clinifact import prompts as CP
from medfc.experiments.clinifact import zero_shot as ZS
from medfc.experiments.models.options import CLINIFACT_PAIRS, PairsTrainOptions, ZeroShotOptions
from medfc.llm.local import TransformersLM
from tests.helpers.config import section
from tests.helpers.http_servers import reply_json


def zero_shot_options(tmp_path, **kw) -> ZeroShotOptions:
    """experiments.clinifact.zero_shot as the rule passes it (schema defaults + model + cache_dir)."""
    return ZeroShotOptions.from_mapping(section("experiments.clinifact.zero_shot", **{"cache_dir": str(tmp_path / "completions"), **kw}))


def test_load_pairs_maps_codes_and_skips_bad_rows(clinifact_data, tmp_path):
    pairs = CD.load_pairs(clinifact_data["train"])
    assert [p.label for p in pairs[:3]] == ["evidence", "inconclusive", "NEI"]  # codes 1, 0, 2
    assert pairs[0].id == "1000" and pairs[0].title.startswith("a randomized trial")
    df = pd.read_csv(clinifact_data["test"], dtype=str, keep_default_na=False)
    rows = pd.concat([df.iloc[[0, 0, 1, 2]]])
    rows.iloc[2, rows.columns.get_loc("label")] = "7"
    rows.iloc[3, rows.columns.get_loc("article_abstract")] = " "
    bad = tmp_path / "bad.csv"
    rows.to_csv(bad, index=False)
    report = SkipReport("t")
    assert len(CD.load_pairs(bad, report)) == 1
    assert report.reasons() == {"duplicate_id": 1, "missing_abstract": 1, "unknown_label": 1}


def test_discriminative_trims_abstract_start_and_predicts_test(clinifact_data, train_cfg, tmp_path):
    options = PairsTrainOptions(CLINIFACT_PAIRS, train_cfg.replace(epochs=2), include_title=True, predict_splits=("test",), checkpoint_dir=str(tmp_path / "ck"))
    records, info = CF.run_discriminative(clinifact_data, options)
    test = CD.load_pairs(clinifact_data["test"])
    assert [r["id"] for r in records] == [p.id for p in test]
    assert {r["split"] for r in records} == {"test"}
    for r, p in zip(records, test):
        assert r["label"] == p.label and list(r["probs"]) == CF.CLINIFACT_LABELS
        assert r["pred_label"] == max(r["probs"], key=r["probs"].get)
    assert info["encode"]["truncated"] > 0  # long abstracts at max_length 64
    assert [h["epoch"] for h in info["train"]["history"]] == [0, 1]
    assert (tmp_path / "ck" / "best" / "model.safetensors").exists()
    assert info["sizes"] == {"train": 12, "validation": 6, "test": 6}


def test_clinifact_example_keeps_title_and_abstract_end(clinifact_data, tiny_bert):
    from medfc.experiments.models.encoder import make_features

    tok = AutoTokenizer.from_pretrained(tiny_bert)
    pair = max(CD.load_pairs(clinifact_data["train"]), key=lambda p: len(p.abstract))
    feat = make_features(tok, [CD.pair_example(pair)], CF.CLINIFACT_LABELS, 64, trim="left")[0]
    text = tok.decode(feat["input_ids"], skip_special_tokens=True).replace(" .", ".").replace(" :", ":")
    assert len(feat["input_ids"]) == 64
    assert "a randomized trial of exercise in patients with blood pressure" in text
    assert text.endswith("conclusions: the result was significant.") and "background" not in text


def test_fit_prompt_trims_abstract_from_its_start(clinifact_data, tiny_gpt2):
    tok = AutoTokenizer.from_pretrained(tiny_gpt2)
    pair = max(CD.load_pairs(clinifact_data["train"]), key=lambda p: len(p.abstract))
    prompt, cut = CP.fit_prompt(pair, tok, 150)
    assert cut and len(tok(prompt)["input_ids"]) <= 150
    assert pair.claim in prompt and prompt.endswith(CP.PROMPT.split("{abstract}")[1].format())
    assert "CONCLUSIONS: the result was significant." in prompt and "BACKGROUND" not in prompt
    short, cut2 = CP.fit_prompt(pair, tok, 100000)
    assert not cut2 and short == CP.build_prompt(pair)


def test_zero_shot_local_scores_the_three_options(clinifact_data, tiny_gpt2, tmp_path):
    records, info = ZS.run_zero_shot(clinifact_data, zero_shot_options(tmp_path, model=str(tiny_gpt2), device="cpu", max_prompt_tokens=300,
                                                                        splits=["validation", "test"]))
    assert [r["split"] for r in records] == ["validation"] * 6 + ["test"] * 6
    assert info["options"] == {"TRUE": "evidence", "FALSE": "inconclusive", "NONE": "NEI"}
    scorer = TransformersLM(str(tiny_gpt2), device="cpu")
    tok = scorer.tokenizer
    pair = CD.load_pairs(clinifact_data["test"])[0]
    prompt, _ = CP.fit_prompt(pair, tok, 292)
    import torch

    with torch.no_grad():
        logits = scorer.model(input_ids=torch.tensor([tok(prompt)["input_ids"]])).logits[0, -1]
    ids = [tok.convert_tokens_to_ids(t) for t in ("TRUE", "FALSE", "NONE")]
    expected = torch.softmax(logits[ids], -1).numpy()
    rec = next(r for r in records if r["split"] == "test" and r["id"] == pair.id)
    assert [rec["probs"][k] for k in CF.CLINIFACT_LABELS] == pytest.approx(expected.tolist(), abs=1e-5)


def test_local_scorer_sums_multi_token_options(tiny_gpt2):
    import torch

    scorer = TransformersLM(str(tiny_gpt2), device="cpu")
    tok = scorer.tokenizer
    prompt = "Claim : the result was significant . Answer"
    out = scorer.score_options([prompt], ["TRUE", "FALSE NONE"])
    ids = tok(prompt)["input_ids"]
    t, f, n = (tok.convert_tokens_to_ids(x) for x in ("TRUE", "FALSE", "NONE"))
    with torch.no_grad():
        lp = torch.log_softmax(scorer.model(input_ids=torch.tensor([ids + [f, n]])).logits[0], -1)
    assert out[0, 0] == pytest.approx(lp[len(ids) - 1, t].item(), abs=1e-5)
    assert out[0, 1] == pytest.approx((lp[len(ids) - 1, f] + lp[len(ids), n]).item(), abs=1e-5)


class _Completions(BaseHTTPRequestHandler):
    bodies: list = []
    top = {" TRUE": -2.0, "TRUE": -2.5, " FALSE": -0.5, " the": -0.1}

    def do_POST(self):  # noqa: N802
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        type(self).bodies.append((self.path, body, self.headers.get("Authorization")))
        top = dict(type(self).top) if "BACKGROUND" in body["prompt"] else {" x": -0.1}
        reply_json(self, {"choices": [{"text": " FALSE", "logprobs": {"tokens": [" FALSE"], "token_logprobs": [-0.5], "top_logprobs": [top]}}]})

    def log_message(self, *args):
        pass


@pytest.fixture()
def completions_server():
    _Completions.bodies = []
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Completions)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/v1", _Completions.bodies
    server.shutdown()
    server.server_close()


def test_openai_backend_parses_logprobs_and_caches(clinifact_data, completions_server, tmp_path, monkeypatch):
    url, bodies = completions_server
    monkeypatch.setenv("MEDFC_TEST_KEY", "k123")
    opts = zero_shot_options(tmp_path, backend="openai", model="served-llm", base_url=url, api_key_env="MEDFC_TEST_KEY",
                             cache_dir=str(tmp_path / "cache"))
    records, info = ZS.run_zero_shot(clinifact_data, opts)
    assert len(records) == 6 and info["requests_sent"] == 6 and info["cache_hits"] == 0
    path, body, auth = bodies[0]
    assert path == "/v1/completions" and auth == "Bearer k123"
    assert body["model"] == "served-llm" and body["max_tokens"] == 1 and body["temperature"] == 0 and body["logprobs"] == 20
    assert "Claim: intervention is superior to placebo" in body["prompt"] and body["prompt"].endswith("Answer (TRUE, FALSE or NONE):")
    r = records[0]
    # TRUE = logsumexp(-2.0, -2.5), FALSE = -0.5, NONE absent (-inf)
    t = np.logaddexp(-2.0, -2.5)
    expected = np.exp([t, -0.5]) / np.exp([t, -0.5]).sum()
    assert [r["probs"]["evidence"], r["probs"]["inconclusive"], r["probs"]["NEI"]] == pytest.approx([*expected, 0.0], abs=1e-6)
    assert r["pred_label"] == "inconclusive"
    again, info2 = ZS.run_zero_shot(clinifact_data, opts)
    assert again == records and info2["requests_sent"] == 0 and info2["cache_hits"] == 6 and len(bodies) == 6


def test_openai_backend_without_any_option_gives_no_prediction(clinifact_data, completions_server, tmp_path):
    url, _ = completions_server
    _Completions.top, saved = {" maybe": -0.1}, _Completions.top
    try:
        records, info = ZS.run_zero_shot(clinifact_data, zero_shot_options(tmp_path, backend="openai", model="m", base_url=url, api_key_env=""))
    finally:
        _Completions.top = saved
    assert info["n_no_option"] == 6 and all(r["pred_label"] is None for r in records)
