"""Reading the HealthFC release file: BOM, label codes, mojibake, both variants, the download cache."""

import csv
import json
import http.server
import io
import threading
from pathlib import Path

import pytest

from medfc.common.io import InputFileError

from medfc.healthfc.release import (
    COLUMNS_12,
    COLUMNS_18,
    fetch_release,
    fix_mojibake,
    read_release,
    split_authors,
)

URL = "https://www.medizin-transparent.at/kaffee-herz/"


def write_csv(path: Path, columns, rows, bom: bool = True) -> Path:
    buf = io.StringIO()
    w = csv.writer(buf)
    w.writerow(columns)
    for r in rows:
        w.writerow([r.get(c, "") for c in columns])
    path.write_bytes((b"\xef\xbb\xbf" if bom else b"") + buf.getvalue().encode("utf-8"))
    return path


def row12(**kw):
    base = {
        "en_claim": "Does coffee cause arrhythmia?",
        "en_explanation": "Large studies find no higher risk.",
        "en_top_sentences": "Coffee drinkers had no higher risk. The risk was even lower at two cups.",
        "de_claim": "Verursacht Kaffee Herzrhythmusstörungen?",
        "de_explanation": "Große Studien finden kein höheres Risiko.",
        "de_top_sentences": "Kaffeetrinker hatten kein höheres Risiko. Bei ca. zwei Tassen war das Risiko sogar niedriger.",
        "label": "2",
        "de_verdict": "Nein, wahrscheinlich nicht",
        "de_title": "Kaffee und Herz",
        "authors": "Anna Muster, Bernd Beispiel und Cora Test",
        "date": "5. Dezember 2022",
        "url": URL,
    }
    base.update(kw)
    return base


def test_mojibake_repair_is_exact_and_leaves_german_alone():
    assert fix_mojibake("Appetitz\u221a\u00bagler") == ("Appetitzügler", 1)  # Mac Roman
    assert fix_mojibake("Stra\u221a\u00fce und \u221a\u00a7rzte") == ("Straße und ärzte", 2)
    assert fix_mojibake("Appetitz\u00c3\u00bcgler") == ("Appetitzügler", 1)  # Windows-1252
    assert fix_mojibake("Größe, Maß, √2, „Zitat“ – 10 µg ± 2 °C") == ("Größe, Maß, √2, „Zitat“ – 10 µg ± 2 °C", 0)


def test_split_authors_commas_and_und():
    assert split_authors("Anna Muster, Bernd Beispiel und Cora Test") == ["Anna Muster", "Bernd Beispiel", "Cora Test"]
    assert split_authors("Dr. X und Y; Z & W") == ["Dr. X", "Y", "Z", "W"]
    assert split_authors("") == []


def test_read_12_column_file_with_bom(tmp_path):
    path = write_csv(tmp_path / "Datensatz.csv", COLUMNS_12, [
        row12(),
        row12(label="0", de_verdict="Ja, möglicherweise ein bisschen", de_claim="Hilft Kaffee?",
              de_title="Appetitz\u221a\u00bagler im Test"),
        row12(label="1", de_verdict="wissenschafliche Beweise fehlen", de_explanation="", en_explanation=""),
        row12(label="1", de_verdict="Studienlage widersprüchlich", de_title="Masken gegen Corona: Wirkt es? | Medizin Transparent"),
        row12(label="7"),
    ])
    rows, report = read_release(path)
    assert [r.row for r in rows] == [0, 1, 2, 3]
    assert [r.label for r in rows] == ["REFUTED", "SUPPORTED", "NOT ENOUGH INFO", "NOT ENOUGH INFO"]
    assert [r.evidence_level for r in rows] == ["moderate", "low", "insufficient", "conflicting"]
    assert [r.small_effect for r in rows] == [False, True, False, False]
    first = rows[0]
    assert first.en_claim == "Does coffee cause arrhythmia?"  # the BOM is not in the first column name
    assert first.de_evidence == ["Kaffeetrinker hatten kein höheres Risiko.",
                                 "Bei ca. zwei Tassen war das Risiko sogar niedriger."]
    assert first.en_evidence == ["Coffee drinkers had no higher risk.", "The risk was even lower at two cups."]
    assert first.authors == ["Anna Muster", "Bernd Beispiel", "Cora Test"]
    assert first.date == "2022-12-05"
    assert rows[1].title == "Appetitzügler im Test"
    assert rows[3].title == "Masken gegen Corona: Wirkt es?"  # the page title's suffix goes, as from a crawled page
    assert rows[2].de_explanation == "" and rows[2].en_explanation == ""  # kept, counted
    rep = report.as_dict()
    assert rep["variant"] == "12col"
    assert rep["mojibake_fixed_fields"] == 1 and rep["mojibake"][0]["row"] == 1
    assert rep["counts"]["empty_explanation_de"] == 1 and rep["counts"]["empty_explanation_en"] == 1
    assert rep["skipped_by_reason"] == {"bad_label": 1}
    assert rep["counts"]["label/NOT ENOUGH INFO"] == 2


