"""The translation memory survives a kill -9 at any moment: a torn last line — one that ends inside a multi-byte
character included — is skipped and counted, the next record appended after it is a whole line of its own, and a
translation killed midway keeps every finished batch."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from medfc.healthfc.tm import TranslationMemory
from medfc.healthfc.translate import translate_with_memory
from tests.helpers.killed_translation import ReverseTranslator, sentences

REPO = Path(__file__).resolve().parents[3]


def _rec(source: str, target: str) -> str:
    return json.dumps({"model": "m", "source": source, "target": target, "origin": "model", "timestamp": ""},
                      ensure_ascii=False, sort_keys=True)


def test_a_torn_line_ending_inside_a_multibyte_character_is_skipped_and_counted(tmp_path):
    store = tmp_path / "tm.jsonl"
    whole = _rec("Übelkeit ist häufig.", "Nausea is common.")
    torn = _rec("Über Ärzte.", "About doctors.").encode("utf-8")
    cut = torn[: torn.index("Ü".encode("utf-8")) + 1]  # the first byte of the two of "Ü"
    store.write_bytes(whole.encode("utf-8") + b"\n" + cut)
    mem = TranslationMemory(store)
    assert mem.get("m", "Übelkeit ist häufig.") == "Nausea is common."
    assert mem.skipped_lines == 1 and len(mem) == 1


def test_the_record_appended_after_a_torn_line_is_not_glued_to_it(tmp_path):
    store = tmp_path / "tm.jsonl"
    torn = _rec("Über Ärzte.", "About doctors.").encode("utf-8")
    store.write_bytes(_rec("Eins.", "One.").encode("utf-8") + b"\n" + torn[: torn.index("Ü".encode("utf-8")) + 1])
    TranslationMemory(store).put_many("m", [("Zwei.", "Two.")])
    reloaded = TranslationMemory(store)
    assert reloaded.get("m", "Eins.") == "One." and reloaded.get("m", "Zwei.") == "Two."
    assert reloaded.skipped_lines == 1  # only the torn line is lost
    assert store.read_bytes().endswith(b"\n") and store.read_bytes().count(b"\n") == 3


# ------------------------------------------------------------------ a translation killed with SIGKILL

N_SENTENCES = 3000
BATCH = 64
N_BATCHES = -(-N_SENTENCES // BATCH)  # 47


def _run_child(tmp_path, store, texts_file, out, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO / "src"), str(REPO), os.environ.get("PYTHONPATH", "")])}
    return subprocess.run([sys.executable, "-m", "tests.helpers.killed_translation", str(store), str(texts_file), str(out),
                           "--batch-size", str(BATCH), *args], cwd=REPO, env=env, capture_output=True, text=True, timeout=120)


@pytest.fixture(scope="module")
def texts(tmp_path_factory):
    """3,000 sentences (as a portal's few dozen articles have) and their uninterrupted translation."""
    sents = sentences(N_SENTENCES, seed=28)
    path = tmp_path_factory.mktemp("texts") / "texts.json"
    path.write_text(json.dumps(sents, ensure_ascii=False), encoding="utf-8")
    reference, stats = translate_with_memory(sents, ReverseTranslator, TranslationMemory(None), None, ReverseTranslator.name)
    assert stats["n_model"] == N_SENTENCES
    return path, reference


@pytest.mark.parametrize("kill", ["batch", "write"])
def test_a_translation_killed_midway_keeps_its_finished_batches_and_resumes_to_the_same_output(tmp_path, texts, kill):
    """SIGKILL at a seeded batch (``batch``: while the model translates it; ``write``: halfway through the
    memory's append of it, a torn last line): every batch before it is in the memory, the rerun sends the
    model only what is missing — at most one batch more than the kill point — and ends with exactly the
    translations of an uninterrupted run; a second rerun sends nothing."""
    texts_file, reference = texts
    at = random.Random(f"issue-28-{kill}").randrange(3, N_BATCHES - 3)
    store, out = tmp_path / "cache" / "translation_memory.jsonl", tmp_path / "out.json"
    killed = _run_child(tmp_path, store, texts_file, out, "--kill", kill, "--at", str(at))
    assert killed.returncode == -signal.SIGKILL, killed.stderr[-2000:]
    assert not out.exists()

    kept = TranslationMemory(store)
    assert kept.skipped_lines == (1 if kill == "write" else 0)
    if kill == "batch":
        assert len(kept) == at * BATCH  # every finished batch, nothing of the one being translated
    else:  # the torn batch keeps the whole lines written before the cut, never more
        assert at * BATCH <= len(kept) < (at + 1) * BATCH

    resumed = _run_child(tmp_path, store, texts_file, out)
    assert resumed.returncode == 0, resumed.stderr[-2000:]
    result = json.loads(out.read_text(encoding="utf-8"))
    assert result["translations"] == reference
    retranslated = result["stats"]["n_model"]
    assert retranslated == N_SENTENCES - len(kept)
    assert N_SENTENCES - (at + 1) * BATCH <= retranslated <= N_SENTENCES - at * BATCH  # at most one batch lost
    assert result["stats"]["n_memory_hits"] == len(kept)

    def must_not_load():
        raise AssertionError("the model was created although every sentence is in the memory")

    again, stats = translate_with_memory(json.loads(texts_file.read_text(encoding="utf-8")), must_not_load,
                                         TranslationMemory(store), None, ReverseTranslator.name)
    assert again == reference and stats["n_model"] == 0 and stats["n_memory_hits"] == N_SENTENCES
