"""Table 2 and the numbers behind Figs. 1–3 on a constructed dataset; the figures are written."""

import pytest

import pandas as pd

import medfc.common.plots as plots
from medfc.healthfc import figures
from medfc.healthfc.stats import (claims_per_year, fig1_table, fig2_table, fig3_table, level_by_verdict, merge_topics,
                                  table2, top_topics, topic_key)
from medfc.common.papers import read_paper_numbers
from tests.helpers.figures import (PAPERS, capture, drawn_texts, inside, off_page, overlap, pdf_font_types, pdf_page_inches,
                                   smallest_font)

PAPER = read_paper_numbers(PAPERS)["healthfc"]["figures"]


TOPICS_EN = {"Ernährung": "Nutrition", "Herz": "Heart", "Haut": "Skin"}  # as the translation step gives them


def rec(rid, url, label, level, date, topics, sents_de, sents_en, ev, expl_de="", expl_en="", source="crawl+release"):
    return {"id": rid, "url": url, "label": label, "evidence_level": level, "date": date, "topics": topics,
            "topics_en": [TOPICS_EN[t] for t in topics],
            "sentences_de": sents_de, "sentences_en": sents_en, "evidence_ids": ev, "gold_evidence": bool(ev),
            "explanation_de": expl_de, "explanation_en": expl_en, "source": source}


A = "https://www.medizin-transparent.at/a/"
B = "https://www.medizin-transparent.at/b/"
C = "https://www.medizin-transparent.at/c/"
SA_DE = ["Eins zwei drei.", "Vier fünf.", "Sechs."]          # 6 words
SA_EN = ["One two three.", "Four five.", "Six seven."]         # 7 words
SB_DE = ["Ein Satz hier.", "Noch einer da.", "Drei.", "Vier."]  # 8 words
SB_EN = ["A sentence here.", "Another one there.", "Three.", "Four."]  # 8 words

RECORDS = [
    rec("a#0", A, "SUPPORTED", "low", "2016-05-01", ["Ernährung", "Herz"], SA_DE, SA_EN, [0, 1],
        "Kurze Erklärung hier.", "A short explanation here."),
    rec("a#1", A, "REFUTED", "high", "2016-05-01", ["Ernährung", "Herz"], SA_DE, SA_EN, [2], "Zwei Wörter.", "Two words."),
    rec("b#0", B, "NOT ENOUGH INFO", "insufficient", "2018-01-01", ["Ernährung"], SB_DE, SB_EN, [0, 1, 3]),
    rec("c#0", C, "NOT ENOUGH INFO", "conflicting", None, ["Haut"], ["Nur Evidenz."], ["Only evidence."], [0],
        "Eins.", "One.", source="release"),
    rec("d#0", "https://www.medizin-transparent.at/d/", "SUPPORTED", "moderate", "2018-07-07", [], SB_DE, SB_EN, [],
        source="crawl"),
]


def row(df, aspect, lang):
    return df[(df["aspect"] == aspect) & (df["language"] == lang)].iloc[0]


def test_table2_numbers():
    df = table2(RECORDS)
    ev = row(df, "evidence sentences per claim", "en")  # claims with gold evidence: 2, 1, 3, 1
    assert (ev["n"], ev["mean"], ev["min"], ev["max"]) == (4, 1.75, 1, 3)
    assert ev["std"] == pytest.approx(0.96, abs=0.01)
    assert ev["paper_mean"] == 3.4
    # articles with full text: a, b, d (c is release-only) → 3, 4, 4 sentences
    sp = row(df, "sentences per article", "de")
    assert (sp["n"], sp["mean"], sp["min"], sp["max"]) == (3, pytest.approx(3.67, abs=0.01), 3, 4)
    assert pd_isna(sp["paper_mean"])
    assert (row(df, "words per article", "de")["min"], row(df, "words per article", "de")["max"]) == (6, 8)
    assert (row(df, "words per article", "en")["min"], row(df, "words per article", "en")["max"]) == (7, 8)
    ex = row(df, "words per explanation", "en")  # 4, 2, 1 words
    assert (ex["n"], ex["mean"], ex["min"], ex["max"]) == (3, pytest.approx(2.33, abs=0.01), 1, 4)
    # evidence words (de): a#0 "Eins zwei drei." + "Vier fünf." = 5; a#1 "Sechs." = 1; b#0 3+3+1 = 7; c#0 2
    ew = row(df, "words of evidence per claim", "de")
    assert (ew["n"], ew["mean"], ew["min"], ew["max"]) == (4, 3.75, 1, 7)