def test_read_without_bom_and_label_mismatch_counted(tmp_path):
    path = write_csv(tmp_path / "d.csv", COLUMNS_12, [row12(label="0", de_verdict="Nein")], bom=False)
    rows, report = read_release(path)
    assert rows[0].label == "SUPPORTED"  # the label column wins
    assert report.as_dict()["counts"]["verdict_label_mismatch"] == 1


def test_real_release_verdict_forms_get_levels_and_only_true_mismatches_are_listed(tmp_path):
    verdicts = [
        ("2", "möglicherweise Nein", "low"),
        ("2", "wahrscheinlich nicht", "moderate"),
        ("0", "Niedrige wissenschaftliche Beweislage | für die Wirksamkeit", "low"),
        ("2", "Mittlere wissenschaftliche Beweislage | für KEIN günstigeres Nebenwirkungsprofil", "moderate"),
        ("1", "nicht (ausreichend) erforscht", "insufficient"),
        ("1", "Ungenügende wissenschaftliche Beweislage", "insufficient"),
        # a claim that asks whether something is ineffective, answered "für die Nicht-Wirksamkeit":
        # only the claim's wording makes it a yes; the label column wins and the row is listed
        ("0", "Niedrige wissenschaftliche Beweislage | für die Nicht-Wirksamkeit", "low"),
    ]
    path = write_csv(tmp_path / "d.csv", COLUMNS_12, [row12(label=lab, de_verdict=v) for lab, v, _ in verdicts])
    rows, report = read_release(path)
    assert [r.evidence_level for r in rows] == [lv for _, _, lv in verdicts]
    assert [r.label for r in rows][-1] == "SUPPORTED"
    rep = report.as_dict()
    assert "verdict_unknown" not in rep["counts"] and rep["counts"]["verdict_label_mismatch"] == 1
    assert rep["verdict_issues"] == [{"row": 6, "issue": "label_mismatch", "label": "SUPPORTED", "verdict_label": "REFUTED",
                                      "de_verdict": "Niedrige wissenschaftliche Beweislage | für die Nicht-Wirksamkeit"}]


def test_read_18_column_variant(tmp_path):
    de_sents = ["Satz null.", "Satz eins ist Evidenz.", "Satz zwei.", "Satz drei ist auch Evidenz."]
    en_sents = ["Sentence zero.", "Sentence one is evidence.", "Sentence two.", "Sentence three is evidence too."]
    r = row12()
    r.update(en_text=" ".join(en_sents), de_text=" ".join(de_sents), en_studies="", de_studies="",
             en_sentences=repr(en_sents), de_sentences=repr(de_sents), en_ids="[1, 3]", de_ids="[1, 3]")
    path = write_csv(tmp_path / "old.csv", COLUMNS_18, [r])
    rows, report = read_release(path)
    assert report.variant == "18col"
    row = rows[0]
    assert row.de_sentences == de_sents and row.de_ids == [1, 3]
    assert row.de_evidence == ["Satz eins ist Evidenz.", "Satz drei ist auch Evidenz."]
    assert row.en_evidence == ["Sentence one is evidence.", "Sentence three is evidence too."]


def test_missing_columns_rejected(tmp_path):
    path = write_csv(tmp_path / "bad.csv", ["foo", "bar"], [{"foo": "1"}])
    with pytest.raises(ValueError, match="the HealthFC release file has no columns .authors., .date."):
        read_release(path)


def test_fetch_local_path(tmp_path):
    p = write_csv(tmp_path / "d.csv", COLUMNS_12, [row12()])
    assert fetch_release(str(p), tmp_path / "cache") == (p, False)


def test_fetch_url_downloads_once(tmp_path):
    body = (tmp_path / "src.csv")
    write_csv(body, COLUMNS_12, [row12()])
    hits = []

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):  # noqa: N802
            hits.append(self.path)
            data = body.read_bytes()
            self.send_response(200)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *a):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    t = threading.Thread(target=server.serve_forever, daemon=True)
    t.start()
    try:
        url = f"http://127.0.0.1:{server.server_port}/data/Datensatz.csv"
        path1, cached1 = fetch_release(url, tmp_path / "cache")
        path2, cached2 = fetch_release(url, tmp_path / "cache")
    finally:
        server.shutdown()
    assert (cached1, cached2) == (False, True)
    assert path1 == path2 and path1.name.endswith("-Datensatz.csv")
    assert hits == ["/data/Datensatz.csv"]
    rows, _ = read_release(path2)
    assert rows[0].label == "REFUTED"


# --- strict reading: exact label codes, required columns, CSV errors with file and line --------------


