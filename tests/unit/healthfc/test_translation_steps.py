"""The translation step over the demo snapshot: the shipped memory covers every demo text, so the
default run needs no model; corrections override; a single missing sentence is the only one sent
to a (tiny) Marian model."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(REPO))  # repo root, for tests.helpers

from medfc.common.io import read_json, read_jsonl, write_jsonl  # noqa: E402
from medfc.healthfc import steps  # noqa: E402
from medfc.healthfc.sentences import article_sentence_records, article_sentences, split_paragraphs  # noqa: E402
from medfc.healthfc.tm import Corrections, TranslationMemory  # noqa: E402
from medfc.healthfc.translate import TranslationUnavailableError  # noqa: E402
from medfc.healthfc.translate import translate_articles  # noqa: E402
from tests.helpers.config import call_step, section  # noqa: E402
from tests.helpers.modules import load_script  # noqa: E402
from tests.helpers.tiny_models import build_tiny_marian, build_tiny_opus_marian  # noqa: E402

DEMO = REPO / "resources/demo/translation"
MEMORY = DEMO / "memory.jsonl"
CORRECTIONS = DEMO / "corrections.tsv"
MODEL_NAME = "Helsinki-NLP/opus-mt-de-en"


@pytest.fixture(scope="module")
def script():
    return load_script(REPO / "scripts/make_demo_translations.py", "make_demo_translations")


@pytest.fixture(scope="module")
def parsed(script, tmp_path_factory) -> dict[str, Path]:
    """The demo pages run through the real parse step, as the workflow does."""
    tmp = tmp_path_factory.mktemp("parsed")
    pages = tmp / "pages.jsonl.gz"
    write_jsonl(pages, script.crawlable_pages())
    out = {"articles": tmp / "articles.jsonl", "claims": tmp / "claims.jsonl", "report": tmp / "report.json"}
    out |= {"articles_table": tmp / "articles.parquet", "claims_table": tmp / "claims.parquet"}
    call_step(steps.parse, {"pages": str(pages)}, {k: str(v) for k, v in out.items()}, {})
    return out


def _options(tmp_path: Path, **extra) -> dict:
    """The healthfc.translation section as the rule passes it (shipped files are inputs, see _inputs)."""
    tr = {k: v for k, v in section("healthfc.translation").items() if k not in ("memory_seeds", "corrections", "gpu")}
    return {
        **tr,
        "model": str(tmp_path / "no-such-model"),  # a model that cannot load: any miss would fail the run
        "model_name": MODEL_NAME,
        "device": "cpu",
        "memory": str(tmp_path / "cache/translation_memory.jsonl"),
        "ct2_cache": str(tmp_path / "cache/ctranslate2"),
        "splitter": "pysbd",
        **extra,
    }


def _inputs(parsed: dict[str, Path], seeds=(MEMORY,), corrections=CORRECTIONS) -> dict:
    """The rule's inputs: the parsed files and the shipped memory / corrections files."""
    inputs = {**{k: str(parsed[k]) for k in ("articles", "claims")}, "memory_seeds": [str(s) for s in seeds]}
    return inputs | ({"corrections": str(corrections)} if corrections else {})


def translate(inputs, outputs, options):
    return call_step(steps.translate, inputs, outputs, options)


def _outputs(tmp_path: Path) -> dict[str, str]:
    return {k: str(tmp_path / f"out/{k}") for k in ("sentences", "claims_en", "report")}


def _never_called():
    raise AssertionError("the translator must not be created: every demo text is in the memory")


def test_demo_memory_covers_every_demo_text(script, parsed):
    texts = script.source_texts()
    assert len(texts) > 800
    # the script's list is exactly what the parsed demo gives
    articles = list(read_jsonl(parsed["articles"]))
    claims = list(read_jsonl(parsed["claims"]))
    assert len(articles) == 25 and len(claims) == 30
    expected = {a["title"] for a in articles} | {a["teaser"] for a in articles}
    expected |= {c["question"] for c in claims} | {c["explanation"] for c in claims}
    expected |= {s for a in articles for s in article_sentences(a)}  # body and studies sentences
    expected |= {t for a in articles for t in a["topics"]}  # breadcrumb topics and tags
    assert set(texts) == {t for t in expected if t}
    assert script.missing_texts(texts) == []
    # the shipped memory is a fresh build of the hand-written TSV (deterministic, origin "demo")
    assert MEMORY.read_text(encoding="utf-8") == "".join(script.memory_lines(script.read_tsv()))
    assert script.main(["--check"]) == 0
    records = [json.loads(line) for line in MEMORY.read_text(encoding="utf-8").splitlines()]
    assert {r["model"] for r in records} == {MODEL_NAME}
    assert {r["origin"] for r in records} == {"demo"}
    assert all(r["target"].strip() for r in records)


