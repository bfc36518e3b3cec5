"""Building dataset records in the three modes, writing them, and the dataset steps end to end."""


from dataclasses import asdict

import pandas as pd
import pytest
import yaml

from medfc.common.io import read_json, read_jsonl, write_jsonl
from medfc.healthfc import steps
from medfc.healthfc.align import align_release
from medfc.healthfc.dataset import FIELDS, build_dataset, write_dataset
from medfc.healthfc.release import ReleaseRow
from tests.helpers.config import call_step, section
from tests.helpers.demo import DEMO_RELEASE, parsed_demo_site
from tests.helpers.figures import PAPERS

ALIGN = (90, 50, 25)  # healthfc.align's fuzzy_threshold, min_claim_score and min_contained_chars (the schema's defaults)
URL_A = "https://www.medizin-transparent.at/kaffee/"
URL_B = "https://www.medizin-transparent.at/zink/"
URL_C = "https://www.medizin-transparent.at/alt/"


class FakeTranslations(dict):
    """A made-up English for every German text."""

    def get(self, text, default=None):
        return f"EN:{text}"


fake_translate = FakeTranslations()


def row(n, url, claim, evidence, en_evidence=(), label="REFUTED", en_claim="", de_expl="Erklärung.", en_expl=""):
    return ReleaseRow(row=n, url=url, de_claim=claim, en_claim=en_claim, de_explanation=de_expl, en_explanation=en_expl,
                      de_evidence=list(evidence), en_evidence=list(en_evidence), label=label, label_code=2,
                      de_verdict="Nein", evidence_level="high", small_effect=False, title="Titel", authors=["A", "B"],
                      date="2020-01-02", date_text="2. Januar 2020", variant="12col")


ARTICLES = [
    {"article_id": "kaffee", "url": URL_A, "title": "Kaffee", "date": "2022-12-05", "authors": ["X"],
     "topics": ["Ernährung", "Herz"], "body_paragraphs": ["Kaffee ist beliebt. Er schadet dem Herzen nicht.", "Mehr Studien fehlen."]},
    {"article_id": "zink", "url": URL_B, "title": "Zink", "date": "2016-03-03", "authors": ["Y"],
     "topics": ["Erkältung"], "body_paragraphs": ["Zink verkürzt Erkältungen kaum."]},
]
CLAIMS = [
    {"claim_id": "kaffee#0", "article_id": "kaffee", "url": URL_A, "question": "Schadet Kaffee dem Herzen?",
     "label": "SUPPORTED", "evidence_level": "low", "small_effect": False, "explanation": "Nein, tut er nicht."},
    {"claim_id": "zink#0", "article_id": "zink", "url": URL_B, "question": "Hilft Zink?",
     "label": "NOT ENOUGH INFO", "evidence_level": "insufficient", "small_effect": False, "explanation": "Unklar."},
]
ROWS = [
    row(0, URL_A, "Schadet Kaffee dem Herzen?", ["Er schadet dem Herzen nicht."], en_claim="Does coffee harm the heart?",
        en_expl="No, it does not."),
    row(1, URL_C, "Hilft ein altes Mittel?", ["Satz eins ist Evidenz.", "Satz zwei auch."],
        en_evidence=["Sentence one is evidence.", "Sentence two too."], label="SUPPORTED"),
    row(2, "https://www.medizin-transparent.at/neu/", "Gibt es das?", ["Nur ein Satz.", "Und noch einer."],
        en_evidence=["Only one sentence and another one."], label="NOT ENOUGH INFO", de_expl="", en_expl=""),
]
SENTS = {"kaffee": ["Kaffee ist beliebt.", "Er schadet dem Herzen nicht.", "Mehr Studien fehlen."],
         "zink": ["Zink verkürzt Erkältungen kaum."]}


def test_release_only_mode_builds_records():
    records, report = build_dataset(None, None, None, ROWS, None, fake_translate)
    assert [r["source"] for r in records] == ["release"] * 3
    assert [r["id"] for r in records] == ["kaffee#0", "alt#0", "neu#0"]
    r1 = records[1]
    assert r1["sentences_de"] == ["Satz eins ist Evidenz.", "Satz zwei auch."]
    assert r1["evidence_ids"] == [0, 1] and r1["gold_evidence"] is True
    assert r1["sentences_en"] == ["Sentence one is evidence.", "Sentence two too."]
    assert r1["sentences_en_origin"] == "release"
    # the English evidence split into fewer sentences: still the release's English (what the paper used),
    # the German regrouped to match it, nothing translated
    r2 = records[2]
    assert r2["sentences_en"] == ["Only one sentence and another one."] and r2["sentences_en_origin"] == "release"
    assert r2["sentences_de"] == ["Nur ein Satz. Und noch einer."] and r2["evidence_ids"] == [0]
    assert report.counts["release_evidence_regrouped"] == 1
    assert r2["explanation_de"] == "" and r2["explanation_en"] == ""
    assert r2["sentence_sections"] is None
    assert records[0]["claim_en"] == "Does coffee harm the heart?" and records[1]["claim_en"] == "EN:Hilft ein altes Mittel?"
    assert records[0]["topics"] == [] and records[0]["authors"] == ["A", "B"] and records[0]["date"] == "2020-01-02"
    assert report.counts["source/release"] == 3


