"""DE→EN translation through the translation memory, with a tiny Marian model built in the test."""

from __future__ import annotations

import json
import sys
import threading
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))  # repo root, for tests.helpers

from medfc.healthfc.sentences import split_paragraphs  # noqa: E402
from medfc.healthfc.tm import Corrections, TranslationMemory  # noqa: E402
from medfc.healthfc.translate import (  # noqa: E402
    DeepLError,
    DeepLTranslator,
    MarianTranslator,
    ModelUnavailableError,
    TranslationUnavailableError,
    Translator,
    translate_with_memory,
)
from tests.helpers.http_servers import reply_json  # noqa: E402
from tests.helpers.tiny_models import (  # noqa: E402
    LABEL_TOKENS,
    build_tiny_bert,
    build_tiny_causal_lm,
    build_tiny_marian,
)

MODEL = "tiny-marian-de-en"

ARTICLE_A = [
    "Hilft Vitamin D gegen Erkältungen? Die Studienlage ist widersprüchlich.",
    "Es gibt keine verlässlichen Belege. Mehr Forschung ist nötig.",
]
ARTICLE_B = ["Ingwer lindert wahrscheinlich Übelkeit. Mehr Forschung ist nötig. Nebenwirkungen waren selten."]


@pytest.fixture(scope="session")
def marian_dir(tmp_path_factory) -> Path:
    return build_tiny_marian(tmp_path_factory.mktemp("models") / "marian")


class Spy:
    """Wraps a translator; counts calls and the sentences it was sent."""

    def __init__(self, inner):
        self.inner = inner
        self.name, self.origin = inner.name, inner.origin
        self.calls: list[list[str]] = []

    def load(self):
        getattr(self.inner, "load", lambda: None)()

    def translate(self, texts):
        self.calls.append(list(texts))
        return self.inner.translate(texts)

    @property
    def sent(self) -> list[str]:
        return [t for call in self.calls for t in call]


@pytest.fixture()
def spy_factory(marian_dir):
    spies: list[Spy] = []

    def factory():
        spy = Spy(MarianTranslator(marian_dir, device="cpu", batch_size=4, max_length=16, num_beams=1,
                                   name=MODEL, progress=False))
        spies.append(spy)
        return spy

    factory.spies = spies  # type: ignore[attr-defined]
    return factory


def _sent(spies) -> list[str]:
    return [t for s in spies for t in s.sent]


def test_marian_translator_is_lazy_and_translates_in_order(marian_dir):
    t = MarianTranslator(marian_dir, device="auto", batch_size=2, max_length=16, num_beams=1, progress=False)
    assert isinstance(t, Translator)
    assert not t.loaded
    texts = ["Bewegung senkt den Blutdruck.", "Mehr Forschung ist nötig.", "Rotwein ist nicht gesund."]
    out = t.translate(texts)
    assert t.loaded and t.device == "cpu"
    assert len(out) == 3 and all(isinstance(x, str) for x in out)
    assert t.n_batches == 2 and t.n_sentences == 3
    # sorting by length inside translate() never reorders the outputs
    assert out == [t.translate([x])[0] for x in texts]


def test_second_run_sends_nothing_and_new_article_sends_only_its_new_sentences(tmp_path, spy_factory):
    store = tmp_path / "cache" / "tm.jsonl"
    sents_a = split_paragraphs(ARTICLE_A)
    assert len(sents_a) == 4

    first, stats1 = translate_with_memory(sents_a, spy_factory, TranslationMemory(store), None, MODEL)
    assert stats1 == {"n_total": 4, "n_unique": 4, "n_corrections": 0, "n_memory_hits": 0, "n_model": 4}
    assert _sent(spy_factory.spies) == sents_a

    # a fresh process: memory reloaded from disk, the model is never created
    def must_not_load():
        raise AssertionError("translator created although every sentence is in the memory")

    again, stats2 = translate_with_memory(sents_a, must_not_load, TranslationMemory(store), None, MODEL)
    assert again == first
    assert stats2["n_model"] == 0 and stats2["n_memory_hits"] == 4

    # one new article: only its two unseen sentences reach the model
    spy_factory.spies.clear()
    sents_b = split_paragraphs(ARTICLE_B)
    both = sents_a + sents_b
    out, stats3 = translate_with_memory(both, spy_factory, TranslationMemory(store), None, MODEL)
    new = ["Ingwer lindert wahrscheinlich Übelkeit.", "Nebenwirkungen waren selten."]
    assert _sent(spy_factory.spies) == new
    assert stats3 == {"n_total": 7, "n_unique": 6, "n_corrections": 0, "n_memory_hits": 4, "n_model": 2}
    assert out[:4] == first and out[5] == out[3]  # repeated sentence, same translation
    records = [json.loads(line) for line in store.read_text(encoding="utf-8").splitlines()]
    assert len(records) == 6 and {r["origin"] for r in records} == {"model"}
    assert {r["model"] for r in records} == {MODEL}


