"""The parser on hand-written pages of each layout: exact fields, and every skip reason."""

import pytest

from medfc.healthfc.parse import PageSkipped, parse_page, parse_people

HEAD = '<!DOCTYPE html><html lang="de"><head><meta charset="utf-8"><title>{t} | Medizin Transparent</title></head><body>'
NAV = '<nav class="breadcrumb"><a href="/">Startseite</a> › <a href="/themen/ernaehrung/">Ernährung</a> › <span>x</span></nav>'
TAIL = '<div class="post-tags"><a rel="tag" href="/tag/kaffee/">Kaffee</a><a rel="tag" href="/tag/ernaehrung/">Ernährung</a></div></article></body></html>'

CURRENT = HEAD.format(t="Kaffee &amp; Herz") + NAV + """
<article class="pods-post-page">
<h1 class="pods-post-page__title">Kaffee &amp; Herz</h1>
<div class="pods-post-page__teaser"><p>Schadet   Kaffee dem Herzen?</p></div>
<div class="lastedited">zuletzt aktualisiert: 5. Dezember 2022</div>
<!-- Autoren -->
<div class="pods-post-page__authors"><p>AutorIn: Anna Muster, Bernd Beispiel und Cora Test</p><p>Review: Dora Prüf</p></div>
<!-- SECTION END -->
<div class="katechismus">
  <div class="katechismus__question"><strong>Frage:</strong> Verursacht Kaffee Herzrhythmusstörungen?</div>
  <div class="katechismus__answer" data-answer="9"><span class="katechismus__answer-text">Nein, wahrscheinlich nicht</span></div>
  <div class="katechismus__explanation"><strong>Erklärung:</strong> Studien zeigen keinen Zusammenhang.</div>
</div>
<div class="katechismus">
  <div class="katechismus__question"><strong>Frage:</strong> Senkt Kaffee das Risiko?</div>
  <div class="katechismus__answer"><span class="katechismus__answer-text">Ja, möglicherweise ein bisschen</span></div>
  <div class="katechismus__explanation"><strong>Erklärung:</strong> Ein kleiner Effekt ist möglich.</div>
</div>
<div class="pods-post-page__content"><h2>Was wir wissen</h2><p>Erster Satz z. B. mit Abkürzung.<sup>1</sup> Zweiter Satz.</p>
<ul><li>Punkt eins</li><li>Punkt zwei</li></ul><p>Letzter Absatz.</p></div>
<div class="pods-post-page__study-detail"><h3>Studien im Detail</h3><p>Eine Meta-Analyse mit 12 Studien.</p></div>
<div class="collapse" id="collapseFussnote"><ol><li>Muster A et al. Kaffee. BMJ 2020.</li><li>Test C. Herz. 2019.</li></ol></div>
""" + TAIL

OLD = HEAD.format(t="Hilft Zink?") + """
<article class="post"><h1 class="entry-title">Hilft Zink?</h1>
<div class="lastedited">zuletzt aktualisiert: 3. März 2016</div>
<p class="teaser"><strong>Zink gegen Erkältung</strong></p>
<table class="table_rating"><tbody>
<tr><td>Frage:</td><td>Verkürzt Zink eine Erkältung?</td></tr>
<tr><td>Antwort:</td><td>wahrscheinlich</td></tr>
<tr><td>Erklärung:</td><td>Mehrere Studien deuten darauf hin.</td></tr>
</tbody></table>
<p>Text eins.</p><h3>Zwischentitel</h3><p>Text zwei.</p>
<h3>Ergebnisse aus den wissenschaftlichen Studien</h3>
<!-- Studien im Detail -->
<p>Studie A fand einen Effekt.</p><p>Studie B nicht.</p>
<!-- Autoren -->
<p>Autor: Eva Schreib und Fritz Feder</p><p>Review: Gerd Gut</p>
<!-- SECTION END -->
""" + TAIL

