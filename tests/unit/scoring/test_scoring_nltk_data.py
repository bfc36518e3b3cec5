"""Offline NLTK data: lexnames table, punkt_tab writing, WordNet copying, the missing-data error."""

from __future__ import annotations

import nltk
import pytest

from medfc.scoring import nltk_data
from medfc.scoring.nltk_data import (
    INSTALL_SCRIPT,
    NltkDataMissing,
    build_punkt,
    build_wordnet,
    ensure_nltk_data,
    lexnames_rows,
    lexnames_text,
    parse_lexnames_man_page,
)

MAN_SNIPPET = "\n".join([
    ".TS", "l l l.", "\\fBFile Number\\fP\t\\fBName\\fP\t\\fBContents\\fP", "_",
    "00\tadj.all\tall adjective clusters",
    "18\tnoun.person  \tnouns denoting people",
    "44\tadj.ppl\tparticipial adjectives", ".TE",
])


def test_lexnames_table():
    assert parse_lexnames_man_page(MAN_SNIPPET) == [(0, "adj.all"), (18, "noun.person"), (44, "adj.ppl")]
    rows = lexnames_rows(man_page=None)
    assert len(rows) == 45
    assert rows[0] == (0, "adj.all", 3) and rows[2] == (2, "adv.all", 4)
    assert rows[3] == (3, "noun.Tops", 1) and rows[29] == (29, "verb.body", 2) and rows[44] == (44, "adj.ppl", 3)
    text = lexnames_text(rows)
    assert text.splitlines()[18] == "18\tnoun.person\t1"
    assert len(text.splitlines()) == 45


def test_build_punkt_roundtrips_through_nltk(tmp_path, monkeypatch):
    pytest.importorskip("punkt")
    from nltk.tokenize.punkt import PunktSentenceTokenizer, load_punkt_params

    build_punkt(tmp_path, ["english", "german"])
    for lang in ("english", "german"):
        for name in nltk_data.PUNKT_FILES:
            assert (tmp_path / "tokenizers" / "punkt_tab" / lang / name).is_file()
    monkeypatch.setattr(nltk.data, "path", [str(tmp_path)])
    params = load_punkt_params(nltk.data.find("tokenizers/punkt_tab/english/"))
    assert "dr" in params.abbrev_types and ("##number##", "cbot") in params.collocations
    assert all(isinstance(v, int) for v in params.ortho_context.values())
    assert PunktSentenceTokenizer(params).tokenize("Dr. Smith went home. He was tired.") == ["Dr. Smith went home.", "He was tired."]
    assert nltk.word_tokenize("Mr. Smith didn't stay.") == ["Mr.", "Smith", "did", "n't", "stay", "."]


def test_build_wordnet_from_a_source_folder(tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    for name in nltk_data.WORDNET_REQUIRED + ("index.sense",):
        (src / name).write_text(f"content of {name}\n")
    out = build_wordnet(tmp_path / "data", src)
    assert (out / "data.noun").read_text() == "content of data.noun\n"
    assert (out / "index.sense").is_file() and not (out / "cntlist.rev").exists()
    assert len((out / "lexnames").read_text().splitlines()) == 45
    (src / "verb.exc").unlink()
    with pytest.raises(NltkDataMissing, match="verb.exc"):
        build_wordnet(tmp_path / "data2", src)


def test_missing_data_names_the_install_script(tmp_path, monkeypatch):
    monkeypatch.setenv("NLTK_DATA", str(tmp_path / "empty"))
    monkeypatch.setattr(nltk.data, "path", [])
    with pytest.raises(NltkDataMissing, match=INSTALL_SCRIPT) as exc:
        ensure_nltk_data()
    assert "WordNet" in str(exc.value)
    # an incomplete WordNet folder is refused too
    wn = tmp_path / "empty" / "corpora" / "wordnet"
    wn.mkdir(parents=True)
    (wn / "data.noun").write_text("")
    with pytest.raises(NltkDataMissing, match="lexnames"):
        ensure_nltk_data()
    assert nltk.data.path[0] == str((tmp_path / "empty").resolve())


def test_nltk_data_dir(monkeypatch, tmp_path):
    monkeypatch.setenv("NLTK_DATA", f"{tmp_path / 'a'}:{tmp_path / 'b'}")
    assert nltk_data.nltk_data_dir() == (tmp_path / "a").resolve()
    monkeypatch.delenv("NLTK_DATA")
    monkeypatch.chdir(tmp_path)
    assert nltk_data.nltk_data_dir() == (tmp_path / ".nltk_data").resolve()


def test_installed_wordnet(meteor):
    """The built WordNet 3.0: 117,659 synset lines, readable by NLTK with lexnames."""
    from nltk.corpus import wordnet as wn

    root = nltk_data.nltk_data_dir() / "corpora" / "wordnet"
    n = 0
    for pos in ("adj", "adv", "noun", "verb"):
        with open(root / f"data.{pos}", encoding="utf-8") as fh:
            n += sum(1 for line in fh if not line.startswith("  "))
    assert n == nltk_data.N_WORDNET_SYNSETS
    assert wn.synset("dog.n.01").lexname() == "noun.animal"
    assert wn.synset("run.v.01").lexname() == "verb.motion"