@pytest.mark.parametrize("bad", ["1.7", "0.9", "-0.5", "inf", "", "nan", "3", "1.0", "eins"])
def test_a_label_that_is_not_exactly_a_release_code_is_a_counted_skip_with_file_and_line(tmp_path, bad):
    """Only the release's own codes "0", "1", "2" are labels (docs/sources.md §2): 1.7, 0.9 and -0.5 are not
    truncated to 1, 0 and 0, and inf, nan or an empty cell is a counted skip too, not a crash."""
    path = write_csv(tmp_path / "Datensatz.csv", COLUMNS_12, [row12(), row12(label=bad), row12(label="0", de_verdict="Ja")])
    rows, report = read_release(path)
    assert [(r.row, r.label) for r in rows] == [(0, "REFUTED"), (2, "SUPPORTED")]
    rep = report.as_dict()
    assert rep["skipped"] == [{"id": f"{path}:3", "reason": "bad_label",
                               "detail": f"row 1: label {bad!r} is not one of the release's codes '0', '1', '2'"}]
    assert rep["counts"]["kept"] == 2 and rep["counts"]["rows"] == 3


def test_a_missing_de_verdict_column_is_an_error_naming_file_and_column(tmp_path):
    """Every release variant (docs/sources.md §2: the 12- and the earlier 18-column file) has de_verdict,
    the only source of the level of evidence: a file without it is an error, never a dataset whose levels are
    all None."""
    path = write_csv(tmp_path / "Datensatz.csv", [c for c in COLUMNS_12 if c != "de_verdict"], [row12()])
    with pytest.raises(InputFileError) as exc:
        read_release(path)
    assert str(exc.value) == f"{path}, line 1: the HealthFC release file has no column 'de_verdict'"


def test_missing_variant_columns_are_named(tmp_path):
    path = write_csv(tmp_path / "Datensatz.csv", [c for c in COLUMNS_12 if c not in ("en_top_sentences", "date")], [row12()])
    with pytest.raises(InputFileError) as exc:
        read_release(path)
    assert str(exc.value) == f"{path}, line 1: the HealthFC release file has no columns 'date', 'en_top_sentences'"


def test_broken_csv_quoting_is_an_error_naming_file_and_line(tmp_path):
    path = write_csv(tmp_path / "Datensatz.csv", COLUMNS_12, [row12(), row12()])
    lines = path.read_text(encoding="utf-8-sig").splitlines(keepends=True)
    lines[2] = lines[2].replace("Kaffee und Herz", '"Kaffee" und Herz', 1)  # a quote that closes inside the field
    path.write_text("".join(lines), encoding="utf-8")
    with pytest.raises(InputFileError) as exc:
        read_release(path)
    assert str(exc.value) == f"{path}, line 3: broken CSV quoting: ',' expected after '\"'"
    never_closed = lines[1].rstrip("\n").rsplit(",", 1)[0] + ',"' + URL + "\n"  # the rest of the file is one field
    path.write_text("".join([lines[0], lines[1], never_closed]), encoding="utf-8")
    with pytest.raises(InputFileError) as exc:
        read_release(path)
    assert str(exc.value) == f"{path}, line 3: broken CSV quoting: unexpected end of data"


def test_a_row_with_the_wrong_number_of_fields_is_a_counted_skip(tmp_path):
    path = write_csv(tmp_path / "Datensatz.csv", COLUMNS_12, [row12(), row12(url="https://www.medizin-transparent.at/b/")])
    text = path.read_text(encoding="utf-8-sig")
    path.write_text(text.rstrip("\n") + ",extra\n", encoding="utf-8")
    rows, report = read_release(path)
    assert [r.row for r in rows] == [0]
    assert report.as_dict()["skipped"] == [{"id": f"{path}:3", "reason": "wrong_field_count", "detail": "row 1: 13 fields, the header has 12"}]


def test_table2_counts_only_the_rows_the_dataset_kept(tmp_path):
    """Release rows with bad labels never reach the dataset, so Table 2 counts the kept claims only."""
    from medfc.common.io import read_jsonl
    from medfc.healthfc import steps
    from medfc.healthfc.stats import table2
    from tests.helpers.config import call_step

    path = write_csv(tmp_path / "Datensatz.csv", COLUMNS_12,
                     [row12(), row12(label="1.7"), row12(label="-0.5"), row12(label="inf"), row12(label="0", de_verdict="Ja")])
    t = tmp_path
    call_step(steps.release, {"release": str(path)}, {"rows": str(t / "rows.jsonl"), "report": str(t / "rel.json")},
              {"source": None, "sha256": None, "cache_dir": str(t / "cache")})
    outs = {"jsonl": str(t / "ds.jsonl"), "parquet": str(t / "ds.parquet"), "card": str(t / "card.md"), "report": str(t / "ds.json")}
    call_step(steps.dataset, {"rows": str(t / "rows.jsonl")}, outs, {"mode": "release", "splitter": "pysbd"})
    records = list(read_jsonl(t / "ds.jsonl"))
    assert [r["label"] for r in records] == ["REFUTED", "SUPPORTED"]
    df = table2(records)
    ev = df[(df["aspect"] == "evidence sentences per claim") & (df["language"] == "de")].iloc[0]
    assert ev["n"] == 2
    rep = json.loads((t / "rel.json").read_text())
    assert rep["skipped_by_reason"] == {"bad_label": 3} and [s["id"] for s in rep["skipped"]] == [f"{path}:{n}" for n in (3, 4, 5)]