def test_corrections_override_memory_and_model(tmp_path, spy_factory):
    memory = TranslationMemory(tmp_path / "tm.jsonl")
    memory.put(MODEL, "Mehr Forschung ist nötig.", "old memory text")
    corr_file = tmp_path / "corrections.tsv"
    corr_file.write_text(
        "# manual fixes\nsource\ttarget\tmodel\n"
        "Mehr Forschung ist nötig.\tMore research is needed.\t\n"
        "Rotwein ist nicht gesund.\tRed wine is not healthy.\ttiny-marian-de-en\n"
        "Rotwein ist nicht gesund.\tWRONG MODEL\tother-model\n",
        encoding="utf-8",
    )
    corrections = Corrections.load(corr_file)
    texts = ["Mehr Forschung ist nötig.", "Rotwein ist nicht gesund.", "Bewegung senkt den Blutdruck."]
    out, stats = translate_with_memory(texts, spy_factory, memory, corrections, MODEL)
    assert out[:2] == ["More research is needed.", "Red wine is not healthy."]
    assert _sent(spy_factory.spies) == ["Bewegung senkt den Blutdruck."]
    assert stats == {"n_total": 3, "n_unique": 3, "n_corrections": 2, "n_memory_hits": 0, "n_model": 1}
    assert memory.get(MODEL, "Mehr Forschung ist nötig.") == "old memory text"  # corrections stay separate
    assert corrections.get("other-model", "Rotwein ist nicht gesund.") == "WRONG MODEL"


def test_missing_model_error_names_model_count_and_fix(tmp_path):
    missing_dir = tmp_path / "no-such-model"
    memory = TranslationMemory(tmp_path / "tm.jsonl")
    memory.put("opus-de-en", "Schon übersetzt.", "Already translated.")

    def factory():
        return MarianTranslator(missing_dir, name="opus-de-en", progress=False)

    with pytest.raises(TranslationUnavailableError) as err:
        translate_with_memory(["Schon übersetzt.", "Neu eins.", "Neu zwei."], factory, memory, None, "opus-de-en")
    msg = str(err.value)
    assert "'opus-de-en'" in msg and "2 sentence(s)" in msg
    assert "translation.model" in msg and "local directory" in msg and "translation memory" in msg
    # nothing missing: the same broken model is never touched
    out, stats = translate_with_memory(["Schon übersetzt."], factory, memory, None, "opus-de-en")
    assert out == ["Already translated."] and stats["n_model"] == 0


def test_direct_load_of_missing_model_raises_model_unavailable(tmp_path):
    with pytest.raises(ModelUnavailableError, match="no-such-model"):
        MarianTranslator(tmp_path / "no-such-model", progress=False).load()


def test_blank_inputs_and_whitespace_variants(tmp_path):
    class Upper:
        name, origin = "upper", "model"

        def translate(self, texts):
            return [t.upper() for t in texts]

    memory = TranslationMemory(None)
    out, stats = translate_with_memory(["", "a  b", "a b", " "], Upper, memory, None, "upper")
    assert out == ["", "A B", "A B", ""]
    assert stats == {"n_total": 4, "n_unique": 1, "n_corrections": 0, "n_memory_hits": 0, "n_model": 1}


# --------------------------------------------------------------------------- translation memory


def test_memory_file_is_appendable_mergeable_and_compactable(tmp_path):
    seed = tmp_path / "demo.jsonl"
    seed.write_text(
        json.dumps({"model": "m", "source": "Eins.", "target": "One (seed).", "origin": "model", "timestamp": ""})
        + "\n", encoding="utf-8",
    )
    store = tmp_path / "work" / "tm.jsonl"
    mem = TranslationMemory(store, seeds=[seed])
    assert mem.get("m", "Eins.") == "One (seed)."
    mem.put("m", "Eins.", "One.")
    mem.put("m", "Zwei.", "Two.", origin="deepl")
    with open(store, "a", encoding="utf-8") as fh:
        fh.write('{"model": "m", "source": "Drei.", "tar')  # torn last line from a crash
    reloaded = TranslationMemory(store, seeds=[seed])
    assert reloaded.get("m", "Eins.") == "One."  # working store wins over the seed
    assert reloaded.record("m", "Zwei.").origin == "deepl"
    assert reloaded.get("m", "Drei.") is None and reloaded.skipped_lines == 1
    assert reloaded.get("other", "Eins.") is None

    other = tmp_path / "other.jsonl"
    TranslationMemory(other).put("m", "Vier.", "Four.")
    assert reloaded.merge(other) == 1
    out = tmp_path / "compact.jsonl"
    assert reloaded.compact(out) == 3
    lines = out.read_text(encoding="utf-8").splitlines()
    assert [json.loads(x)["source"] for x in lines] == ["Eins.", "Vier.", "Zwei."]
    with pytest.raises(ValueError):
        mem.put("m", "x", "y", origin="guess")


