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
    lexnames_text,
)

def test_lexnames_table():
    lines = lexnames_text().splitlines()
    assert len(lines) == 45
    assert lines[0] == "00\tadj.all\t3" and lines[2] == "02\tadv.all\t4"
    assert lines[3] == "03\tnoun.Tops\t1" and lines[29] == "29\tverb.body\t2" and lines[44] == "44\tadj.ppl\t3"
    assert lines[18] == "18\tnoun.person\t1"


def test_build_punkt_roundtrips_through_nltk(tmp_path, monkeypatch):
    pytest.importorskip("punkt")
    from nltk.tokenize.punkt import PunktSentenceTokenizer, load_punkt_params

    build_punkt(tmp_path, ["english", "german"])
    for lang in ("english", "german"):
        for name in ("abbrev_types.txt", "sent_starters.txt", "collocations.tab", "ortho_context.tab"):
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