def pd_isna(x):
    import pandas as pd

    return pd.isna(x)


def test_claims_per_year_fills_gaps_and_counts_undated():
    df, undated = claims_per_year(RECORDS)
    assert df.to_dict("records") == [
        {"year": 2016, "claims": 2, "articles": 1},
        {"year": 2017, "claims": 0, "articles": 0},
        {"year": 2018, "claims": 2, "articles": 2},
    ]
    assert undated == 1


def test_top_topics_shares():
    df = top_topics(RECORDS, k=2)
    assert df.to_dict("records") == [
        {"topic": "Ernährung", "topic_en": "Nutrition", "claims": 3, "share": 0.6, "variants": "Ernährung"},
        {"topic": "Herz", "topic_en": "Heart", "claims": 2, "share": 0.4, "variants": "Herz"},
    ]


def test_level_by_verdict_grid():
    df = level_by_verdict(RECORDS)
    assert len(df) == 15 and df["claims"].sum() == 5
    got = {(r["label"], r["evidence_level"]): r["claims"] for r in df.to_dict("records") if r["claims"]}
    assert got == {("SUPPORTED", "low"): 1, ("SUPPORTED", "moderate"): 1, ("REFUTED", "high"): 1,
                   ("NOT ENOUGH INFO", "insufficient"): 1, ("NOT ENOUGH INFO", "conflicting"): 1}
    assert df["label"].tolist()[:5] == ["SUPPORTED"] * 5


def test_figures_written_as_png_and_pdf_at_column_width_with_truetype_fonts(tmp_path):
    per_year, _ = fig1_table(RECORDS, PAPER)
    paths = (figures.plot_claims_per_year(per_year, tmp_path / "fig1")
             + figures.plot_top_topics(fig2_table(RECORDS, 10, PAPER), tmp_path / "fig2")
             + figures.plot_level_by_verdict(fig3_table(RECORDS, PAPER), tmp_path / "fig3"))
    assert [p.name for p in paths] == ["fig1.png", "fig1.pdf", "fig2.png", "fig2.pdf", "fig3.png", "fig3.pdf"]
    for p in paths:
        head = p.read_bytes()[:8]
        assert head.startswith(b"\x89PNG") if p.suffix == ".png" else head.startswith(b"%PDF")
    for pdf in paths[1::2]:
        assert pdf_page_inches(pdf)[0] == 3.3  # the page is the printed size: nothing cropped or scaled
        assert pdf_font_types(pdf) and not {"Type 3", "Type3"} & pdf_font_types(pdf)
    # a rerun writes the same bytes
    first = paths[1].read_bytes()
    figures.plot_claims_per_year(per_year, tmp_path / "fig1")
    assert paths[1].read_bytes() == first


@pytest.mark.parametrize("plot", ["fig1", "fig2", "fig3"])
def test_no_text_under_7pt_at_the_printed_size(monkeypatch, plot):
    figs = capture(monkeypatch, figures)
    years = pd.DataFrame({"year": range(2008, 2023), "claims": [9, 40, 60, 75, 80, 85, 100, 120, 105, 88, 90, 85, 80, 82, 40],
                          "articles": [9, 40, 60, 75, 80, 85, 100, 120, 105, 88, 90, 85, 80, 82, 40]})
    {"fig1": lambda: figures.plot_claims_per_year(years, "unused"),
     "fig2": lambda: figures.plot_top_topics(fig2_table(RECORDS, 10, PAPER), "unused"),
     "fig3": lambda: figures.plot_level_by_verdict(fig3_table(RECORDS, PAPER), "unused")}[plot]()
    fig = figs[0]
    assert fig.get_size_inches()[0] == pytest.approx(3.3)
    assert smallest_font(fig) >= 7 and off_page(fig) == []
    if plot == "fig1":  # 15 years of three-digit counts do not fit above the bars at 7 pt: left to the table
        assert not [t for t, _ in drawn_texts(fig.axes[0])]


