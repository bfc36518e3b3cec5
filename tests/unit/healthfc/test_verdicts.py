from collections import Counter

import pytest

from medfc.healthfc.portal import parse_german_date
from medfc.healthfc.verdicts import (
    ANSWER_SCALE, NEI, REFUTED, SUPPORTED, UnknownVerdict, verdict_from_beweislage, verdict_from_text,
)

SCALE_EXPECTED = {
    1: (SUPPORTED, "low", False),
    2: (SUPPORTED, "moderate", False),
    3: (SUPPORTED, "high", False),
    4: (SUPPORTED, "low", True),
    5: (SUPPORTED, "moderate", True),
    6: (SUPPORTED, "high", True),
    8: (REFUTED, "low", False),
    9: (REFUTED, "moderate", False),
    10: (REFUTED, "high", False),
    11: (NEI, "insufficient", False),
}


@pytest.mark.parametrize("index", sorted(ANSWER_SCALE))
def test_every_scale_value_by_index_and_by_text(index):
    by_index = verdict_from_text("", index)
    by_text = verdict_from_text(ANSWER_SCALE[index])
    assert (by_index.label, by_index.evidence_level, by_index.small_effect) == SCALE_EXPECTED[index]
    assert by_text == by_index
    assert by_text.answer_index == index


@pytest.mark.parametrize(
    "text, expected",
    [
        ("wissenschafliche Beweise fehlen", (NEI, "insufficient")),
        ("Studienlage widersprüchlich", (NEI, "conflicting")),
        ("wahrscheinlich", (SUPPORTED, "moderate")),
        ("möglicherweise", (SUPPORTED, "low")),
        ("Nein, wahrscheinlich nicht.", (REFUTED, "moderate")),
        ("  ja  ", (SUPPORTED, "high")),
    ],
)
def test_other_verdict_texts(text, expected):
    v = verdict_from_text(text)
    assert (v.label, v.evidence_level) == expected


def test_typo_variant_has_no_scale_index_but_scale_text_has():
    assert verdict_from_text("wissenschafliche Beweise fehlen").answer_index is None
    assert verdict_from_text("Wissenschaftliche Belege fehlen").answer_index == 11


@pytest.mark.parametrize("text, expected", [
    ("Hohe wissenschaftliche Beweislage dafür", (SUPPORTED, "high")), ("Mittlere wissenschaftliche Beweislage dagegen", (REFUTED, "moderate")),
    ("Niedrige wissenschaftliche Beweislage dafür", (SUPPORTED, "low")), ("Unzureichende wissenschaftliche Beweislage", (NEI, "insufficient")),
])
def test_pre2014_beweislage(text, expected):
    v = verdict_from_beweislage(text)
    assert (v.label, v.evidence_level, v.answer_index) == (*expected, None)


@pytest.mark.parametrize("bad", ["Vielleicht", "", "Hohe wissenschaftliche Beweislage"])
def test_unknown_verdicts_raise(bad):
    with pytest.raises(UnknownVerdict):
        if "Beweislage" in bad:
            verdict_from_beweislage(bad)
        else:
            verdict_from_text(bad)


def test_index_7_is_not_on_the_scale():
    with pytest.raises(UnknownVerdict):
        verdict_from_text("Ja", 7)


@pytest.mark.parametrize(
    "text, iso",
    [
        ("zuletzt aktualisiert: 5. Dezember 2022", "2022-12-05"),
        ("3. März 2014", "2014-03-03"),
        ("12. Jänner 2016", "2016-01-12"),
        ("05.12.2022", "2022-12-05"),
        ("31. Februar 2020", None),
        ("kein Datum", None),
    ],
)
def test_german_dates(text, iso):
    assert parse_german_date(text) == iso


# --------------------------------------------------------------------------- the real release's 55 verdict texts

S, R, N = "S", "R", "N"
LABEL_OF = {S: SUPPORTED, R: REFUTED, N: NEI}