def test_crawl_plus_release_mode():
    alignment = align_release(ROWS, CLAIMS, SENTS, *ALIGN)
    records, report = build_dataset(CLAIMS, ARTICLES, SENTS, ROWS, alignment, fake_translate)
    by_id = {r["id"]: r for r in records}
    assert set(by_id) == {"kaffee#0", "zink#0", "alt#0", "neu#0"}
    k = by_id["kaffee#0"]
    assert k["source"] == "crawl+release" and k["release_row"] == 0
    assert k["label"] == "REFUTED" and k["evidence_level"] == "high"  # the release wins over the crawl
    assert k["evidence_ids"] == [1] and k["gold_evidence"] is True
    assert k["sentences_de"] == SENTS["kaffee"]
    assert k["sentences_en"] == ["EN:" + s for s in SENTS["kaffee"]]
    assert (k["claim_en"], k["claim_en_origin"]) == ("Does coffee harm the heart?", "release")
    assert (k["explanation_en"], k["explanation_en_origin"]) == ("No, it does not.", "release")
    assert k["topics"] == ["Ernährung", "Herz"] and k["date"] == "2022-12-05" and k["title"] == "Kaffee"
    z = by_id["zink#0"]
    assert z["source"] == "crawl" and z["evidence_ids"] == [] and z["gold_evidence"] is False
    assert z["claim_en"] == "EN:Hilft Zink?" and z["release_row"] is None
    assert by_id["alt#0"]["source"] == "release"
    assert report.counts["label_differs_from_crawl"] == 1 and report.counts["crawl_without_release_row"] == 1
    # records follow the release order, crawl-only claims last
    assert [r["id"] for r in records] == ["kaffee#0", "alt#0", "neu#0", "zink#0"]


def test_crawl_only_mode_and_no_translator():
    records, report = build_dataset(CLAIMS, ARTICLES, SENTS, None, None, {})
    assert [r["source"] for r in records] == ["crawl", "crawl"]
    assert records[0]["sentences_en"] == ["", "", ""] and records[0]["claim_en"] == ""
    assert report.counts["english/untranslated"] > 0


def test_write_dataset_parquet_jsonl_card(tmp_path):
    alignment = align_release(ROWS, CLAIMS, SENTS, *ALIGN)
    records, _ = build_dataset(CLAIMS, ARTICLES, SENTS, ROWS, alignment, fake_translate)
    write_dataset(records, tmp_path / "d.jsonl", tmp_path / "d.parquet", tmp_path / "card.md", alignment.report(),
                  "crawl+release", None)
    back = list(read_jsonl(tmp_path / "d.jsonl"))
    assert [r["id"] for r in back] == [r["id"] for r in records] and set(back[0]) == set(FIELDS)
    df = pd.read_parquet(tmp_path / "d.parquet")
    assert list(df.columns) == list(FIELDS) and len(df) == 4
    assert list(df.loc[df["id"] == "kaffee#0", "evidence_ids"].iloc[0]) == [1]
    card = (tmp_path / "card.md").read_text(encoding="utf-8")
    assert "| claims | 4 |" in card and "| alignment rate | 100.0 % |" in card
    assert "| crawl+release | 1 |" in card
    meta = yaml.safe_load(card.split("---\n")[1])  # Hugging Face metadata
    assert meta["license"] == "cc-by-nc-nd-4.0" and meta["language"] == ["de", "en"] and meta["size_categories"] == ["n<1K"]
    assert meta["configs"] == [{"config_name": "default", "data_files": [{"split": "train", "path": "d.parquet"}]}]