PRE2014 = HEAD.format(t="Omega-3 und Demenz") + """
<article class="post"><h1 class="entry-title">Omega-3 und Demenz</h1>
<div class="lastedited">zuletzt aktualisiert: 12. Mai 2013</div>
<p class="teaser">Fischöl fürs Gehirn?</p>
<table class="table_rating"><tbody>
<tr><td>Frage:</td><td>Schützt Fischöl vor Demenz?</td></tr>
<tr><td>Antwort:</td><td>Die Studien zeigen keinen Schutz.</td></tr>
<tr><td>Beweislage:</td><td>Mittlere wissenschaftliche Beweislage dagegen</td></tr>
</tbody></table>
<p>Ein Absatz.</p>
<h4>Was sagen die Ergebnisse aus den wissenschaftlichen Studien?</h4>
<!-- Studien im Detail --><p>Drei Studien.</p><!-- Autoren --><p>Autorin: Hanna Hand</p><!-- SECTION END -->
""" + TAIL


def test_current_layout_exact_fields():
    a = parse_page("https://www.medizin-transparent.at/kaffee-herz/", CURRENT)
    assert a.layout == "current"
    assert a.article_id == "kaffee-herz"
    assert a.title == "Kaffee & Herz"
    assert a.date == "2022-12-05"
    assert a.authors == ["Anna Muster", "Bernd Beispiel", "Cora Test"]
    assert a.reviewers == ["Dora Prüf"]
    assert a.teaser == "Schadet Kaffee dem Herzen?"
    assert a.body_paragraphs == ["Was wir wissen", "Erster Satz z. B. mit Abkürzung. Zweiter Satz.", "Punkt eins", "Punkt zwei", "Letzter Absatz."]
    assert a.studies == "Eine Meta-Analyse mit 12 Studien."
    assert a.references == ["Muster A et al. Kaffee. BMJ 2020.", "Test C. Herz. 2019."]
    assert a.topics == ["Ernährung", "Kaffee"]
    assert [(c.question, c.verdict_text, c.answer_index, c.label, c.evidence_level, c.small_effect, c.explanation) for c in a.claims] == [
        ("Verursacht Kaffee Herzrhythmusstörungen?", "Nein, wahrscheinlich nicht", 9, "REFUTED", "moderate", False,
         "Studien zeigen keinen Zusammenhang."),
        ("Senkt Kaffee das Risiko?", "Ja, möglicherweise ein bisschen", 4, "SUPPORTED", "low", True, "Ein kleiner Effekt ist möglich."),
    ]
    assert [c.claim_id for c in a.claims] == ["kaffee-herz#0", "kaffee-herz#1"]


def test_2014_2017_layout_exact_fields():
    a = parse_page("https://www.medizin-transparent.at/zink/", OLD)
    assert a.layout == "2014_2017"
    assert (a.title, a.date, a.teaser) == ("Hilft Zink?", "2016-03-03", "Zink gegen Erkältung")
    assert a.body_paragraphs == ["Text eins.", "Zwischentitel", "Text zwei."]
    assert a.studies == "Studie A fand einen Effekt.\n\nStudie B nicht."
    assert (a.authors, a.reviewers) == (["Eva Schreib", "Fritz Feder"], ["Gerd Gut"])
    (c,) = a.claims
    assert (c.question, c.verdict_text, c.answer_index, c.label, c.evidence_level, c.explanation) == (
        "Verkürzt Zink eine Erkältung?", "wahrscheinlich", None, "SUPPORTED", "moderate", "Mehrere Studien deuten darauf hin.")


def test_pre2014_layout_reads_beweislage_and_answer_as_explanation():
    a = parse_page("https://www.medizin-transparent.at/omega-3-demenz/", PRE2014)
    assert a.layout == "pre_2014"
    assert a.body_paragraphs == ["Ein Absatz."]
    assert a.studies == "Drei Studien."
    assert a.authors == ["Hanna Hand"]
    (c,) = a.claims
    assert (c.verdict_text, c.label, c.evidence_level, c.explanation) == (
        "Mittlere wissenschaftliche Beweislage dagegen", "REFUTED", "moderate", "Die Studien zeigen keinen Schutz.")


