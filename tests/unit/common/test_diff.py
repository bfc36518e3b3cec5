"""The shared diff report: partial dates against a cut-off, counts of every category, the Markdown."""

from __future__ import annotations

from datetime import date

import pandas as pd
import pytest

from medfc.common.diff import after, counts_table, earliest_date, reasons_table, render_markdown, write_diff

CATEGORIES = {"same": "both sides agree", "gone": "on one side only", "new": "on the other side only"}


@pytest.mark.parametrize(
    "text,first",
    [
        ("2024-03-05", date(2024, 3, 5)),
        ("2024-03", date(2024, 3, 1)),
        ("2024", date(2024, 1, 1)),
        ("2024-Mar-N/A", date(2024, 3, 1)),
        ("2024-N/A-N/A", date(2024, 1, 1)),
        ("2021-Dec-21", date(2021, 12, 21)),
        ("2023-02-30", date(2023, 2, 1)),  # no such day: the month
        ("", None),
        ("N/A", None),
        (None, None),
        (float("nan"), None),
    ],
)
def test_earliest_date_of_partial_dates(text, first):
    assert earliest_date(text) == first


def test_after_only_when_the_whole_period_is_later():
    cutoff = date(2024, 1, 15)
    assert after("2024-01-16", cutoff) and after("2024-02", cutoff) and after("2025", cutoff)
    assert not after("2024-01-15", cutoff) and not after("2024-01", cutoff) and not after("2024", cutoff) and not after(None, cutoff)


def test_counts_list_every_category_in_order_and_reasons_by_count():
    rows = pd.DataFrame({"category": ["new", "gone", "gone", "gone"], "reason": ["", "b", "a", "a"]})
    assert counts_table(rows, CATEGORIES).to_dict("records") == [
        {"category": "same", "rows": 0, "meaning": "both sides agree"},
        {"category": "gone", "rows": 3, "meaning": "on one side only"},
        {"category": "new", "rows": 1, "meaning": "on the other side only"}]
    assert reasons_table(rows, CATEGORIES).to_dict("records") == [{"category": "gone", "reason": "a", "rows": 2},
                                                                  {"category": "gone", "reason": "b", "rows": 1}]


def test_markdown_escapes_pipes_and_lists_at_most_max_rows():
    rows = pd.DataFrame({"category": ["gone"] * 3, "reason": ["x"] * 3, "text": ["Beweislage | für", "b\nc", "d"]})
    md = render_markdown("T", ["intro"], rows, CATEGORIES, {"gone": ["text"], "new": ["text"]}, max_listed=2)
    assert md.startswith("# T\n\nintro\n\n## Counts\n")
    assert "Beweislage \\| für" in md and "b c" in md and "| d " not in md
    assert "… and 1 more (all in the CSV)." in md
    assert "## new (0)\n\non the other side only\n" in md


def test_write_diff_refuses_undeclared_categories(tmp_path):
    outputs = {"rows": tmp_path / "r.csv", "counts": tmp_path / "c.csv", "markdown": tmp_path / "d.md"}
    with pytest.raises(ValueError, match="oops"):
        write_diff(pd.DataFrame({"category": ["oops"]}), CATEGORIES, "", outputs)
    write_diff(pd.DataFrame({"category": ["same"]}), CATEGORIES, "# md\n", outputs)
    assert pd.read_csv(tmp_path / "c.csv")["rows"].tolist() == [1, 0, 0] and (tmp_path / "d.md").read_text() == "# md\n"


def test_texts_compare_exactly_and_whitespace_only_differences_are_their_own_kind():
    from medfc.common.diff import SAME, TEXT, WHITESPACE, text_difference, whitespace_detail

    assert text_difference("10\u00a0mg", "10\u00a0mg") == SAME
    assert text_difference("10\u00a0mg", "10 mg") == WHITESPACE  # a no-break space for a plain one
    assert text_difference("β 2-microglobulin", "β2-microglobulin") == WHITESPACE  # a space beside former markup
    assert text_difference("P\u2009<\u20090.01\nRESULTS:", "P < 0.01 RESULTS:") == WHITESPACE
    assert text_difference("10 mg", "10 mL") == TEXT and text_difference("10 mg", "10mg.") == TEXT
    assert whitespace_detail("10 mg in 5 mL", "10\u00a0mg in 5\u202fmL", ("rebuilt", "release")) == \
        "U+0020 (rebuilt) vs U+00A0 (release) at offset 2; 2 places"
    assert whitespace_detail("β 2", "β2") == "U+0020 (a) vs none (b) at offset 1"


def test_markdown_cells_keep_non_ascii_spaces_and_join_lines():
    rows = pd.DataFrame({"category": ["gone"], "reason": ["x"], "text": ["10\u00a0mg\nT\u2009cells"]})
    md = render_markdown("T", [], rows, CATEGORIES, {"gone": ["text"]}, max_listed=5)
    assert "| 10\u00a0mg T\u2009cells |" in md