#: docs/sources.md §1a: every de_verdict text of the real release with its count, and the label and level
#: the rules give it (the negation decides the direction; pre-2014: Niedrige/Mittlere/Hohe = low/moderate/high).
RELEASE_VERDICTS = [
    (195, 'wissenschaftliche Belege fehlen', 'N', 'insufficient'),
    (176, 'wissenschafliche Beweise fehlen', 'N', 'insufficient'),
    (64, 'möglicherweise Ja', 'S', 'low'),
    (45, 'wahrscheinlich Ja', 'S', 'moderate'),
    (34, 'möglicherweise Nein', 'R', 'low'),
    (26, 'möglicherweise nicht', 'R', 'low'),
    (22, 'wahrscheinlich Nein', 'R', 'moderate'),
    (21, 'möglicherweise', 'S', 'low'),
    (17, 'Unzureichende wissenschaftliche Beweislage', 'N', 'insufficient'),
    (14, 'wahrscheinlich', 'S', 'moderate'),
    (14, 'wahrscheinlich nicht', 'R', 'moderate'),
    (14, 'widersprüchliche Studienlage', 'N', 'conflicting'),
    (9, 'möglicherweise ein bisschen', 'S', 'low'),
    (9, 'nein', 'R', 'high'),
    (9, 'Ungenügende wissenschaftliche Beweislage', 'N', 'insufficient'),
    (9, 'Nein', 'R', 'high'),
    (8, 'Studienlage widersprüchlich', 'N', 'conflicting'),
    (7, 'Ja', 'S', 'high'),
    (6, 'ja', 'S', 'high'),
    (5, 'Niedrige wissenschaftliche Beweislage | für die Wirksamkeit', 'S', 'low'),
    (4, 'nicht (ausreichend) erforscht', 'N', 'insufficient'),
    (4, 'Mittlere wissenschaftliche Beweislage | für die Wirksamkeit', 'S', 'moderate'),
    (3, 'wahrscheinlich ein bisschen', 'S', 'moderate'),
    (3, 'Niedrige wissenschaftliche Beweislage | für das erhöhte Risiko', 'S', 'low'),
    (2, 'Niedrige wissenschaftliche Beweislage | für einen Zusammenhang', 'S', 'low'),
    (1, 'Mittlere wissenschaftliche Beweislage | für die prinzipielle Wirksamkeit', 'S', 'moderate'),
    (1, 'Niedrige wissenschaftliche Beweislage | für ein nicht erhöhtes Risiko', 'R', 'low'),
    (1, 'Mittlere wissenschaftliche Beweislage | gegen eine deutliche Risikosenkung', 'R', 'moderate'),
    (1, 'Niedrige wissenschaftliche Beweislage | gegen die Wirksamkeit', 'R', 'low'),
    (1, 'Mittlere wissenschaftliche Beweislage | für die geringere Zuverlässigkeit', 'S', 'moderate'),
    (1, 'Mittlere wissenschaftliche Beweislage | für die sichere Wirksamkeit', 'S', 'moderate'),
    (1, 'Niedrige wissenschaftliche Beweislage | für ein erhöhtes Erkrankungsrisiko', 'S', 'low'),
    (1, 'Niedrige wissenschaftliche Beweislage | für die bessere Wirksamkeit nach Schlaganfällen, vergleichbare Wirksamkeit nach Herzinfarkten und bei Diabetes-Vorstufen und für schlechtere Wirksamkeit bei Herzschwäche.', 'S', 'low'),
    (1, 'Niedrige wissenschaftliche Beweislage | für die gleiche Langzeit-Wirksamkeit', 'S', 'low'),
    (1, 'Niedrige wissenschaftliche Beweislage | für ein erhöhtes Risiko', 'S', 'low'),
    (1, 'Mittlere wissenschaftliche Beweislage | für die geringfügige Überlegenheit von Koffein als Zusatz zu gängigen Schmerzmitteln', 'S', 'moderate'),
    (1, 'Niedrige wissenschaftliche Beweislage | für die Wirksamkeit einiger Teilbereiche', 'S', 'low'),
    (1, 'Mittlere wissenschaftliche Beweislage | für die bessere Wirksamkeit', 'S', 'moderate'),
    (1, 'Mittlere wissenschaftliche Beweislage | für KEIN günstigeres Nebenwirkungsprofil', 'R', 'moderate'),
    (1, 'Niedrige wissenschaftliche Beweislage | für die zumind. gleiche Effektivität', 'S', 'low'),
    (1, 'Niedrige wissenschaftliche Beweislage | für die Nicht-Wirksamkeit', 'R', 'low'),
    (1, 'Hohe wissenschaftliche Beweislage | für die Wirksamkeit', 'S', 'high'),
    (1, 'Hohe wissenschaftliche Beweislage | für die teilweise Wirksamkeit', 'S', 'high'),
    (1, 'Niedrige wissenschaftliche Beweislage | für die Wirksamkeit bestimmter Anwendungen', 'S', 'low'),
    (1, 'Niedrige wissenschaftliche Beweislage | für die wirksame Vorbeugung', 'S', 'low'),
    (1, 'Mittlere wissenschaftliche Beweislage | für die Wirksamkeit von Ernährungumstellung oder Fibraten', 'S', 'moderate'),
    (1, 'Niedrige wissenschaftliche Beweislage | für das Risiko, die Wirkung von Schmerzmitteln zu senken', 'S', 'low'),
    (1, 'Niedrige wissenschaftliche Beweislage | gegen eine vergleichbare Wirksamkeit.', 'R', 'low'),
    (1, 'Niedrige wissenschaftliche Beweislage | für die Wirksamkeit von VKT', 'S', 'low'),
    (1, 'Mittlere wissenschaftliche Beweislage | stimmt wahrscheinlich nicht', 'R', 'moderate'),
    (1, 'Niedrige wissenschaftliche Beweislage | für die geringe Überlegenheit von LASIK', 'S', 'low'),
    (1, 'Mittlere wissenschaftliche Beweislage | für die Nicht-Überlegenheit', 'R', 'moderate'),
    (1, 'Niedrige wissenschaftliche Beweislage | für die Überlegenheit', 'S', 'low'),
    (1, 'Niedrige wissenschaftliche Beweislage | möglicherweise nicht', 'R', 'low'),
    (1, 'Niedrige wissenschaftliche Beweislage | möglicherweise', 'S', 'low'),
]