@pytest.mark.parametrize(
    "html, status, reason",
    [
        (CURRENT[: len(CURRENT) // 2], 200, "truncated_html"),
        (HEAD.format(t="Liste") + "".join(f'<a href="/a{i}/">A{i}</a>' for i in range(10)) + "</body></html>", 200, "listing_page"),
        (HEAD.format(t="Ohne") + "<p>Nur Text.</p></body></html>", 200, "no_verdict_box"),
        ("", 200, "empty_page"),
        (CURRENT, 404, "http_404"),
        (CURRENT.replace('data-answer="9"', 'data-answer="7"').replace("Ja, möglicherweise ein bisschen", "Vielleicht"), 200, "no_valid_claim"),
    ],
)
def test_pages_that_yield_no_article_name_their_reason(html, status, reason):
    with pytest.raises(PageSkipped) as exc:
        parse_page("https://www.medizin-transparent.at/x/", html, status)
    assert exc.value.reason == reason


def test_one_bad_claim_is_reported_and_the_other_kept():
    html = CURRENT.replace("Ja, möglicherweise ein bisschen", "Vielleicht")
    a = parse_page("https://www.medizin-transparent.at/kaffee-herz/", html)
    assert [c.claim_index for c in a.claims] == [0]
    assert len(a.problems) == 1 and a.problems[0].startswith("unknown_verdict")


def test_people_split_on_commas_and_und():
    assert parse_people("AutorIn: A Eins, B Zwei und C Drei Review: D Vier und E Fünf") == (
        ["A Eins", "B Zwei", "C Drei"], ["D Vier", "E Fünf"])


# ---- variants of the real pages (SOURCES §1) that the demo's markup does not show

def _current_page(box_inner: str) -> str:
    return CURRENT.split('<div class="katechismus">')[0] + f'<div class="katechismus">{box_inner}</div>' + \
        '<div class="pods-post-page__content"><p>Text.</p></div>' + TAIL


@pytest.mark.parametrize("answer, verdict_text, index", [("9", "", 9), ("Nein, wahrscheinlich nicht", "Nein, wahrscheinlich nicht", 9),
                                                          ("Ja, möglicherweise", "Ja, möglicherweise", 1)])
def test_a_verdict_box_of_plain_text_pieces_gives_question_answer_and_explanation(answer, verdict_text, index):
    """The box as text: "Frage:", the question, the selected answer (its index, or its text, with no
    "Antwort:" label), "Erklärung:", the explanation; each in its own paragraph."""
    a = parse_page("https://www.medizin-transparent.at/x/", _current_page(
        f"<p>Frage:</p><p>Hilft X gegen Y?</p><p>{answer}</p><p>Erklärung:</p><p>Kurze Erklärung.</p><p>Zweiter Satz.</p>"))
    (c,) = a.claims
    assert (c.question, c.verdict_text, c.answer_index, c.explanation) == ("Hilft X gegen Y?", verdict_text, index, "Kurze Erklärung. Zweiter Satz.")


def test_an_answer_element_holding_the_index_as_text():
    a = parse_page("https://www.medizin-transparent.at/x/", _current_page(
        '<div class="katechismus__question">Frage: Hilft X?</div><div class="katechismus__answer">10</div>'
        '<div class="katechismus__explanation">Erklärung: E.</div>'))
    (c,) = a.claims
    assert (c.answer_index, c.label, c.evidence_level) == (10, "REFUTED", "high")


def _pre2014(rows: str) -> str:
    return PRE2014.split("<tbody>")[0] + f"<tbody>{rows}</tbody></table><p>Ein Absatz.</p></article></body></html>"


@pytest.mark.parametrize("beweislage_rows", [
    "<tr><td>Beweislage:</td><td><strong>Mittlere wissenschaftliche Beweislage</strong><br>für die Wirksamkeit</td></tr>",
    "<tr><td>Beweislage:</td><td><p>Mittlere wissenschaftliche Beweislage</p><p>für die Wirksamkeit</p></td></tr>",
    "<tr><td>Beweislage:</td><td>Mittlere wissenschaftliche Beweislage</td></tr><tr><td></td><td>für die Wirksamkeit</td></tr>",
])
def test_a_pre2014_direction_in_its_own_line_or_row_joins_its_level(beweislage_rows):
    a = parse_page("https://www.medizin-transparent.at/x/", _pre2014(
        "<tr><td>Frage:</td><td>Hilft X?</td></tr><tr><td>Antwort:</td><td>Erkl.</td></tr>" + beweislage_rows))
    (c,) = a.claims
    assert (c.verdict_text, c.label, c.evidence_level, c.explanation) == (
        "Mittlere wissenschaftliche Beweislage | für die Wirksamkeit", "SUPPORTED", "moderate", "Erkl.")


def test_several_questions_in_one_rating_table_are_several_claims_sharing_the_explanation():
    html = OLD.replace("""<tr><td>Frage:</td><td>Verkürzt Zink eine Erkältung?</td></tr>
<tr><td>Antwort:</td><td>wahrscheinlich</td></tr>""", """<tr><td>Frage:</td><td>Verkürzt Zink eine Erkältung?</td></tr>
<tr><td>Antwort:</td><td>wahrscheinlich</td></tr>
<tr><td>Frage:</td><td>Verhindert Zink eine Erkältung?</td></tr>
<tr><td>Antwort:</td><td>wissenschaftliche Belege fehlen</td></tr>
<tr><td><strong>Frage:</strong> Schadet Zink?</td></tr>
<tr><td><strong>Antwort:</strong> möglicherweise Nein</td></tr>""")
    a = parse_page("https://www.medizin-transparent.at/zink/", html)
    assert [(c.question, c.label, c.evidence_level, c.explanation) for c in a.claims] == [
        ("Verkürzt Zink eine Erkältung?", "SUPPORTED", "moderate", "Mehrere Studien deuten darauf hin."),
        ("Verhindert Zink eine Erkältung?", "NOT ENOUGH INFO", "insufficient", "Mehrere Studien deuten darauf hin."),
        ("Schadet Zink?", "REFUTED", "low", "Mehrere Studien deuten darauf hin.")]
    assert a.problems == []


def test_a_second_answer_without_its_question_is_reported_not_merged():
    html = OLD.replace("<tr><td>Antwort:</td><td>wahrscheinlich</td></tr>",
                       "<tr><td>Antwort:</td><td>wahrscheinlich</td></tr><tr><td>Antwort:</td><td>Nein</td></tr>")
    a = parse_page("https://www.medizin-transparent.at/zink/", html)
    assert [c.verdict_text for c in a.claims] == ["wahrscheinlich"] and a.problems == ["verdict_box_without_question"]


def test_sections_closed_by_their_own_marker_and_values_that_repeat_their_label():
    html = OLD.replace("<p>Studie B nicht.</p>", "<p>Studie B nicht.</p><!-- Studien im Detail END --><p>Teilen Sie den Artikel</p>").replace(
        "<tr><td>Frage:</td><td>Verkürzt", "<tr><td>Frage:</td><td>Frage: Verkürzt")
    a = parse_page("https://www.medizin-transparent.at/zink/", html)
    assert a.studies == "Studie A fand einen Effekt.\n\nStudie B nicht."
    assert [c.question for c in a.claims] == ["Verkürzt Zink eine Erkältung?"] and a.problems == []


def test_a_wrapped_rating_table_and_commented_sections_with_more_words():
    html = OLD.replace('<table class="table_rating">', '<div class="rating"><table class="table_rating">').replace(
        "</tbody></table>", "</tbody></table></div>").replace("<!-- Studien im Detail -->", "<!-- Studien im Detail START -->").replace(
        "<!-- Autoren -->", "<!-- Autoren: Beginn -->")
    a = parse_page("https://www.medizin-transparent.at/zink/", html)
    assert a.body_paragraphs == ["Text eins.", "Zwischentitel", "Text zwei."]
    assert a.studies == "Studie A fand einen Effekt.\n\nStudie B nicht."
    assert (a.authors, a.reviewers) == (["Eva Schreib", "Fritz Feder"], ["Gerd Gut"])


def test_people_labels_in_female_and_plural_forms_and_role_words_inside_names():
    assert parse_people("Autorin: A Eins Reviewerin: C Drei") == (["A Eins"], ["C Drei"])
    assert parse_people("AutorInnen: A Eins ReviewerInnen: C Drei, D Vier") == (["A Eins"], ["C Drei", "D Vier"])
    # a role word without its colon is part of a name
    assert parse_people("AutorIn: Redaktion Medizin Transparent Review: Bernd Kerschner (Cochrane Review Österreich)") == (
        ["Redaktion Medizin Transparent"], ["Bernd Kerschner (Cochrane Review Österreich)"])


@pytest.mark.parametrize("box", [
    "<p><strong>Frage:</strong> Hilft X? <strong>Antwort:</strong> Nein, wahrscheinlich nicht <strong>Erklärung:</strong> Kurz.</p>",
    "Frage: Hilft X? Antwort: Nein, wahrscheinlich nicht Erklärung: Kurz.",
    "<span>Frage:</span> Hilft X? <span>Antwort:</span> Nein, wahrscheinlich nicht <span>Erklärung:</span> Kurz.",
])
def test_a_verdict_box_with_its_labels_inside_one_paragraph(box):
    (c,) = parse_page("https://www.medizin-transparent.at/x/", _current_page(box)).claims
    assert (c.question, c.verdict_text, c.answer_index, c.label, c.explanation) == (
        "Hilft X?", "Nein, wahrscheinlich nicht", 9, "REFUTED", "Kurz.")


@pytest.mark.parametrize("rows, explanation", [
    # rows with another label, or a note across the table, belong to no field
    ("<tr><td>Frage:</td><td>Hilft X?</td></tr><tr><td>Antwort:</td><td>Erkl.</td></tr>"
     "<tr><td>Beweislage:</td><td>Mittlere wissenschaftliche Beweislage dagegen</td></tr>"
     '<tr><td colspan="2">Die Beweislage wird als nicht ausreichend erforscht eingestuft, wenn …</td></tr>'
     "<tr><td>Stand:</td><td>März 2016</td></tr>", "Erkl."),
    # label and value in one cell: still the pre-2014 layout, read from the labelled rows
    ("<tr><td>Frage: Hilft X?</td></tr><tr><td>Antwort: Die Studien zeigen keinen Schutz.</td></tr>"
     "<tr><td>Beweislage: Mittlere wissenschaftliche Beweislage dagegen</td></tr>", "Die Studien zeigen keinen Schutz."),
])
def test_pre2014_tables_with_other_rows_or_one_cell_rows(rows, explanation):
    a = parse_page("https://www.medizin-transparent.at/x/", _pre2014(rows))
    (c,) = a.claims
    assert (a.layout, c.question, c.verdict_text, c.label, c.evidence_level, c.explanation) == (
        "pre_2014", "Hilft X?", "Mittlere wissenschaftliche Beweislage dagegen", "REFUTED", "moderate", explanation)


def test_a_table_at_the_end_of_a_bigger_container_has_no_body_after_it():
    html = OLD.split('<table class="table_rating">')[0] + '<div class="entry-content"><p>Einleitung.</p><table class="table_rating">' + \
        OLD.split('<table class="table_rating">')[1].split("</table>")[0] + "</table></div><p>Teilen Drucken</p></article></body></html>"
    with pytest.raises(PageSkipped) as exc:
        parse_page("https://www.medizin-transparent.at/zink/", html)
    assert exc.value.reason == "empty_body"  # not the share links after the container


def test_a_line_break_inside_a_body_paragraph_separates_its_words():
    html = CURRENT.replace("<p>Letzter Absatz.</p>", "<p>Letzter<br>Absatz.</p>")
    assert parse_page("https://www.medizin-transparent.at/kaffee-herz/", html).body_paragraphs[-1] == "Letzter Absatz."


# ---- the verdict boxes as the portal prints them today (SOURCES §1; the release's scraper reads the text of
# the boxes' container): "Frage:", the question, the selected answer without a label (its index or its
# text), the whole answer scale with every option labelled "Antwort:", three boxes of which the unused ones
# are empty, and the explanation once, in a box or after the boxes

_SCALE = "".join(f"<li><span>Antwort:</span> {o}</li>" for o in (
    "Ja, möglicherweise", "Ja, wahrscheinlich", "Ja", "Ja, möglicherweise ein bisschen", "Ja, wahrscheinlich ein bisschen",
    "Ja, ein bisschen", "Nein, möglicherweise nicht", "Nein, wahrscheinlich nicht", "Nein", "Wissenschaftliche Belege fehlen"))
_EMPTY_BOX = '<div class="katechismus"><p>Frage:</p><p></p><ul>' + _SCALE + "</ul></div>"


def _boxes_page(boxes: str, after: str = "") -> str:
    return CURRENT.split('<div class="katechismus">')[0] + f'<div class="katechismus-wrap">{boxes}{after}</div>' + \
        '<div class="pods-post-page__content"><p>Text.</p></div>' + TAIL


def _box(question: str, answer: str, explanation: str = "") -> str:
    expl = f"<p>Erklärung:</p><p>{explanation}</p>" if explanation else ""
    return f'<div class="katechismus"><p>Frage:</p><p>{question}</p><p>{answer}</p><ul>{_SCALE}</ul>{expl}</div>'


def test_the_answer_scale_is_not_read_as_answers_and_unused_boxes_are_no_claims():
    a = parse_page("https://www.medizin-transparent.at/x/", _boxes_page(
        _box("Hilft X gegen Y?", "9", "Kurze Erklärung.") + _EMPTY_BOX + _EMPTY_BOX))
    assert [(c.question, c.verdict_text, c.answer_index, c.label, c.evidence_level, c.explanation) for c in a.claims] == [
        ("Hilft X gegen Y?", "", 9, "REFUTED", "moderate", "Kurze Erklärung.")]
    assert a.problems == []


def test_a_label_the_verdict_box_does_not_use_is_not_read_with_its_text():
    box = ('<div class="katechismus"><p>Frage:</p><p>Hilft X gegen Y?</p><p>9</p><p>Beweislage: hoch</p>'
           f'<ul>{_SCALE}</ul></div>')
    a = parse_page("https://www.medizin-transparent.at/x/", _boxes_page(box))
    claims = [(c.question, c.answer_index, c.label, c.explanation) for c in a.claims]
    assert claims == [("Hilft X gegen Y?", 9, "REFUTED", "")]
    assert a.problems == []


def test_one_explanation_after_the_boxes_belongs_to_every_question():
    a = parse_page("https://www.medizin-transparent.at/x/", _boxes_page(
        _box("Hilft X?", "1") + _box("Schadet X?", "Nein, möglicherweise nicht") + _EMPTY_BOX,
        after="<div><p><strong>Erklärung:</strong></p><p>Wenige kleine Studien.</p><p>Mehr nicht.</p></div>"))
    assert [(c.question, c.answer_index, c.label, c.explanation) for c in a.claims] == [
        ("Hilft X?", 1, "SUPPORTED", "Wenige kleine Studien. Mehr nicht."),
        ("Schadet X?", 8, "REFUTED", "Wenige kleine Studien. Mehr nicht.")]
    assert a.problems == []  # the explanation's label in <strong> inside its paragraph


def test_an_explanation_in_an_unused_box_or_a_later_box_is_shared_and_an_own_one_kept():
    a = parse_page("https://www.medizin-transparent.at/x/", _boxes_page(
        _box("Hilft X?", "11") + _box("Hilft Y?", "3", "Eigene.") +
        '<div class="katechismus"><p>Frage:</p><ul>' + _SCALE + "</ul><p>Erklärung: Für alle.</p></div>"))
    assert [(c.question, c.label, c.evidence_level, c.explanation) for c in a.claims] == [
        ("Hilft X?", "NOT ENOUGH INFO", "insufficient", "Für alle."), ("Hilft Y?", "SUPPORTED", "high", "Eigene.")]
    assert a.problems == []


def test_a_claims_own_explanation_is_never_another_boxs_and_the_one_after_the_boxes_wins():
    after = "<div><p>Erklärung:</p><p>Für alle.</p></div>"
    a = parse_page("https://www.medizin-transparent.at/x/", _boxes_page(_box("Hilft X?", "1", "E1") + _box("Hilft Y?", "9") + _EMPTY_BOX, after))
    assert [(c.question, c.explanation) for c in a.claims] == [("Hilft X?", "E1"), ("Hilft Y?", "Für alle.")]
    # two questions in one box with one explanation at its end: both have it
    two = ('<div class="katechismus"><p>Frage:</p><p>Hilft X?</p><p>1</p><p>Frage:</p><p>Hilft Y?</p><p>9</p>'
           "<p>Erklärung:</p><p>Beide.</p></div>")
    a = parse_page("https://www.medizin-transparent.at/x/", _boxes_page(two + _box("Hilft Z?", "10")))
    assert [(c.question, c.explanation) for c in a.claims] == [("Hilft X?", "Beide."), ("Hilft Y?", "Beide."), ("Hilft Z?", "")]


def test_an_explanation_after_the_boxes_may_spread_over_the_containers_paragraphs():
    a = parse_page("https://www.medizin-transparent.at/x/", _boxes_page(
        _box("Hilft X?", "1") + _EMPTY_BOX, after="<p><strong>Erklärung:</strong></p><p>Wenige Studien.</p><p>Klein.</p>"))
    assert [(c.question, c.explanation) for c in a.claims] == [("Hilft X?", "Wenige Studien. Klein.")]


@pytest.mark.parametrize("between", ["", "<p>Eine mögliche Erklärung: Placebo.</p><p>Weiterer Absatz.</p>"])
def test_the_article_body_is_never_read_as_the_explanation(between):
    """Only a piece that starts with the label, and only before the body, the studies and the footnotes."""
    box = ('<div class="katechismus"><div class="katechismus__question">Frage: Hilft X?</div>'
           '<div class="katechismus__answer">9</div></div>')
    html = CURRENT.split('<div class="katechismus">')[0] + box + between + \
        '<div class="pods-post-page__content"><p>Text.</p><p>Erklärung: so.</p><p>Rest.</p></div>' + TAIL
    (c,) = parse_page("https://www.medizin-transparent.at/x/", html).claims
    assert (c.question, c.answer_index, c.explanation) == ("Hilft X?", 9, "")


def test_an_answer_without_its_question_is_reported_and_text_after_the_label_is_the_question():
    a = parse_page("https://www.medizin-transparent.at/x/", _boxes_page(
        _box("Hilft X?", "9", "E.") + '<div class="katechismus"><p>Frage:</p><p>Antwort: Nein</p></div>'))
    assert [c.question for c in a.claims] == ["Hilft X?"] and a.problems == ["verdict_box_without_question"]
    # without a label the text after "Frage:" is the question, whatever it says: a claim without a verdict
    a = parse_page("https://www.medizin-transparent.at/x/", _boxes_page(
        _box("Hilft X?", "9", "E.") + '<div class="katechismus"><p>Frage:</p><p></p><p>Nein</p></div>'))
    assert [c.question for c in a.claims] == ["Hilft X?"] and a.problems == ["unknown_verdict (empty verdict)"]


@pytest.mark.parametrize("tail", [
    "", "\n<!-- Cached page generated by WP-Super-Cache on 2022-12-05 10:00:00 -->\n<!-- Compression = gzip -->\n",
    "<!-- Dynamic page generated in 0.512 seconds. -->"])
def test_comments_a_cache_plugin_appends_after_the_page_do_not_make_it_cut(tail):
    a = parse_page("https://www.medizin-transparent.at/kaffee-herz/", CURRENT + tail)
    assert len(a.claims) == 2


@pytest.mark.parametrize("html", [CURRENT[:-20], CURRENT[:-7] + "<!-- cut -->", CURRENT.replace("</html>", "") + "<!-- x -->"])
def test_a_cut_page_stays_truncated_behind_a_comment_too(html):
    with pytest.raises(PageSkipped) as exc:
        parse_page("https://www.medizin-transparent.at/kaffee-herz/", html)
    assert exc.value.reason == "truncated_html"