def test_the_papers_numbers_beside_ours():
    fig1, _ = fig1_table(RECORDS, PAPER)
    assert fig1.set_index("year")["paper_articles"].dropna().to_dict() == {2016: 105}  # the one year the paper names
    recs = [{"topics": ["Nahrungsergänzungsmittel", "Ernährung"], "topics_en": ["Dietary supplements", "Nutrition"]},
            {"topics": ["Nahrungsergänzung"], "topics_en": ["Supplements"]}, {"topics": ["Haut"], "topics_en": ["Skin"]}]
    fig2 = fig2_table(recs, 10, PAPER)
    assert fig2[["topic", "topic_en", "paper_topic", "paper_share"]].fillna("").to_dict("records") == [
        {"topic": "Nahrungsergänzung", "topic_en": "Supplements", "paper_topic": "dietary supplements", "paper_share": 0.18},
        {"topic": "Ernährung", "topic_en": "Nutrition", "paper_topic": "nutrition", "paper_share": 0.15},
        {"topic": "Haut", "topic_en": "Skin", "paper_topic": "", "paper_share": ""}]
    fig3 = fig3_table(RECORDS, PAPER)
    totals = fig3[fig3["evidence_level"] == "all"].set_index("label")
    assert totals["paper_claims"].to_dict() == {"SUPPORTED": 202, "REFUTED": 125, "NOT ENOUGH INFO": 423}
    assert totals["claims"].to_dict() == {"SUPPORTED": 2, "REFUTED": 1, "NOT ENOUGH INFO": 2}


# --------------------------------------------------------------------------- near-duplicate topics


def test_near_duplicate_topics_are_merged_by_the_documented_normalisation():
    topics = ["Nahrungsergänzungsmittel", "Nahrungsergänzung", "Herz & Kreislauf", "Herz und Kreislauf", "herz-und-kreislauf",
              "Impfung", "Impfungen", "Vitamin", "Vitamine", "Schmerz", "Schmerzmittel", "Impfen", "Krebs"]
    merged = merge_topics(topics, {"Nahrungsergänzungsmittel": 3, "Nahrungsergänzung": 5})
    assert merged["Nahrungsergänzungsmittel"] == merged["Nahrungsergänzung"] == "Nahrungsergänzung"  # more claims
    assert merged["Herz und Kreislauf"] == merged["herz-und-kreislauf"] == "Herz & Kreislauf"
    assert merged["Impfungen"] == "Impfung" and merged["Vitamine"] == "Vitamin" and merged["Schmerzmittel"] == "Schmerz"
    assert merged["Impfen"] == "Impfen" and merged["Krebs"] == "Krebs"  # not a listed ending: kept apart
    assert topic_key("Herz & Kreislauf") == topic_key("herz und kreislauf") == "herzundkreislauf"


def test_top_topics_count_a_merged_topic_once_per_claim():
    recs = [{"topics": ["Ernährung", "Nahrungsergänzung", "Nahrungsergänzungsmittel"]},
            {"topics": ["Nahrungsergänzungsmittel"]}, {"topics": ["Nahrungsergänzung"]}, {"topics": []}]
    df = top_topics(recs, k=2)
    assert df.to_dict("records") == [
        {"topic": "Nahrungsergänzung", "topic_en": "", "claims": 3, "share": 0.75, "variants": "Nahrungsergänzung; Nahrungsergänzungsmittel"},
        {"topic": "Ernährung", "topic_en": "", "claims": 1, "share": 0.25, "variants": "Ernährung"},
    ]


# --------------------------------------------------------------------------- the figures as a reader sees them

