import pytest

from medfc.healthfc.dates import parse_german_date
from medfc.healthfc.verdicts import (
    ANSWER_SCALE, NEI, REFUTED, SUPPORTED, UnknownVerdict, index_for_text, verdict_from_beweislage, verdict_from_text,
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
    assert index_for_text("wissenschafliche Beweise fehlen") is None
    assert index_for_text("Wissenschaftliche Belege fehlen") == 11


@pytest.mark.parametrize(
    "text, expected",
    [
        ("Hohe wissenschaftliche Beweislage dafür", (SUPPORTED, "high")),
        ("Mittlere wissenschaftliche Beweislage dagegen", (REFUTED, "moderate")),
        ("Niedrige wissenschaftliche Beweislage dafür", (SUPPORTED, "low")),
        ("Unzureichende wissenschaftliche Beweislage", (NEI, "insufficient")),
    ],
)
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
