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
from medfc.healthfc.translate import TranslationUnavailableError, translate_with_memory  # noqa: E402
from medfc.healthfc.translators import (  # noqa: E402
    CTranslate2Translator, DeepLError, DeepLTranslator, MarianTranslator, ModelUnavailableError, Translator,
)
from tests.helpers.http_servers import reply_json  # noqa: E402
from tests.helpers.tiny_models import (  # noqa: E402
    DE_SENTENCES,
    LABEL_TOKENS,
    build_tiny_bert,
    build_tiny_causal_lm,
    build_tiny_marian,
    build_tiny_opus_marian,
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

    def translate(self, texts, on_batch=None):
        self.calls.append(list(texts))
        return self.inner.translate(texts, on_batch)

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
    assert t._model is None
    texts = ["Bewegung senkt den Blutdruck.", "Mehr Forschung ist nötig.", "Rotwein ist nicht gesund."]
    out = t.translate(texts)
    assert t._model is not None and t.device == "cpu"
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
    memory.put_many(MODEL, [("Mehr Forschung ist nötig.", "old memory text")])
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
    memory.put_many("opus-de-en", [("Schon übersetzt.", "Already translated.")])

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

        def translate(self, texts, on_batch=None):
            out = [t.upper() for t in texts]
            on_batch(texts, out)
            return out

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
    mem.put_many("m", [("Eins.", "One.")])
    mem.put_many("m", [("Zwei.", "Two.")], origin="deepl")
    with open(store, "a", encoding="utf-8") as fh:
        fh.write('{"model": "m", "source": "Drei.", "tar')  # torn last line from a crash
    reloaded = TranslationMemory(store, seeds=[seed])
    assert reloaded.get("m", "Eins.") == "One."  # working store wins over the seed
    assert reloaded.record("m", "Zwei.").origin == "deepl"
    assert reloaded.get("m", "Drei.") is None and reloaded.skipped_lines == 1
    assert reloaded.get("other", "Eins.") is None

    other = tmp_path / "other.jsonl"
    TranslationMemory(other).put_many("m", [("Vier.", "Four.")])
    assert reloaded.merge(other) == 1
    out = tmp_path / "compact.jsonl"
    assert reloaded.compact(out) == 3
    lines = out.read_text(encoding="utf-8").splitlines()
    assert [json.loads(x)["source"] for x in lines] == ["Eins.", "Vier.", "Zwei."]
    with pytest.raises(ValueError):
        mem.put_many("m", [("x", "y")], origin="guess")


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


# --------------------------------------------------------------------------- CTranslate2 backend

REPO = Path(__file__).resolve().parents[3]
# real-length German sentences: the first 100 of the demo memory, and the tiny corpus
DEMO_DE = [json.loads(line)["source"] for line in
           (REPO / "resources/demo/translation/memory.jsonl").read_text(encoding="utf-8").splitlines()[:100]]
CT2_TEXTS = DEMO_DE + list(DE_SENTENCES)


@pytest.fixture(scope="session")
def opus_dirs(tmp_path_factory) -> dict[str, Path]:
    """Tiny Marian models with Opus-MT's vocabulary layout (``<pad>`` last, as CTranslate2's converter
    needs): ``plain`` as :func:`build_tiny_marian` makes its weights; ``spread`` with larger weights and
    a bias towards ``</s>``, so that translations depend on the input and end at varied lengths."""
    root = tmp_path_factory.mktemp("opus")
    return {"plain": build_tiny_opus_marian(root / "plain"),
            "spread": build_tiny_opus_marian(root / "spread", init_std=0.5, eos_bias=6.0)}


def _ct2(model, cache, compute_type="float32", max_length=32, **kw):
    return CTranslate2Translator(model, cache, device="cpu", compute_type=compute_type, batch_size=16,
                                 max_length=max_length, num_beams=1, progress=False, **kw)


def _marian(model, max_length=32):
    return MarianTranslator(model, device="cpu", batch_size=16, max_length=max_length, num_beams=1, progress=False)


@pytest.mark.parametrize(("kind", "max_length"), [("plain", 16), ("spread", 32)])
def test_ctranslate2_float32_greedy_gives_the_transformers_translations(tmp_path, opus_dirs, kind, max_length):
    model = opus_dirs[kind]
    expected = _marian(model, max_length).translate(CT2_TEXTS)
    ct2 = _ct2(model, tmp_path / "ct2", max_length=max_length)
    assert isinstance(ct2, Translator) and ct2._translator is None
    got = ct2.translate(CT2_TEXTS)
    assert got == expected  # every one of the 124, exactly
    assert ct2.device == "cpu" and ct2.compute_type == "float32" and ct2.n_batches == 8
    # the transformers limit counts the start token and forces </s> last: at most max_length - 2 tokens
    assert ct2.max_decoding_length == max_length - 2
    if kind == "spread":  # the comparison covers translations that end early, at once included
        assert "" in expected and len({len(t) for t in expected}) >= 10 and len(set(expected)) >= 20


def test_ctranslate2_auto_is_int8_on_the_cpu(tmp_path, opus_dirs):
    ct2 = CTranslate2Translator(opus_dirs["spread"], tmp_path / "ct2", device="auto", compute_type="auto",
                                batch_size=16, max_length=32, num_beams=1, progress=False)
    out = ct2.translate(CT2_TEXTS)
    assert (ct2.device, ct2.compute_type) == ("cpu", "int8")
    assert ct2.converted.manifest["quantization"] == "int8" and ct2.converted.path.name.startswith("spread-int8-")
    assert len(out) == len(CT2_TEXTS) and all(isinstance(t, str) for t in out)
    # int8 rounds the weights of a random model whose logits are near-ties: the translations may
    # differ from transformers' (docs/translation.md counts them); that they exist is all asserted here


def test_ctranslate2_conversion_is_cached_and_keyed_by_model_and_quantization(tmp_path, opus_dirs, monkeypatch):
    import shutil

    import ctranslate2.converters

    model = Path(shutil.copytree(opus_dirs["plain"], tmp_path / "model"))
    cache = tmp_path / "ct2"
    first = _ct2(model, cache)
    first.load()
    entry = first.converted.path
    assert first.converted.converted is True and entry.parent == cache
    assert (entry / "model" / "model.bin").is_file() and (entry / "tokenizer").is_dir()
    assert first.converted.manifest["ctranslate2"] == ctranslate2.__version__
    stamp = (entry / "model" / "model.bin").stat().st_mtime_ns

    # a second run (a new process would do the same) finds the conversion: the converter is never called
    def no_conversion(*args, **kwargs):
        raise AssertionError("the model was converted again")

    monkeypatch.setattr(ctranslate2.converters, "TransformersConverter", no_conversion)
    second = _ct2(model, cache)
    assert second.translate(DE_SENTENCES) == first.translate(DE_SENTENCES)
    assert second.converted.converted is False and second.converted.path == entry
    assert (entry / "model" / "model.bin").stat().st_mtime_ns == stamp
    monkeypatch.undo()

    # another quantization is another entry
    int8 = _ct2(model, cache, compute_type="int8")
    int8.load()
    assert int8.converted.converted is True and int8.converted.path != entry
    # a changed model (other weights in the same directory) reconverts
    other = build_tiny_opus_marian(tmp_path / "other", seed=1)
    shutil.copyfile(other / "model.safetensors", model / "model.safetensors")
    changed = _ct2(model, cache)
    changed.load()
    assert changed.converted.converted is True and changed.converted.path not in (entry, int8.converted.path)
    assert changed.translate(DE_SENTENCES) == _marian(model).translate(DE_SENTENCES)
    assert len(list(cache.iterdir())) == 3  # three complete entries, no temporary directory left


def test_ctranslate2_sits_behind_the_memory_and_corrections(tmp_path, opus_dirs):
    cache = tmp_path / "ct2"
    store = tmp_path / "tm.jsonl"
    memory = TranslationMemory(store)
    memory.put_many(MODEL, [("Mehr Forschung ist nötig.", "More research is needed.")])
    corr_file = tmp_path / "corrections.tsv"
    corr_file.write_text("source\ttarget\tmodel\nRotwein ist nicht gesund.\tRed wine is not healthy.\t\n", encoding="utf-8")
    spies: list[Spy] = []

    def factory():
        spies.append(Spy(_ct2(opus_dirs["spread"], cache, name=MODEL)))
        return spies[-1]

    texts = ["Mehr Forschung ist nötig.", "Rotwein ist nicht gesund.", "Bewegung senkt den Blutdruck.",
             "Mehr  Forschung ist nötig."]
    out, stats = translate_with_memory(texts, factory, memory, Corrections.load(corr_file), MODEL)
    assert _sent(spies) == ["Bewegung senkt den Blutdruck."]  # memory and corrections never reach the model
    assert stats == {"n_total": 4, "n_unique": 3, "n_corrections": 1, "n_memory_hits": 1, "n_model": 1}
    new = _marian(opus_dirs["spread"]).translate(["Bewegung senkt den Blutdruck."])[0]
    assert out == ["More research is needed.", "Red wine is not healthy.", new, "More research is needed."]
    assert memory.record(MODEL, "Bewegung senkt den Blutdruck.").origin == "model"

    # everything in the memory: no translator, nothing converted
    def must_not_load():
        raise AssertionError("translator created although every sentence is in the memory or corrections")

    cache2 = tmp_path / "ct2-unused"
    again, stats2 = translate_with_memory(texts, must_not_load, TranslationMemory(store), Corrections.load(corr_file), MODEL)
    assert again == out and stats2["n_model"] == 0 and not cache2.exists()


def test_ctranslate2_unconvertible_model_is_unavailable(tmp_path, marian_dir):
    # build_tiny_marian puts <pad> at id 2; CTranslate2's Marian converter drops the *last* entry as <pad>
    cache = tmp_path / "ct2"
    with pytest.raises(ModelUnavailableError, match=r"vocabulary"):
        _ct2(marian_dir, cache).load()
    assert list(cache.iterdir()) == []  # the failed conversion left nothing behind

    def factory():
        return _ct2(tmp_path / "no-such-model", cache)

    with pytest.raises(TranslationUnavailableError, match=r"1 sentence\(s\)"):
        translate_with_memory(["Neu."], factory, TranslationMemory(None), None, "x")


@pytest.mark.parametrize("backend", ["marian", "ctranslate2"])
def test_both_local_backends_write_the_memory_after_every_batch(tmp_path, marian_dir, opus_dirs, backend):
    """The memory is appended once per batch of the model: before batch k, the k finished ones are
    in the file, so a kill loses at most the batch in flight (tests/unit/healthfc/test_tm_durability.py kills one)."""
    store = tmp_path / "tm.jsonl"
    if backend == "marian":
        translator = MarianTranslator(marian_dir, device="cpu", batch_size=4, max_length=16, num_beams=1, name=MODEL, progress=False)
    else:
        translator = CTranslate2Translator(opus_dirs["plain"], tmp_path / "ct2", device="cpu", compute_type="float32", batch_size=4,
                                           max_length=16, num_beams=1, name=MODEL, progress=False)
    in_file_before_batch: list[int] = []
    translate_batch = translator._translate_batch

    def counting(texts):
        in_file_before_batch.append(len(store.read_bytes().splitlines()) if store.exists() else 0)
        return translate_batch(texts)

    translator._translate_batch = counting
    texts = list(DE_SENTENCES[:10])
    out, stats = translate_with_memory(texts, lambda: translator, TranslationMemory(store), None, MODEL)
    assert in_file_before_batch == [0, 4, 8] and translator.n_batches == 3
    assert stats["n_model"] == 10 and len(store.read_bytes().splitlines()) == 10
    assert [TranslationMemory(store).get(MODEL, t) for t in texts] == out