def test_steps_on_the_demo(tmp_path):
    """release → align → build_dataset → folds → stats on the demo pages (parsed here, no crawl)."""
    arts, claims = parsed_demo_site()
    write_jsonl(tmp_path / "articles.jsonl", arts)
    write_jsonl(tmp_path / "claims.jsonl", claims)
    t = tmp_path
    call_step(steps.release, {"release": str(DEMO_RELEASE)}, {"rows": str(t / "rows.jsonl"), "report": str(t / "rel.json")},
              {"source": None, "sha256": None, "cache_dir": str(t / "cache")})
    call_step(steps.align, {"claims": str(t / "claims.jsonl"), "articles": str(t / "articles.jsonl"), "rows": str(t / "rows.jsonl")},
              {"alignment": str(t / "alignment.jsonl"), "report": str(t / "align.json")}, section("healthfc.align", splitter="pysbd"))
    assert read_json(t / "align.json")["alignment_rate"] == 1.0
    write_jsonl(t / "sentences.jsonl", [])  # no translation step here: the English stays empty, counted
    write_jsonl(t / "claims_en.jsonl", [])
    call_step(steps.dataset,
              {"claims": str(t / "claims.jsonl"), "articles": str(t / "articles.jsonl"), "rows": str(t / "rows.jsonl"),
               "alignment": str(t / "alignment.jsonl"), "align_report": str(t / "align.json"),
               "sentences": str(t / "sentences.jsonl"), "claims_en": str(t / "claims_en.jsonl")},
              {"jsonl": str(t / "ds.jsonl"), "parquet": str(t / "ds.parquet"), "card": str(t / "card.md"), "report": str(t / "ds.json")},
              {"mode": "crawl+release", "splitter": "pysbd"})
    records = list(read_jsonl(t / "ds.jsonl"))
    assert len(records) == 31
    assert sum(r["source"] == "crawl+release" for r in records) == 27
    assert sum(r["gold_evidence"] for r in records) == 28
    ds_report = read_json(t / "ds.json")
    assert ds_report["mode"] == "crawl+release"
    # every release verdict maps to its label; the one verdict updated since the release is listed, the release wins
    assert read_json(t / "rel.json")["verdict_issues"] == []
    assert ds_report["verdict_disagreements"] == [{
        "id": "handy-hirntumor#0", "release_row": 8, "differs": ["label", "evidence_level"],
        "release_verdict": "Studienlage widersprüchlich", "release_label": "NOT ENOUGH INFO", "release_level": "conflicting",
        "crawl_verdict": "Nein, möglicherweise nicht", "crawl_label": "REFUTED", "crawl_level": "low"}]
    handy = next(r for r in records if r["id"] == "handy-hirntumor#0")
    assert (handy["label"], handy["evidence_level"]) == ("NOT ENOUGH INFO", "conflicting")
    kaffee = next(r for r in records if r["id"] == "kaffee-herzrhythmus#0")
    assert [kaffee["sentence_sections"][i] for i in kaffee["evidence_ids"]] == ["body", "body", "body", "studies"]
    assert kaffee["sentence_sections"][-1] == "studies" and len(kaffee["sentence_sections"]) == len(kaffee["sentences_de"])
    call_step(steps.folds, {"dataset": str(t / "ds.jsonl")}, {"folds": str(t / "folds.csv"), "report": str(t / "folds.json")},
              {"scheme": "grouped", "n_splits": 5, "seed": 42})
    folds = pd.read_csv(t / "folds.csv")
    assert list(folds.columns) == ["id", "fold"] and len(folds) == 31 and read_json(t / "folds.json")["straddling_articles"] == 0
    outs = {"table2": t / "t2.csv", "summary": t / "summary.json"}
    for k in ("fig1", "fig2", "fig3"):
        outs[k], outs[f"{k}_data"] = t / f"{k}.png", t / f"{k}.csv"
    assert kaffee["topics_en"] == [""] * len(kaffee["topics"])  # no translation step here: empty, 1:1 with the topics
    call_step(steps.stats, {"dataset": str(t / "ds.jsonl"), "papers": str(PAPERS)}, {k: str(v) for k, v in outs.items()},
              {"top_topics": 10})
    for k in ("fig1", "fig2", "fig3"):
        assert (t / f"{k}.png").stat().st_size > 0 and (t / f"{k}.pdf").stat().st_size > 0
    assert (t / "t2.md").exists() and (t / "t2.tex").exists()
    fig3 = pd.read_csv(t / "fig3.csv")
    assert fig3[fig3["evidence_level"] != "all"]["claims"].sum() == 31
    fig2 = pd.read_csv(t / "fig2.csv", keep_default_na=False)
    assert fig2.loc[0, ["topic", "topic_en", "paper_topic", "paper_share"]].tolist() == [
        "Nahrungsergänzungsmittel", "", "dietary supplements", "0.18"]
    assert read_json(t / "summary.json")["figures"]["fig1"] == {"width": "column", "width_in": 3.3}