REAL_LEVELS = {"SUPPORTED": {"high": 15, "moderate": 70, "low": 117}, "REFUTED": {"high": 18, "moderate": 42, "low": 65},
               "NOT ENOUGH INFO": {"insufficient": 401, "conflicting": 22}}


DEMO_LEVELS = {"SUPPORTED": {"low": 13}, "REFUTED": {"high": 8}, "NOT ENOUGH INFO": {"insufficient": 9}}


@pytest.mark.parametrize("levels, totals", [(REAL_LEVELS, ["202", "125", "423"]), (DEMO_LEVELS, ["13", "8", "9"])])
def test_fig3_totals_stay_inside_the_frame(monkeypatch, levels, totals):
    figs = capture(monkeypatch, figures)
    rows = [{"label": lab, "evidence_level": lv, "claims": n} for lab, lvs in levels.items() for lv, n in lvs.items()]
    figures.plot_level_by_verdict(pd.DataFrame(rows), "unused")
    ax = figs[0].axes[0]
    texts = drawn_texts(ax)
    assert [t for t, _ in texts] == totals
    frame = ax.get_window_extent()
    assert all(inside(box, frame) and box.y1 <= frame.y1 - 3 for _, box in texts)  # clear of the frame
    assert all(float(t).is_integer() for t in ax.get_yticks())


def test_fig1_labels_never_collide_and_the_count_axis_has_whole_numbers(monkeypatch):
    figs = capture(monkeypatch, figures)
    df = pd.DataFrame({"year": [2012, 2013, 2014, 2015], "claims": [3, 4, 0, 1], "articles": [3, 3, 0, 1]})
    figures.plot_claims_per_year(df, "unused")
    ax = figs[0].axes[0]
    texts = drawn_texts(ax)
    assert sorted(t for t, _ in texts) == sorted(["3", "4", "1", "3", "3", "1"])  # no "0" for the empty year
    frame = ax.get_window_extent()
    assert all(inside(box, frame) for _, box in texts)
    assert not any(overlap(a, b) for i, (_, a) in enumerate(texts) for _, b in texts[i + 1:])
    assert not [ln for ln in ax.get_lines() if ln.get_marker() not in (None, "None", "")]  # no markers to collide with
    assert all(float(t).is_integer() for t in ax.get_yticks())


def test_fig2_share_labels_stay_inside_the_frame(monkeypatch):
    figs = capture(monkeypatch, figures)
    df = pd.DataFrame({"topic": ["Ernährung", "Nahrungsergänzung", "Krebs"], "claims": [195, 120, 80]})
    df["share"] = (df["claims"] / 750).round(4)
    figures.plot_top_topics(df, "unused")
    ax = figs[0].axes[0]
    texts = drawn_texts(ax)
    assert [t for t, _ in texts] == ["26 %", "16 %", "11 %"]
    assert all(inside(box, ax.get_window_extent()) for _, box in texts)


def test_fig2_names_topics_in_english_draws_the_papers_shares_and_says_they_pass_100(monkeypatch):
    figs = capture(monkeypatch, figures)
    figures.plot_top_topics(fig2_table(RECORDS, 10, PAPER), "unused")
    fig = figs[0]
    ax = fig.axes[0]
    assert [t.get_text() for t in ax.get_yticklabels()] == ["Nutrition", "Heart", "Skin"]
    assert [round(p.get_width()) for p in ax.patches if p.get_hatch()] == [15]  # the paper's "nutrition" 15 %
    assert "add up to 120 %, not 100 %" in fig._supxlabel.get_text().replace("\n", " ")


def test_fig3_shows_the_papers_totals_beside_ours(monkeypatch):
    figs = capture(monkeypatch, figures)
    figures.plot_level_by_verdict(fig3_table(RECORDS, PAPER), "unused")
    ax = figs[0].axes[0]
    assert [t for t, _ in drawn_texts(ax)] == ["2\npaper: 202", "1\npaper: 125", "2\npaper: 423"]
    assert all(inside(box, ax.get_window_extent()) for _, box in drawn_texts(ax))