def test_corrections_file_needs_a_header(tmp_path):
    bad = tmp_path / "c.tsv"
    bad.write_text("Eins.\tOne.\n", encoding="utf-8")
    with pytest.raises(ValueError, match="header"):
        Corrections.load(bad)
    assert len(Corrections.load(tmp_path / "absent.tsv")) == 0


# --------------------------------------------------------------------------- DeepL (local server)


class _DeepLHandler(BaseHTTPRequestHandler):
    statuses: list[int] = []
    seen: list[dict] = []

    def do_POST(self):  # noqa: N802
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        type(self).seen.append({"auth": self.headers.get("Authorization"), "body": body})
        status = type(self).statuses.pop(0) if type(self).statuses else 200
        payload = {"translations": [{"detected_source_language": "DE", "text": f"EN:{t}"} for t in body["text"]]}
        reply_json(self, payload if status == 200 else {"message": "nope"}, status)

    def log_message(self, *args):
        pass


@pytest.fixture()
def deepl_server():
    _DeepLHandler.statuses, _DeepLHandler.seen = [], []
    server = HTTPServer(("127.0.0.1", 0), _DeepLHandler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}", _DeepLHandler
    server.shutdown()
    server.server_close()


def test_deepl_retries_then_writes_memory_with_deepl_origin(tmp_path, deepl_server, monkeypatch):
    url, handler = deepl_server
    handler.statuses = [429, 503]
    monkeypatch.setenv("DEEPL_AUTH_KEY", "secret:fx")
    memory = TranslationMemory(tmp_path / "tm.jsonl")

    def factory():
        return DeepLTranslator(base_url=url, backoff_s=0.0, batch_size=2)

    out, stats = translate_with_memory(["Eins.", "Zwei.", "Drei."], factory, memory, None, "deepl")
    assert out == ["EN:Eins.", "EN:Zwei.", "EN:Drei."] and stats["n_model"] == 3
    assert len(handler.seen) == 4  # 2 failures retried, then 2 batches
    assert handler.seen[0]["auth"] == "DeepL-Auth-Key secret:fx"
    assert handler.seen[-1]["body"] == {"text": ["Drei."], "source_lang": "DE", "target_lang": "EN-US"}
    assert memory.record("deepl", "Eins.").origin == "deepl"


def test_deepl_quota_error_and_missing_key(deepl_server, monkeypatch):
    url, handler = deepl_server
    handler.statuses = [456]
    with pytest.raises(DeepLError, match="456"):
        DeepLTranslator("k", base_url=url, backoff_s=0.0).translate(["Eins."])
    assert len(handler.seen) == 1  # quota errors are not retried
    monkeypatch.delenv("DEEPL_AUTH_KEY", raising=False)
    with pytest.raises(ModelUnavailableError, match="DEEPL_AUTH_KEY"):
        DeepLTranslator()
    assert DeepLTranslator("abc:fx").base_url == "https://api-free.deepl.com"


# --------------------------------------------------------------------------- reusable tiny builders


def test_tiny_builders_load_back_with_auto_classes(tmp_path, marian_dir):
    from transformers import (
        AutoModelForCausalLM,
        AutoModelForSeq2SeqLM,
        AutoModelForSequenceClassification,
        AutoTokenizer,
    )

    mt = AutoTokenizer.from_pretrained(marian_dir)
    assert type(mt).__name__ == "MarianTokenizer"
    ids = mt("Die Wirkung ist nicht nachgewiesen.").input_ids
    assert ids[-1] == mt.eos_token_id and mt.unk_token_id not in ids
    assert AutoModelForSeq2SeqLM.from_pretrained(marian_dir).config.d_model == 16

    bert_dir = build_tiny_bert(tmp_path / "bert", num_labels=3, id2label={0: "SUPPORTED", 1: "NEI", 2: "REFUTED"})
    bt = AutoTokenizer.from_pretrained(bert_dir)
    enc = bt("Die Wirkung ist nicht nachgewiesen.", "The effect has not been proven.")
    assert bt.unk_token_id not in enc.input_ids and enc.input_ids[0] == bt.cls_token_id
    bm = AutoModelForSequenceClassification.from_pretrained(bert_dir)
    assert bm.config.id2label[2] == "REFUTED"
    assert tuple(bm(**bt(["Das Risiko sinkt."], return_tensors="pt")).logits.shape) == (1, 3)

    lm_dir = build_tiny_causal_lm(tmp_path / "gpt")
    lt = AutoTokenizer.from_pretrained(lm_dir)
    label_ids = [lt.convert_tokens_to_ids(t) for t in LABEL_TOKENS]
    assert len(set(label_ids)) == 3 and lt.unk_token_id not in label_ids
    assert [lt.encode(t, add_special_tokens=False) for t in LABEL_TOKENS] == [[i] for i in label_ids]
    lm = AutoModelForCausalLM.from_pretrained(lm_dir)
    logits = lm(**lt(["Claim: coffee helps. Answer:"], return_tensors="pt")).logits
    assert logits.shape[-1] >= max(label_ids) + 1