def test_library_run_over_the_demo_never_creates_a_translator(parsed):
    articles = list(read_jsonl(parsed["articles"]))
    claims = list(read_jsonl(parsed["claims"]))
    memory = TranslationMemory(None, seeds=[MEMORY])
    sents, claims_en, report = translate_articles(articles, claims, _never_called, memory, None, MODEL_NAME, base="pysbd")
    assert report["n_model"] == 0
    assert report["n_memory_hits"] == report["n_unique"] > 800
    assert report["origins"] == {"demo": report["n_unique"]}
    assert len(sents) == 25 and len(claims_en) == 30


def test_step_over_the_demo_sends_nothing_to_the_model_and_applies_corrections(parsed, tmp_path):
    outputs = _outputs(tmp_path)
    translate(_inputs(parsed), outputs, _options(tmp_path))
    report = read_json(outputs["report"])
    assert report["memory_seeds"] == [str(MEMORY)] and report["corrections"] == str(CORRECTIONS)
    corrections = Corrections.load(CORRECTIONS)
    assert 3 <= len(corrections) <= 5
    assert report["n_model"] == 0
    assert report["n_corrections"] == len(corrections)
    assert report["n_corrections"] + report["n_memory_hits"] == report["n_unique"]
    assert report["origins"] == {"correction": len(corrections), "demo": report["n_memory_hits"]}
    assert report["splitter"]["base"] == "pysbd"
    assert not Path(_options(tmp_path)["memory"]).exists()  # nothing new to write

    articles = {a["article_id"]: a for a in read_jsonl(parsed["articles"])}
    sents = list(read_jsonl(outputs["sentences"]))
    assert [r["article_id"] for r in sents] == sorted(articles, key=lambda k: articles[k]["url"])
    for rec in sents:
        art = articles[rec["article_id"]]
        # the article's sentence list: body sentences, then the studies section's, each marked with its section
        assert rec["sentences_de"] == article_sentences(art)
        body = split_paragraphs(art["body_paragraphs"])
        assert rec["sentences_de"][: len(body)] == body
        assert rec["sections"] == ["body"] * len(body) + ["studies"] * (len(rec["sentences_de"]) - len(body))
        assert "studies" in rec["sections"]
        assert rec["sections"] == [r["section"] for r in article_sentence_records(art)]
        assert len(rec["sentences_en"]) == len(rec["sentences_de"])
        assert all(e.strip() for e in rec["sentences_en"])
        assert rec["title_en"] and rec["teaser_en"]
    assert report["n_sentences"] == sum(len(r["sentences_de"]) for r in sents)
    claims = list(read_jsonl(outputs["claims_en"]))
    assert len(claims) == 30
    assert all(c["question_en"] and c["explanation_en"] and c["title_en"] for c in claims)

    # every correction is a demo text and its target (not the memory's) is in the output
    memory = TranslationMemory(None, seeds=[MEMORY])
    en_of = {de: en for r in sents for de, en in zip(r["sentences_de"], r["sentences_en"], strict=True)}
    en_of.update({c["question_de"]: c["question_en"] for c in claims})
    en_of.update({c["explanation_de"]: c["explanation_en"] for c in claims})
    en_of.update({r["title_de"]: r["title_en"] for r in sents})
    en_of.update({r["teaser_de"]: r["teaser_en"] for r in sents})
    for source in [s for m, s in corrections._rows if not m]:  # noqa: SLF001 - the reviewed file's rows
        fixed = corrections.get(MODEL_NAME, source)
        assert en_of[source] == fixed
        assert memory.get(MODEL_NAME, source) != fixed


def test_missing_sentence_without_a_model_fails_with_the_clear_message(parsed, tmp_path):
    lines = MEMORY.read_text(encoding="utf-8").splitlines(keepends=True)
    seed = tmp_path / "seed.jsonl"
    seed.write_text("".join(lines[1:]), encoding="utf-8")
    with pytest.raises(TranslationUnavailableError) as exc:
        translate(_inputs(parsed, seeds=[seed], corrections=None), _outputs(tmp_path), _options(tmp_path))
    msg = str(exc.value)
    assert msg.startswith(f"1 sentence(s) are not in the translation memory for model {MODEL_NAME!r}")
    assert "translation.model" in msg and "corrections file" in msg


def test_one_sentence_removed_from_the_seeds_is_the_only_one_sent_to_a_tiny_marian(parsed, tmp_path, script):
    marian = build_tiny_marian(tmp_path / "marian")
    # drop one body sentence (not a corrected one) from a copy of the shipped memory
    corrected = {s for m, s in Corrections.load(CORRECTIONS)._rows if not m}  # noqa: SLF001
    body = [s for a in read_jsonl(parsed["articles"]) for s in split_paragraphs(a["body_paragraphs"])]
    dropped = next(s for s in body if s not in corrected and body.count(s) == 1)
    seed = tmp_path / "seed.jsonl"
    kept = [ln for ln in MEMORY.read_text(encoding="utf-8").splitlines(keepends=True)
            if json.loads(ln)["source"] != dropped]
    seed.write_text("".join(kept), encoding="utf-8")
    opts = _options(tmp_path, model=str(marian), batch_size=4, max_length=16, num_beams=1, progress=False)
    outputs = _outputs(tmp_path)
    inputs = _inputs(parsed, seeds=[seed])
    translate(inputs, outputs, opts)
    report = read_json(outputs["report"])
    assert report["n_model"] == 1
    assert report["origins"]["model"] == 1
    # the one new translation went to the working store, keyed by the logical model name
    new = [json.loads(ln) for ln in Path(opts["memory"]).read_text(encoding="utf-8").splitlines()]
    assert [(r["model"], r["source"], r["origin"]) for r in new] == [(MODEL_NAME, dropped, "model")]
    # a second run finds it in the working store: nothing reaches the model
    translate(inputs, outputs, {**opts, "model": str(tmp_path / "gone")})
    assert read_json(outputs["report"])["n_model"] == 0


