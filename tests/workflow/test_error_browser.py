"""The error browser opened in a real headless Chromium, from a file (no server): a probe script appended to a copy
of the page (tests.helpers.error_browser.PROBE) picks each dataset, reads the counts and every row's confusion
matrix, sets the row filter, ticks "wrong only", picks a gold class, clicks a confusion-matrix cell and opens an
article, recording what the page shows each time; the counts must be those of the prediction files. First on a
small stand-in run (no workflow), then on the page the shared demo run wrote (``full_demo_run``).
Needs Chromium (`sudo bash scripts/ci/services.sh start` installs it); without it these tests skip and say so (fail
under MEDFC_REQUIRE_SERVICES=1). The test never installs anything.
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

import pytest

from medfc.experiments.clinifact.systems import CLINIFACT_SYSTEMS
from medfc.tables.errors import ErrorsOptions, read_embedded, write_error_browser
from tests.helpers.browser import probe_page
from tests.helpers.error_browser import PROBE, expected_counts, stand_in_run

pytestmark = pytest.mark.workflow


def check_page(probe: dict, data: dict, files_of_row: dict[str, dict[str, list[str]]]) -> None:
    """What the probe saw against the page's data and each row's prediction files (dataset → row name → files)."""
    assert probe["done"] and not probe["errors"] and probe["ready"] == "1", probe
    assert [d["key"] for d in probe["datasets"]] == [d["key"] for d in data["datasets"]]
    for seen, ds in zip(probe["datasets"], data["datasets"]):
        names = [row["name"] for row in ds["rows"]]
        assert [r.split(" ", 1)[1] for r in seen["rows"]] == names and set(names) == set(files_of_row[ds["key"]])
        expected = {name: expected_counts(files_of_row[ds["key"]][name]) for name in names}
        # no filter: every prediction of every row; every item that has one, a page of them drawn
        total = sum(e["preds"] for e in expected.values())
        assert seen["all"]["preds"] == total
        if len(ds["items"]) <= 50:  # one page: every prediction drawn
            assert seen["all"]["card_rows"] == total
        assert seen["all"]["wrong"] == sum(e["wrong"] for e in expected.values())
        assert seen["all"]["items"] == len(ds["items"]) and seen["all"]["cards"] == min(50, len(ds["items"]))
        assert sorted(seen["all"]["shown_rows"], key=int) == [str(i) for i in range(len(names))]
        # a confusion matrix per row, its cells the prediction files' (gold, predicted) counts
        assert [m["row"] for m in seen["matrices"]] == list(range(len(names)))
        for m in seen["matrices"]:
            pairs = expected[names[m["row"]]]["pairs"]
            cells = {tuple(k.split(" -> ")): v for k, v in m["cells"].items()}
            assert {k: v for k, v in cells.items() if v} == pairs, (names[m["row"]], cells, pairs)
            assert f"n = {sum(pairs.values())}," in m["caption"]
        # the row filter: only the first row's predictions, as many as its files hold; then wrong only; then a gold class
        first = expected[names[0]]
        assert seen["row0"]["preds"] == first["preds"] and seen["row0"]["shown_rows"] == ["0"] and seen["row0_matrices"] == 1
        assert seen["row0"]["preds"] < seen["all"]["preds"] or len(names) == 1
        assert seen["row0_wrong"]["preds"] == seen["row0_wrong"]["wrong"] == first["wrong"] == seen["row0_wrong"]["wrong_rows"]
        gold0 = ds["labels"][0]
        assert seen["row0_gold0"]["preds"] == sum(n for (g, _), n in first["pairs"].items() if g == gold0)
        # a matrix cell: the filters set to its row and classes, as many predictions shown as it counts
        cell = seen["cell"]
        assert cell["shown"]["preds"] == cell["value"] == expected[names[int(cell["row"])]]["pairs"].get((cell["gold_label"], cell["pred_label"]), 0)
        assert cell["shown"]["shown_rows"] == ([cell["row"]] if cell["value"] else [])
        # the first shown card's document: a HealthFC article's sentences, the claim's gold ones marked
        if ds["kind"] == "article":
            item = next(i for i in ds["items"] if i["id"] == seen["doc"]["item"])
            sentences = ds["docs"][item["doc"]]["sentences"][ds["langs"][0]]
            assert seen["doc"]["sentences"] == len(sentences) and seen["doc"]["gold"] == len(item["gold"]), (seen["doc"], item)
        else:
            assert seen["doc"]["text"] > 0


def test_filters_and_counts_in_the_browser_on_a_stand_in_run(chromium, tmp_path):
    inputs, options = stand_in_run(tmp_path / "run", claims=40, claims_per_article=2, sentences=10, folds=2, pairs=30,
                                   models=("tfidf",), systems=("pipeline", "retrieved_web"), clinifact_models=("tfidf", "gbm"))
    write_error_browser(inputs, {"html": tmp_path / "errors.html"}, ErrorsOptions.from_mapping(options))
    page = (tmp_path / "errors.html").read_text(encoding="utf-8")
    files: dict[str, dict[str, list[str]]] = {"healthfc": defaultdict(list), "clinifact": defaultdict(list)}
    for entry, path in zip(options["healthfc"], inputs["healthfc"]):
        files["healthfc"][f"{entry['lang']} / {entry['model']} / {entry['system']}"].append(path)
    for entry, path in zip(options["pairs"][0]["entries"], inputs["pairs_clinifact"]):
        files["clinifact"][f"{entry['model']} / {entry['system']}"].append(path)
    probe = probe_page(chromium, page, PROBE, tmp_path / "browser")
    check_page(probe, read_embedded(page), files)
    assert probe["datasets"][0]["doc"]["tags"] >= probe["datasets"][0]["doc"]["gold"]  # gold and the rows' selections marked


def test_the_demo_runs_page_shows_what_its_prediction_files_hold(full_demo_run, chromium, tmp_path):
    """The page the workflow wrote beside the run's index, linked from it, opened as a reader opens it."""
    results = full_demo_run.path("results")
    page = (results / "errors.html").read_text(encoding="utf-8")
    assert "[`errors.html`](errors.html)" in (results / "index.md").read_text()
    assert '<a href="errors.html"><code>errors.html</code></a>' in (results / "index.html").read_text()
    data = read_embedded(page)
    exp = results / "experiments"
    files: dict[str, dict[str, list[str]]] = {"healthfc": {}, "clinifact": {}}
    for ds in data["datasets"]:
        for row in ds["rows"]:
            if ds["key"] == "healthfc":
                found = sorted(exp.glob(f"healthfc/{row['lang']}/{row['model']}/{row['system']}/fold*/predictions.jsonl"))
            else:
                found = [Path(CLINIFACT_SYSTEMS[row["system"]].run_dir(str(exp), row["model"])) / "predictions.jsonl"]
            files[ds["key"]][row["name"]] = [str(f) for f in found]
    assert [d["key"] for d in data["datasets"]] == ["healthfc", "clinifact"]
    # every HealthFC run of the demo is a row: every predictions file under experiments/healthfc but the inner CV's
    assert sum(len(f) for f in files["healthfc"].values()) == len(list(exp.glob("healthfc/*/*/*/fold*/predictions.jsonl")))
    check_page(probe_page(chromium, page, PROBE, tmp_path / "browser"), data, files)