def test_build_dataset_step_uses_the_translation_stage_outputs(tmp_path):
    write_jsonl(tmp_path / "claims.jsonl", CLAIMS)
    write_jsonl(tmp_path / "articles.jsonl", ARTICLES)
    topics = {a["article_id"]: a["topics"] for a in ARTICLES}
    write_jsonl(tmp_path / "sentences.jsonl", [
        {"article_id": a, "sentences_de": s, "sentences_en": [f"T:{x}" for x in s],
         "topics_de": topics[a], "topics_en": [f"T:{x}" for x in topics[a]]} for a, s in SENTS.items()])
    write_jsonl(tmp_path / "claims_en.jsonl", [
        {"claim_id": c["claim_id"], "question_de": c["question"], "question_en": "Q?",
         "explanation_de": c["explanation"], "explanation_en": "E."} for c in CLAIMS])
    t = tmp_path
    call_step(steps.dataset,
              {"claims": str(t / "claims.jsonl"), "articles": str(t / "articles.jsonl"),
               "sentences": str(t / "sentences.jsonl"), "claims_en": str(t / "claims_en.jsonl")},
              {"jsonl": str(t / "ds.jsonl"), "parquet": str(t / "ds.parquet"), "card": str(t / "card.md"), "report": str(t / "ds.json")},
              {"mode": "crawl", "splitter": "pysbd"})
    records = {r["id"]: r for r in read_jsonl(t / "ds.jsonl")}
    assert records["kaffee#0"]["sentences_en"] == [f"T:{x}" for x in SENTS["kaffee"]]
    assert records["zink#0"]["claim_en"] == "Q?" and records["zink#0"]["explanation_en"] == "E."
    assert records["kaffee#0"]["topics_en"] == ["T:Ernährung", "T:Herz"]  # 1:1 with topics, from the translation step
    assert read_json(t / "ds.json")["mode"] == "crawl"


# --------------------------------------------------------------------------- verdict disagreements, pairing, release mode


def test_crawl_plus_release_lists_every_verdict_disagreement_with_both_texts():
    claims = [dict(CLAIMS[0], verdict_text="Ja, möglicherweise"), CLAIMS[1]]
    alignment = align_release(ROWS, claims, SENTS, *ALIGN)
    records, report = build_dataset(claims, ARTICLES, SENTS, ROWS, alignment, fake_translate)
    k = next(r for r in records if r["id"] == "kaffee#0")
    assert (k["label"], k["evidence_level"]) == ("REFUTED", "high")  # the release wins
    assert report.as_dict()["verdict_disagreements"] == [{
        "id": "kaffee#0", "release_row": 0, "differs": ["label", "evidence_level"],
        "release_verdict": "Nein", "release_label": "REFUTED", "release_level": "high",
        "crawl_verdict": "Ja, möglicherweise", "crawl_label": "SUPPORTED", "crawl_level": "low",
    }]
    assert report.counts["label_differs_from_crawl"] == 1 and report.counts["level_differs_from_crawl"] == 1


def test_crawl_records_say_which_section_each_sentence_comes_from():
    sections = {"kaffee": ["body", "body", "studies"], "zink": ["body"]}
    records, _ = build_dataset(CLAIMS, ARTICLES, SENTS, None, None, fake_translate, sections)
    assert [r["sentence_sections"] for r in records] == [["body", "body", "studies"], ["body"]]


@pytest.mark.parametrize(
    "de, en, expected",
    [
        (["A eins.", "B zwei.", "C drei."], ["One.", "Two.", "Three."], None),  # equal: unchanged
        (["Ein kurzer Satz.", "Noch ein Satz.", "Ein viel längerer dritter Satz mit vielen Wörtern."],
         ["A short sentence and another one.", "A much longer third sentence with many words."],
         (["Ein kurzer Satz. Noch ein Satz.", "Ein viel längerer dritter Satz mit vielen Wörtern."],
          ["A short sentence and another one.", "A much longer third sentence with many words."])),
        (["Ein langer erster Satz über die Studie, z. B. ihre Größe.", "Kurz."],
         ["A long first sentence about the study, e.", "g.", "its size.", "Short."],
         (["Ein langer erster Satz über die Studie, z. B. ihre Größe.", "Kurz."],
          ["A long first sentence about the study, e. g. its size.", "Short."])),
        (["Nur Deutsch."], [], (["Nur Deutsch."], [])),
    ],
)
def test_pair_sentences_regroups_the_longer_side(de, en, expected):
    from medfc.healthfc.dataset import pair_sentences

    got = pair_sentences(de, en)
    assert got == (expected if expected is not None else (de, en))
    assert " ".join(got[0]) == " ".join(de) and " ".join(got[1]) == " ".join(en)


