from __future__ import annotations

import pytest
from transformers import AutoTokenizer

from medfc.experiments.models.encoder import encode_pair

ABSTRACT = " ".join(f"{w}" for w in ["background", "the", "study", "lasted", "two", "weeks", "."] * 20) + " conclusions the result was significant ."


@pytest.fixture(scope="module")
def tok(tiny_bert):
    return AutoTokenizer.from_pretrained(tiny_bert)


def test_left_trim_keeps_the_end_of_the_second_text(tok):
    feat, cut = encode_pair(tok, "does zinc shorten colds?", ABSTRACT, max_length=32, trim="left")
    ids = feat["input_ids"]
    assert cut and len(ids) == 32
    text = tok.decode(ids, skip_special_tokens=True)
    assert text.startswith("does zinc shorten colds?") or text.startswith("does zinc shorten colds ?")
    assert text.replace(" .", ".").endswith("conclusions the result was significant.")
    assert ids[0] == tok.cls_token_id and ids[-1] == tok.sep_token_id
    assert feat["token_type_ids"].count(0) == len(tok("does zinc shorten colds?")["input_ids"])


def test_right_trim_keeps_the_start(tok):
    feat, cut = encode_pair(tok, "does zinc shorten colds?", ABSTRACT, max_length=32, trim="right")
    text = tok.decode(feat["input_ids"], skip_special_tokens=True)
    assert cut and "conclusions" not in text and "background the study" in text


def test_prefix_is_kept_and_abstract_start_trimmed(tok):
    feat, cut = encode_pair(tok, "claim", ABSTRACT, max_length=40, trim="left", b_prefix="a randomized trial")
    text = tok.decode(feat["input_ids"], skip_special_tokens=True)
    assert cut and len(feat["input_ids"]) == 40
    assert "claim a randomized trial" in text
    assert text.replace(" .", ".").endswith("the result was significant.")


def test_short_inputs_are_untouched(tok):
    feat, cut = encode_pair(tok, "does zinc shorten colds?", "more research is needed.", max_length=64)
    assert not cut
    assert feat["input_ids"] == tok("does zinc shorten colds?", "more research is needed.")["input_ids"]
    feat, cut = encode_pair(tok, "does zinc shorten colds?", None, max_length=64)
    assert feat["input_ids"] == tok("does zinc shorten colds?")["input_ids"]
