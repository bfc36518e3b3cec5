from __future__ import annotations

import math

import pytest
import torch
from transformers import AutoModel, AutoTokenizer

from medfc.experiments.healthfc.joint import (
    JointCollator,
    JointModel,
    build_windows,
    joint_features,
    joint_loss,
    pool_weights,
    sentence_attention_pool,
)


def test_sentence_attention_pool_known_numbers():
    # one window, 6 tokens: [CLS] claim | s0 s0 | s1 | pad ; hidden size 2
    hidden = torch.tensor([[[9.0, 9.0], [9.0, 9.0], [1.0, 0.0], [3.0, 2.0], [0.0, 5.0], [7.0, 7.0]]])
    sent_ids = torch.tensor([[-1, -1, 0, 0, 1, -1]])
    scores = torch.tensor([[0.0, 0.0, 0.0, math.log(3.0), 4.0, 0.0]])
    vec, valid = sentence_attention_pool(hidden, sent_ids, scores, n_sentences=3)
    # sentence 0: weights softmax(0, log 3) = (1/4, 3/4) -> (0.25*1 + 0.75*3, 0.25*0 + 0.75*2)
    assert vec[0, 0].tolist() == pytest.approx([2.5, 1.5])
    assert vec[0, 1].tolist() == pytest.approx([0.0, 5.0])  # a single token gets weight 1
    assert vec[0, 2].tolist() == [0.0, 0.0]  # an empty slot is a zero vector, not NaN
    assert valid.tolist() == [[True, True, False]]


def test_joint_loss_known_numbers():
    ev_logits = torch.tensor([[0.0, 0.0, 5.0]])
    ev_labels = torch.tensor([[1.0, 0.0, -1.0]])  # the third slot is padding
    label_logits = torch.zeros(1, 3)
    out = joint_loss(ev_logits, ev_labels, label_logits, torch.tensor([2]), evidence_weight=6.0)
    assert out["evidence_loss"].item() == pytest.approx(math.log(2))
    assert out["label_loss"].item() == pytest.approx(math.log(3))
    assert out["loss"].item() == pytest.approx(6 * math.log(2) + math.log(3))
    out1 = joint_loss(ev_logits, ev_labels, label_logits, torch.tensor([2]), evidence_weight=1.0)
    assert out1["loss"].item() == pytest.approx(math.log(2) + math.log(3))


def test_pool_weights_gold_selected_and_soft_fallback():
    probs = torch.tensor([[0.9, 0.2, 0.7], [0.3, 0.1, 0.0]])
    valid = torch.tensor([[1.0, 1.0, 1.0], [1.0, 1.0, 0.0]])
    owner = torch.tensor([0, 1])
    w = pool_weights(probs, valid, owner, 2, threshold=0.5)
    assert w[0].tolist() == pytest.approx([0.9, 0.0, 0.7])  # selected sentences weighted by probability
    assert w[1].tolist() == pytest.approx([0.3, 0.1, 0.0])  # nothing over 0.5: soft weights
    gold = torch.tensor([[0.0, 1.0, 0.0], [0.0, 0.0, -1.0]]).clamp(min=0)
    w = pool_weights(probs, valid, owner, 2, threshold=0.5, gold=gold)
    assert w[0].tolist() == [0.0, 1.0, 0.0]  # teacher forcing with the gold mask
    assert w[1].tolist() == pytest.approx([0.3, 0.1, 0.0])  # no gold sentence: soft weights
    # windows of one claim share the decision: claim 0 has a selected sentence in its 2nd window
    w = pool_weights(torch.tensor([[0.3], [0.8]]), torch.ones(2, 1), torch.tensor([0, 0]), 1, threshold=0.5)
    assert w[:, 0].tolist() == pytest.approx([0.0, 0.8])


def test_windows_cover_every_sentence_once_within_max_length(tiny_bert):
    tok = AutoTokenizer.from_pretrained(tiny_bert)
    claim = "does coffee help against colds?"
    sentences = [f"the study lasted {w} weeks." for w in ["two"] * 30] + ["", "more research is needed."]
    windows = build_windows(tok, claim, sentences, max_length=40)
    assert len(windows) > 3
    prefix = [tok.cls_token_id, *tok(claim, add_special_tokens=False)["input_ids"], tok.sep_token_id]
    assert [g for w in windows for g in w["sentences"]] == list(range(len(sentences)))
    for w in windows:
        assert len(w["input_ids"]) <= 40
        assert w["input_ids"][: len(prefix)] == prefix
        assert w["input_ids"][-1] == tok.sep_token_id
        assert sorted(set(w["sent_ids"]) - {-1}) == list(range(len(w["sentences"])))
    # the empty sentence still owns its closing [SEP]
    owner = next(w for w in windows if 30 in w["sentences"])
    slot = owner["sentences"].index(30)
    assert [t for t, s in zip(owner["input_ids"], owner["sent_ids"]) if s == slot] == [tok.sep_token_id]


def test_joint_model_forward_over_windows(tiny_bert):
    tok = AutoTokenizer.from_pretrained(tiny_bert)
    torch.manual_seed(0)
    model = JointModel(AutoModel.from_pretrained(tiny_bert), 3, evidence_weight=6.0, threshold=0.5, pool="gold").eval()
    long_doc = ["the study lasted two weeks."] * 12
    feats = [
        joint_features(tok, "does zinc shorten colds?", long_doc, [1, 10], 0, 30),
        joint_features(tok, "does coffee help against colds?", ["side effects were rare."], [0], 2, 30),
    ]
    assert len(feats[0]["windows"]) > 1 and len(feats[1]["windows"]) == 1
    batch = JointCollator(tok.pad_token_id)(feats)
    assert batch["window_claim"].tolist() == [0] * len(feats[0]["windows"]) + [1]
    assert (batch["evidence_labels"] == 1).sum().item() == 3
    out = model(**batch)
    assert out["label_logits"].shape == (2, 3)
    assert out["loss"].item() == pytest.approx(
        joint_loss(out["evidence_logits"], batch["evidence_labels"], out["label_logits"], batch["labels"], 6.0)["loss"].item()
    )
    # windowing changes nothing for a claim that fits one window: same logits alone or in a batch
    alone = model(**JointCollator(tok.pad_token_id)([feats[1]]))
    assert torch.allclose(alone["label_logits"][0], out["label_logits"][1], atol=1e-5)