def _release_mode(t, rows_path=None):
    rows_path = rows_path or t / "rows.jsonl"
    if not rows_path.exists():
        call_step(steps.release, {"release": str(DEMO_RELEASE)}, {"rows": str(rows_path), "report": str(t / "rel.json")},
                  {"source": None, "sha256": None, "cache_dir": str(t / "cache")})
    outs = {"jsonl": str(t / "ds.jsonl"), "parquet": str(t / "ds.parquet"), "card": str(t / "card.md"), "report": str(t / "ds.json")}
    call_step(steps.dataset, {"rows": str(rows_path)}, outs, {"mode": "release", "splitter": "pysbd"})
    return list(read_jsonl(t / "ds.jsonl")), read_json(t / "ds.json")


@pytest.fixture
def no_model(monkeypatch):
    """Any attempt to create a translator, of any registered backend, would be recorded (none may happen in
    the dataset step)."""
    import dataclasses

    from medfc.healthfc.translation_backends import TRANSLATION_BACKENDS

    created = []
    for name, backend in list(TRANSLATION_BACKENDS.items()):
        monkeypatch.setitem(TRANSLATION_BACKENDS, name, dataclasses.replace(backend, build=lambda o, n=name: created.append(n) or None))
    return created


def test_release_mode_on_the_demo_runs_offline_from_the_release_english(tmp_path, no_model):
    """The 12-column release has English claims, explanations and evidence: nothing is translated, no
    model is created, and the English is the release's own."""
    records, report = _release_mode(tmp_path)
    assert no_model == [] and report["mode"] == "release"
    assert len(records) == 28 and {r["source"] for r in records} == {"release"}
    assert report["counts"]["english/unique_texts"] == 0 and "english/untranslated" not in report["counts"]
    from medfc.healthfc.release import read_release

    rows, _ = read_release(DEMO_RELEASE)
    for rec, row in zip(records, rows):
        assert rec["claim_en"] == row.en_claim and rec["claim_en_origin"] == "release"
        assert rec["explanation_en"] == row.en_explanation
        assert rec["explanation_en_origin"] == ("release" if row.en_explanation else None)
        assert " ".join(rec["sentences_en"]) == " ".join(row.en_evidence) and rec["sentences_en_origin"] == "release"
        assert " ".join(rec["sentences_de"]) == " ".join(row.de_evidence)
        assert len(rec["sentences_en"]) == len(rec["sentences_de"]) and rec["evidence_ids"] == list(range(len(rec["sentences_de"])))
    kaffee = next(r for r in records if r["url"].endswith("/kaffee-herzrhythmus/"))
    assert kaffee["sentences_en"][-1] == "It found no association between the daily amount of coffee and the risk of atrial fibrillation."
    assert kaffee["label"] == "REFUTED" and kaffee["evidence_level"] == "moderate"  # from "wahrscheinlich Nein"


def test_release_mode_leaves_what_the_release_lacks_empty_and_counted(tmp_path, no_model):
    """Release mode never translates (it needs no model and no network): a text the release has no
    English for stays empty and is counted as untranslated; the run goes on."""
    from medfc.healthfc.release import read_release

    rows, _ = read_release(DEMO_RELEASE)
    rows[0].en_claim = ""
    rows[1].en_explanation = ""
    rows_path = tmp_path / "rows.jsonl"
    write_jsonl(rows_path, [asdict(r) for r in rows])
    records, report = _release_mode(tmp_path, rows_path)
    assert no_model == []
    assert (records[0]["claim_en"], records[0]["claim_de"] != "") == ("", True)
    assert records[1]["explanation_en"] == "" and records[1]["explanation_de"]
    assert report["counts"]["english/unique_texts"] == 2 and report["counts"]["english/untranslated"] == 2


def test_sentence_lists_are_always_article_sentences_and_a_stale_translated_list_is_logged(caplog):
    from medfc.healthfc.dataset import sentences_by_article

    art = dict(ARTICLES[0], studies="Eine Studie lief zwei Wochen.")
    stale = [{"article_id": "kaffee", "sentences_de": SENTS["kaffee"]}]  # an older body-only list
    with caplog.at_level("WARNING"):
        sentences, sections = sentences_by_article([art, ARTICLES[1]], stale)
    assert sentences["kaffee"] == SENTS["kaffee"] + ["Eine Studie lief zwei Wochen."]
    assert sections["kaffee"] == ["body", "body", "body", "studies"] and sections["zink"] == ["body"]
    assert "1 translated sentence lists differ" in caplog.text and "kaffee" in caplog.text