def test_ctranslate2_backend_needs_no_model_for_the_demo_and_converts_once_for_a_miss(parsed, tmp_path):
    outputs = _outputs(tmp_path)
    opts = _options(tmp_path, backend="ctranslate2", compute_type="float32", batch_size=4, max_length=16,
                    num_beams=1, progress=False)
    # the demo: every text in the shipped memory, so the (missing) model is never converted or loaded
    translate(_inputs(parsed), outputs, opts)
    demo = list(read_jsonl(outputs["sentences"]))
    assert read_json(outputs["report"])["n_model"] == 0 and not Path(opts["ct2_cache"]).exists()

    # one body sentence missing from the seeds: the only one CTranslate2 translates
    opus = build_tiny_opus_marian(tmp_path / "opus")
    corrected = {s for m, s in Corrections.load(CORRECTIONS)._rows if not m}  # noqa: SLF001
    body = [s for a in read_jsonl(parsed["articles"]) for s in split_paragraphs(a["body_paragraphs"])]
    dropped = next(s for s in body if s not in corrected and body.count(s) == 1)
    seed = tmp_path / "seed.jsonl"
    seed.write_text("".join(ln for ln in MEMORY.read_text(encoding="utf-8").splitlines(keepends=True)
                            if json.loads(ln)["source"] != dropped), encoding="utf-8")
    translate(_inputs(parsed, seeds=[seed]), outputs, {**opts, "model": str(opus)})
    report = read_json(outputs["report"])
    assert report["n_model"] == 1 and report["backend"] == "ctranslate2"
    entries = list(Path(opts["ct2_cache"]).iterdir())
    assert len(entries) == 1 and entries[0].name.startswith("opus-float32-")
    new = [json.loads(ln) for ln in Path(opts["memory"]).read_text(encoding="utf-8").splitlines()]
    assert [(r["model"], r["source"], r["origin"]) for r in new] == [(MODEL_NAME, dropped, "model")]
    # the same sentence lists; only the dropped sentence's English is the model's (transformers' own, greedy)
    from medfc.healthfc.translators import MarianTranslator

    expected = MarianTranslator(opus, device="cpu", max_length=16, num_beams=1, progress=False).translate([dropped])[0]
    assert new[0]["target"] == expected
    again = list(read_jsonl(outputs["sentences"]))
    assert len(again) == 25
    assert [r["sentences_de"] for r in again] == [r["sentences_de"] for r in demo]
    swap = {dropped: expected}
    assert [[swap.get(de, en) for de, en in zip(r["sentences_de"], r["sentences_en"], strict=True)] for r in demo] == \
        [r["sentences_en"] for r in again]


def test_unknown_backend_is_rejected(parsed, tmp_path):
    with pytest.raises(ValueError, match=r"options\.backend: 'google' is not one of \['marian', 'ctranslate2', 'deepl'\]"):
        translate(_inputs(parsed), _outputs(tmp_path), _options(tmp_path, backend="google"))


def test_check_lists_a_missing_text_and_exits_1(script, tmp_path, monkeypatch, capsys):
    rows = (DEMO / "translations_en.tsv").read_text(encoding="utf-8").splitlines(keepends=True)
    first = next(i for i, ln in enumerate(rows) if ln.strip() and not ln.startswith("#"))
    dropped = rows[first].split("\t")[0]
    tsv, memory = tmp_path / "translations_en.tsv", tmp_path / "memory.jsonl"
    tsv.write_text("".join(rows[:first] + rows[first + 1:]), encoding="utf-8")
    monkeypatch.setattr(script, "TSV", tsv)
    monkeypatch.setattr(script, "MEMORY", memory)
    assert script.main(["--build"]) == 0
    capsys.readouterr()
    assert script.main(["--check"]) == 1
    assert capsys.readouterr().out.splitlines() == [f"MISSING\t{dropped}"]
    memory.write_text(memory.read_text(encoding="utf-8")[:-1], encoding="utf-8")  # hand-edited, no longer a build
    assert script.main(["--check"]) == 1
    assert any(ln.startswith("STALE\t") for ln in capsys.readouterr().out.splitlines())
