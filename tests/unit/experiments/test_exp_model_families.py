"""The tiny models of config/paper.yaml's families (tests/helpers/tiny_models.py), each in its hub
repository's file layout, load through the project's own code path (load_tokenizer, load_classifier,
JointModel, TransformersLM) with their real tokenizer types, and tokenize German and English."""

from __future__ import annotations

import functools

import numpy as np
import pytest
import torch
from transformers import AutoModel

from medfc.experiments.models.encoder import encode_pair, load_classifier, load_tokenizer
from medfc.experiments.healthfc.joint import JointCollator, JointModel, joint_features
from medfc.llm.base import GenerationParams
from medfc.llm.local import TransformersLM
from tests.helpers import tiny_models as tm

DE = "Die Teilnehmenden bekamen ein Placebo, das Risiko sinkt um ca. 40 Prozent."
EN = "Coffee may protect against diabetes; the evidence is contradictory."
# family → (builder, tokenizer class, files the hub repository ships, whether the inputs carry token types)
ENCODERS = {
    "deberta-v3": (tm.build_tiny_deberta_v2, "DebertaV2Tokenizer", {"spm.model", "tokenizer_config.json"}, True),
    "bert": (tm.build_tiny_bert_family, "BertTokenizer", {"tokenizer.json", "tokenizer_config.json"}, True),
    "biobert": (functools.partial(tm.build_tiny_bert_family, vocab_txt_only=True), "BertTokenizer", {"vocab.txt"}, True),
    "roberta": (tm.build_tiny_roberta, "RobertaTokenizer", {"vocab.json", "merges.txt", "tokenizer.json", "tokenizer_config.json"}, False),
    "xlm-r": (tm.build_tiny_xlm_roberta, "XLMRobertaTokenizer", {"sentencepiece.bpe.model", "tokenizer.json", "tokenizer_config.json"}, False),
}


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    root = tmp_path_factory.mktemp("families")
    return {name: build(root / name) for name, (build, *_) in ENCODERS.items()} | {"llama3": tm.build_tiny_llama(root / "llama3")}


@pytest.mark.parametrize("family", list(ENCODERS))
def test_encoder_loads_with_its_tokenizer_type_and_classifies_a_pair(models, family):
    _, tok_class, files, typed = ENCODERS[family]
    path = models[family]
    assert {p.name for p in path.iterdir()} == files | {"config.json", "model.safetensors"}
    tok = load_tokenizer(path)
    assert type(tok).__name__ == tok_class
    for text in (DE, EN):
        ids = tok(text, add_special_tokens=False)["input_ids"]
        assert len(ids) > 5 and tok.unk_token_id not in ids, (text, tok.convert_ids_to_tokens(ids))
    feat, cut = encode_pair(tok, EN, DE, max_length=128)
    assert not cut and feat["input_ids"][0] == tok.cls_token_id and feat["input_ids"][-1] == tok.sep_token_id
    assert ("token_type_ids" in feat) == typed
    model = load_classifier(path, ["SUPPORTED", "REFUTED", "NEI"]).eval()
    assert model.config.hidden_size == 32 and model.config.num_hidden_layers == 2 and len(tok) <= 1000
    with torch.no_grad():
        logits = model(**{k: torch.tensor([v]) for k, v in feat.items()}).logits
    assert logits.shape == (1, 3) and torch.isfinite(logits).all()


@pytest.mark.parametrize("family", list(ENCODERS))
def test_encoder_runs_the_joint_system(models, family):
    path = models[family]
    tok = load_tokenizer(path)
    model = JointModel(AutoModel.from_pretrained(path), 3, evidence_weight=6.0, threshold=0.5, pool="gold").eval()
    with_types = "token_type_ids" in tok.model_input_names and getattr(model.encoder.config, "type_vocab_size", 1) >= 2
    feats = [joint_features(tok, EN, [DE, EN, "Mehr Forschung ist nötig."], [1], 0, 32, with_types=with_types),
             joint_features(tok, DE, [EN], [], 2, 32, with_types=with_types)]
    with torch.no_grad():
        out = model(**{k: v for k, v in JointCollator(tok.pad_token_id).__call__(feats).items()})
    assert out["label_logits"].shape == (2, 3) and torch.isfinite(out["loss"])


def test_llama_has_the_chat_template_no_pad_token_and_batches_like_one_by_one(models):
    path = models["llama3"]
    batched = TransformersLM(str(path), device="cpu", batch_size=2)
    single = TransformersLM(str(path), device="cpu", batch_size=1)
    tok = batched.tokenizer
    assert type(tok).__name__ == "TokenizersBackend" and tok.pad_token is None and batched.pad_id == tok.eos_token_id
    assert batched.render([{"role": "user", "content": "Hi"}]) == (
        "<|begin_of_text|><|start_header_id|>user<|end_header_id|>\n\nHi<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\n")
    assert tok(EN)["input_ids"][0] == tok.bos_token_id and tok.unk_token_id is None
    assert len(batched.option_ids("Answer:", "FALSE")) > 1  # options are scored over several tokens
    convs = [[{"role": "user", "content": EN + " " + DE}], [{"role": "user", "content": "Hi"}]]
    params = GenerationParams(max_tokens=6, temperature=0.0, json_mode=False)
    # left padding: the short prompt generates the same tokens in a batch as alone
    assert [c.text for c in batched.chat(convs, params)] == [c.text for c in single.chat(convs, params)]
    prompts = ["Claim: " + EN + " Answer:", "Hi. Answer:"]
    np.testing.assert_allclose(batched.score_options(prompts, ["TRUE", "FALSE", "NONE"], 2),
                               single.score_options(prompts, ["TRUE", "FALSE", "NONE"], 1), atol=1e-4)