@pytest.mark.parametrize("count, text, label, level", RELEASE_VERDICTS, ids=[t for _, t, _, _ in RELEASE_VERDICTS])
def test_every_real_release_verdict_text(count, text, label, level):
    v = verdict_from_text(text)
    assert (v.label, v.evidence_level) == (LABEL_OF[label], level)


def test_the_list_is_the_whole_release():
    assert len(RELEASE_VERDICTS) == 55 and len({t for _, t, _, _ in RELEASE_VERDICTS}) == 55
    assert sum(n for n, *_ in RELEASE_VERDICTS) == 750


def test_aggregate_counts_over_the_release_against_its_targets():
    """Labels and levels the rules give the 750 real verdicts (weighted by the §1a counts).

    Release targets: labels 202 SUPPORTED / 423 NEI / 125 REFUTED; levels among SUPPORTED and
    REFUTED low 182, moderate 112, high 33. The rules reproduce NEI and every level exactly and
    are two claims off on SUPPORTED/REFUTED: at least 2 of 750 verdicts disagree with the label
    column (directions such as "für die Nicht-Wirksamkeit" can only be read against the claim's
    wording, docs/sources.md §1a), so at most 748 can agree, within the ≥ 743 target.
    """
    labels: Counter = Counter()
    levels: Counter = Counter()
    for n, text, _, _ in RELEASE_VERDICTS:
        v = verdict_from_text(text)
        labels[v.label] += n
        if v.label != NEI:
            levels[v.evidence_level] += n
    assert dict(labels) == {SUPPORTED: 204, NEI: 423, REFUTED: 123}
    assert dict(levels) == {"low": 182, "moderate": 112, "high": 33}
    release = {SUPPORTED: 202, NEI: 423, REFUTED: 125}
    min_disagreements = sum(abs(labels[k] - release[k]) for k in release) // 2
    assert min_disagreements == 2 and 750 - min_disagreements >= 743


@pytest.mark.parametrize(
    "text, expected",
    [
        ("möglicherweise Nein", (REFUTED, "low", False)),
        ("Wahrscheinlich, nicht", (REFUTED, "moderate", False)),
        ("nein, möglicherweise nicht", (REFUTED, "low", False)),
        ("ja, wahrscheinlich ein bisschen", (SUPPORTED, "moderate", True)),
        ("Nicht ausreichend erforscht", (NEI, "insufficient", False)),
        ("nicht erforscht", (NEI, "insufficient", False)),
        ("Mittlere wissenschaftliche Beweislage: gegen die Wirksamkeit", (REFUTED, "moderate", False)),
        ("Hohe wissenschaftliche Beweislage für KEINEN Nutzen", (REFUTED, "high", False)),
        ("Niedrige wissenschaftliche Beweislage | stimmt nicht", (REFUTED, "low", False)),
        ("Niedrige wissenschaftliche Beweislage – dafür", (SUPPORTED, "low", False)),
    ],
)
def test_negation_decides_the_direction_in_constructed_variants(text, expected):
    v = verdict_from_text(text)
    assert (v.label, v.evidence_level, v.small_effect) == expected


@pytest.mark.parametrize("bad", ["Vielleicht", "Hohe wissenschaftliche Beweislage |", "Gute wissenschaftliche Beweislage | dafür",
                                 "Studien laufen noch"])
def test_texts_outside_the_rules_are_unknown_not_guessed(bad):
    with pytest.raises(UnknownVerdict):
        verdict_from_text(bad)
