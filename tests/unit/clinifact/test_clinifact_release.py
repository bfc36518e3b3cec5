"""The CliniFact release read strictly: exact label codes, rows without words, broken CSV, and Table 6
counting only the rows kept."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from medfc.common.io import InputFileError

from medfc.clinifact import pairs as PR
from medfc.clinifact import release, steps
from medfc.common.report import SkipReport
from tests.helpers.config import call_step, section
from tests.helpers.figures import PAPERS

PAPERS = Path(__file__).resolve().parents[3] / "resources" / "papers" / "numbers.yaml"


def _row(i, label, **kw):
    row = {c: f"{c}-{i}" for c in PR.RELEASE_COLUMNS}
    row.update({"index": i, "PMID": 1000 + i, "label": label, "nctId": f"NCT{i:08d}", "pValues": "['<0.001']", "statisticalMethods": "['ANCOVA']",
                "nonInferiorityTypes": "['Superiority']", "Publication Date": f"{2000 + i % 5}-Jan-N/A", "article_abstract": "word " * 20,
                "claim": f"A{i} is superior to B in terms of X"})
    row.update(kw)
    return row


def _write(path: Path, rows) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    pd.DataFrame(rows, columns=PR.RELEASE_COLUMNS).to_csv(path, index=False)
    return path


def _release(tmp_path: Path, train_rows) -> Path:
    rel = tmp_path / "release"
    _write(rel / "train_set.csv", train_rows)
    _write(rel / "validation_set.csv", [_row(20, 1), _row(21, 2)])
    _write(rel / "test_set.csv", [_row(30, 0)])
    return rel


BAD_TRAIN = [_row(0, 1), _row(1, 7), _row(2, 0, article_abstract=""), _row(3, 2, claim=" ... "), _row(4, 2, article_abstract="  –  "),
             _row(5, 0), _row(6, 1, pValues="['<0.001'")]


def test_label_7_empty_abstracts_and_claims_without_a_word_are_counted_skips_with_file_and_line(tmp_path):
    rel = _release(tmp_path, BAD_TRAIN)
    report = SkipReport("t")
    splits = release.import_release(str(rel), report)
    assert list(splits["train"]["index"]) == [0, 5] and list(splits["train"]["label"]) == [1, 0]
    train = rel / "train_set.csv"
    assert sorted((s["reason"], s["id"], s["detail"]) for s in report.skipped) == [
        ("abstract_without_words", f"{train}:4", "index 2: article_abstract '' has no word"),
        ("abstract_without_words", f"{train}:6", "index 4: article_abstract '  –  ' has no word"),
        ("bad_label", f"{train}:3", "index 1: label '7' is not one of the release's codes '0', '1', '2'"),
        ("claim_without_words", f"{train}:5", "index 3: claim ' ... ' has no word"),
        ("unparseable_list_column", f"{train}:8", "index 6: pValues \"['<0.001'\""),
    ]
    assert report.counts["rows_train"] == 2 and report.counts["rows_validation"] == 2 and report.counts["rows_test"] == 1
    assert report.counts["read_train"] == 7


@pytest.mark.parametrize("bad", ["7", "1.0", "-1", "", "nan", "evidence"])
def test_only_the_release_label_codes_are_labels(tmp_path, bad):
    rel = _release(tmp_path, [_row(0, 1), _row(1, bad)])
    report = SkipReport("t")
    assert list(release.import_release(str(rel), report)["train"]["index"]) == [0]
    assert report.reasons() == {"bad_label": 1}


def test_table6_totals_agree_with_their_columns_and_the_kept_rows(tmp_path):
    rel = _release(tmp_path, BAD_TRAIN)
    out = {k: str(tmp_path / "out" / f"{k}.csv") for k in PR.SPLITS} | {"report": str(tmp_path / "out" / "report.json")}
    assert call_step(steps.import_release, {}, out, {"source": str(rel), "sha256": dict.fromkeys(PR.SPLITS), "cache_dir": str(tmp_path / "cache")}) == {"train": 2, "validation": 2, "test": 1}
    rep = json.loads(Path(out["report"]).read_text())
    assert rep["skipped_by_reason"] == {"abstract_without_words": 2, "bad_label": 1, "claim_without_words": 1, "unparseable_list_column": 1}
    t6 = _stats(tmp_path, out)
    for _, r in t6.iterrows():
        assert r["evidence"] + r["inconclusive"] + r["not enough information"] == r["total"]
    assert t6.iloc[-1].to_dict() == {"split": "total", "evidence": 2, "inconclusive": 2, "not enough information": 1, "total": 5}


def _stats(tmp_path: Path, splits: dict[str, str], report: str | None = None) -> pd.DataFrame:
    st = tmp_path / "stats"
    souts = {"table_labels": str(st / "t6.csv"), "table_words": str(st / "t4.csv"), "table_classes": str(st / "classes.csv"),
             "fig_classes": str(st / "fig2.png"), "table_years": str(st / "years.csv"), "fig_years": str(st / "figS1.png")}
    if report:
        souts["report"] = report
    call_step(steps.clinifact_stats, {k: splits[k] for k in PR.SPLITS} | {"papers": str(PAPERS)}, souts, section("clinifact.stats"))
    return pd.read_csv(st / "t6.csv")


def test_the_stats_count_only_the_rows_of_a_split_file_that_are_kept(tmp_path):
    """A split file edited after the import (label 7, an empty abstract): Table 6 leaves those rows out
    of every column and of the total, and the stats report names them."""
    d = tmp_path / "splits"
    splits = {"train": str(_write(d / "train.csv", [_row(0, 1), _row(1, 7), _row(2, 2, article_abstract="")])),
              "validation": str(_write(d / "validation.csv", [_row(3, 0)])), "test": str(_write(d / "test.csv", [_row(4, 2)]))}
    t6 = _stats(tmp_path, splits, report=str(tmp_path / "stats" / "report.json"))
    assert t6.to_dict("records") == [
        {"split": "train", "evidence": 1, "inconclusive": 0, "not enough information": 0, "total": 1},
        {"split": "validation", "evidence": 0, "inconclusive": 1, "not enough information": 0, "total": 1},
        {"split": "test", "evidence": 0, "inconclusive": 0, "not enough information": 1, "total": 1},
        {"split": "total", "evidence": 1, "inconclusive": 1, "not enough information": 1, "total": 3},
    ]
    rep = json.loads((tmp_path / "stats" / "report.json").read_text())
    assert [(s["reason"], s["id"]) for s in rep["skipped"]] == [("abstract_without_words", f"{splits['train']}:4"), ("bad_label", f"{splits['train']}:3")]
    t4 = pd.read_csv(tmp_path / "stats" / "t4.csv")
    assert t4.loc[2, "min"] == 20  # the empty abstract is not in the word counts either


def test_broken_csv_quoting_is_an_error_naming_file_and_line(tmp_path):
    rel = _release(tmp_path, [_row(0, 1), _row(1, 0), _row(2, 2)])
    train = rel / "train_set.csv"
    lines = train.read_text(encoding="utf-8").splitlines(keepends=True)
    lines[3] = lines[3].replace("article_title-2", '"article" title-2', 1)
    train.write_text("".join(lines), encoding="utf-8")
    with pytest.raises(InputFileError) as exc:
        release.import_release(str(rel), SkipReport("t"))
    assert str(exc.value) == f"{train}, line 4: broken CSV quoting: ',' expected after '\"'"


def test_a_missing_column_is_an_error_naming_file_and_column(tmp_path):
    rel = _release(tmp_path, [_row(0, 1)])
    df = pd.read_csv(rel / "test_set.csv").drop(columns=["label", "Publication Date"])
    df.to_csv(rel / "test_set.csv", index=False)
    with pytest.raises(InputFileError) as exc:
        release.import_release(str(rel), SkipReport("t"))
    assert str(exc.value) == f"{rel / 'test_set.csv'}, line 1: the CliniFact release file has no columns 'Publication Date', 'label'"


def test_the_demo_release_imports_whole_and_as_pandas_reads_it(tmp_path):
    demo = Path(__file__).resolve().parents[3] / "resources" / "demo" / "clinifact_release"
    report = SkipReport("t")
    splits = release.import_release(str(demo), report)
    assert report.skipped == []
    for name in PR.SPLITS:
        pd.testing.assert_frame_equal(splits[name], PR.read_release_csv(demo / release.RELEASE_FILES[name]))


def test_bytes_that_are_not_utf8_are_an_error_naming_file_and_line(tmp_path):
    rel = _release(tmp_path, [_row(0, 1), _row(1, 0)])
    test = rel / "test_set.csv"
    test.write_bytes(test.read_bytes().replace(b"article_title-30", b"article_title-\xe930"))
    with pytest.raises(InputFileError) as exc:
        release.import_release(str(rel), SkipReport("t"))
    assert (exc.value.path, exc.value.line) == (str(test), 2) and exc.value.message.startswith("not UTF-8 text (byte ")
