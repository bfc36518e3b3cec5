"""The papers' example tables (medfc.tables.examples, steps in medfc.tables.steps) on small hand-made inputs:
each picks its rows by the rule its caption states, whatever order the input comes in; the rows and fields are exact;
each .tex compiles with pdflatex under the workflow's preamble with no overfull box over 1 pt."""

from __future__ import annotations

import csv
import json
import random
from pathlib import Path

import pytest

from medfc.experiments.clinifact.prompts import PROMPT
from medfc.tables import examples, steps
from tests.helpers.config import call_step
from tests.helpers.tex import compile_fragments, overfull_boxes

LONG = ("This sentence is rather long and keeps going with words about trials, placebo groups, participants and "
        "outcomes so that the snippet limit is reached quickly.")


def _claim(cid: str, label: str, evidence: list[int], n: int = 8) -> dict:
    sentences = [f"Sentence {i} of {cid} with 100% & $5 _costs_ {'#' * (i % 2)}." for i in range(n)]
    return {"id": cid, "label": label, "claim_en": f"Does {cid} work?", "claim_de": f"Hilft {cid}?", "evidence_ids": evidence,
            "sentences_en": sentences, "sentences_de": sentences}


def _outputs(tmp_path: Path, stem: str) -> dict[str, Path]:
    return {k: tmp_path / f"{stem}.{k}" for k in ("csv", "md", "tex", "html")}


def _jsonl(path: Path, records: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def _compiles(tmp_path: Path, *tex: Path) -> None:
    log = compile_fragments(list(tex), tmp_path / "doc")
    assert not [b for b in overfull_boxes(log) if b > 1.0], overfull_boxes(log)


# ------------------------------------------------------------------------------------------ Table 1


def test_table1_takes_the_first_supported_and_refuted_claim_with_gold_evidence_by_id(tmp_path):
    records = [_claim("b#0", "SUPPORTED", [3, 4]), _claim("a#1", "SUPPORTED", []), _claim("a#0", "NOT ENOUGH INFO", [1]),
               _claim("c#0", "REFUTED", [0]), _claim("a#2", "SUPPORTED", [2, 6]), _claim("d#0", "REFUTED", [5])]
    results = []
    for seed in (0, 1):  # the input's order does not matter
        random.Random(seed).shuffle(records)
        out = _outputs(tmp_path, f"t1_{seed}")
        call_step(steps.healthfc_table1, {"dataset": _jsonl(tmp_path / f"d{seed}.jsonl", records)}, out,
                  {"lang": "en", "words": 30})
        results.append(list(csv.DictReader(out["csv"].open(encoding="utf-8"))))
    assert results[0] == results[1]
    rows = results[0]
    # a#1 has no gold evidence: a#2 is the first supported claim by id; c#0 the first refuted one
    assert [(r["claim_id"], r["verdict"]) for r in rows] == [("a#2", "Supported"), ("c#0", "Refuted")]
    # a#2: from sentence 1 (the one before its first gold sentence, 2), whole sentences up to 30 words (each has 10)
    assert rows[0]["evidence"] == ("(…) Sentence 1 of a#2 with 100% & $5 _costs_ #. **Sentence 2 of a#2 with 100% & $5 _costs_ .** "
                                   "Sentence 3 of a#2 with 100% & $5 _costs_ #. (…)")
    assert (rows[0]["gold_evidence_shown"], rows[0]["gold_evidence_sentences"]) == ("1", "2")
    assert rows[1]["evidence"].startswith("**Sentence 0 of c#0") and (rows[1]["gold_evidence_shown"], rows[1]["gold_evidence_sentences"]) == ("1", "1")
    md = (tmp_path / "t1_0.md").read_text(encoding="utf-8")
    assert md.startswith("HealthFC Table 1: example claims") and "the first claim by claim id with gold evidence sentences" in md
    assert "up to 30 words" in md and "a#2: 1 of its 2 gold evidence sentences in the snippet" in md
    tex = (tmp_path / "t1_0.tex").read_text(encoding="utf-8")
    assert r"\textbf{Sentence 2 of a\#2 with 100\% \& \$5 \_costs\_ .}" in tex and r"\begin{tabularx}{\linewidth}" in tex
    assert r"\begin{table}[tbp]" in tex  # a column's width
    _compiles(tmp_path, tmp_path / "t1_0.tex")


def test_a_snippet_cuts_a_sentence_longer_than_the_limit_and_marks_what_it_leaves_out():
    parts, shown = examples.article_snippet(["Intro.", LONG, "After."], [1], words=5)
    assert parts == [("(…)", False), ("This sentence is rather long\u00a0…", True), ("(…)", False)] and shown == 1
    parts, shown = examples.article_snippet(["One two.", "Three four.", "Five."], [0, 2], words=10)
    assert parts == [("One two.", True), ("Three four.", False), ("Five.", True)] and shown == 2


# ------------------------------------------------------------------------------------------ Table 4


def _fold(tmp_path: Path, name: str, f1: float, preds: list[tuple[str, str, str, list[str]]]) -> tuple[Path, Path]:
    scores = tmp_path / f"{name}.scores.json"
    scores.write_text(json.dumps({"veracity": {"macro_f1": f1}}), encoding="utf-8")
    predictions = _jsonl(tmp_path / f"{name}.predictions.jsonl", [
        {"id": cid, "label": gold, "pred_label": pred, "evidence": ev, "gold_evidence": [f"Gold of {cid}."] if gold != "NOT ENOUGH INFO" else [],
         "fold": int(name[-1])} for cid, gold, pred, ev in preds])
    return scores, predictions


def test_table4_shows_the_wrong_claims_of_the_best_row_by_veracity_f1_in_claim_id_order(tmp_path):
    S, R, N = "SUPPORTED", "REFUTED", "NOT ENOUGH INFO"
    runs = {  # pipeline tfidf: mean F1 0.5; joint minilm: mean 0.6 (the best); pipeline minilm: 0.6 too, planned later
        ("tfidf", "pipeline", 0): (0.5, [("x#0", S, R, ["a."])]),
        ("minilm", "joint", 0): (0.7, [("z#0", S, S, ["ok."]), ("y#0", R, S, ["Earlier studies supported it.", "More words here."])]),
        ("minilm", "joint", 1): (0.5, [("b#0", N, S, []), ("w#0", S, N, [LONG]), ("a#0", R, R, ["fine."])]),
        ("minilm", "pipeline", 0): (0.6, [("q#0", S, R, ["q."])]),
    }
    entries, scores, predictions = [], [], []
    for (model, system, fold), (f1, preds) in runs.items():
        s, p = _fold(tmp_path, f"{model}-{system}-{fold}", f1, preds)
        entries.append({"lang": "en", "model": model, "system": system, "fold": fold})
        scores.append(s)
        predictions.append(p)
    dataset = _jsonl(tmp_path / "healthfc.jsonl", [{"id": c, "claim_en": f"Claim {c}?", "claim_de": f"Behauptung {c}?"}
                                                   for c in ("x#0", "z#0", "y#0", "b#0", "w#0", "a#0", "q#0")])
    out = _outputs(tmp_path, "t4")
    call_step(steps.healthfc_table4, {"scores": scores, "predictions": predictions, "dataset": dataset}, out,
              {"entries": entries, "shown": 2, "words": 8, "scale": "smoke"})
    rows = list(csv.DictReader(out["csv"].open(encoding="utf-8")))
    assert [(r["claim_id"], r["claim"], r["gold_label"], r["predicted_label"]) for r in rows] == [
        ("b#0", "Claim b#0?", "NEI", "Supported"), ("w#0", "Claim w#0?", "Supported", "NEI")]
    assert rows[0]["gold_evidence"] == "[None]" and rows[0]["selected_evidence"] == "[None]"
    assert rows[1]["selected_evidence"] == "This sentence is rather long and keeps going\u00a0…"
    md = out["md"].read_text(encoding="utf-8")
    assert ("The row of best mean veracity macro-F1 among the systems that select evidence: minilm (joint, en), 60.0 over 2 folds. "
            "Its wrong claims in claim-id order, the first 2 of 3 wrong of 5 test claims.") in md
    assert "cut at 8 words" in md and "smoke-scale run" in md
    tex = out["tex"].read_text(encoding="utf-8")
    assert r"Supported $\|$ NEI" in tex and r"\begin{table*}[tbp]" in tex
    _compiles(tmp_path, out["tex"])


def test_table4_without_a_row_says_so():
    df, table = examples.healthfc_errors([], [], {}, 3, 50)
    assert df.empty and "No row of a system that selects evidence ran" in table.caption


# ------------------------------------------------------------------------------------ Tables 5 and 7

PAIR_COLUMNS = ["index", "nctId", "claim", "PMID", "article_title", "article_abstract", "label"]


def _pairs(tmp_path: Path) -> Path:
    rows = [["7", "NCT7", "Drug A is superior to placebo in terms of pain_score at 6 weeks", "77", "A trial of A", LONG + " " + LONG, "2"],
            ["3", "NCT3", "Drug B is superior to C in terms of 50% response", "33", "B vs C", "B worked {better} ~ than C.", "1"],
            ["5", "NCT5", "Drug D is superior to E", "55", "D vs E", "No difference.", "0"],
            ["1", "NCT1", "Drug F is superior to G", "11", "F vs G", "Another evidence abstract.", "1"]]
    path = tmp_path / "test_set.csv"
    with path.open("w", newline="", encoding="utf-8") as fh:
        csv.writer(fh).writerows([PAIR_COLUMNS, *rows])
    return path


def test_table5_takes_the_first_pair_of_each_label_in_the_splits_row_order(tmp_path):
    out = _outputs(tmp_path, "t5")
    call_step(steps.clinifact_table5, {"pairs": _pairs(tmp_path)}, out, {"split": "test", "words": 12})
    rows = list(csv.DictReader(out["csv"].open(encoding="utf-8")))
    assert [(r["label"], r["index"], r["split"]) for r in rows] == [("evidence", "3", "test"), ("inconclusive", "5", "test"), ("NEI", "7", "test")]
    assert rows[2]["abstract"] == " ".join(LONG.split()[:12]) + "\u00a0…" and rows[0]["abstract"] == "B worked {better} ~ than C."
    md = out["md"].read_text(encoding="utf-8")
    assert "per label, the first pair in row order of the first split that has one, searching test (4 pairs); the abstract cut at 12 words" in md
    _compiles(tmp_path, out["tex"])


def test_table5_takes_a_label_the_test_split_lacks_from_validation_then_train(tmp_path):
    test = tmp_path / "test_set.csv"
    validation = tmp_path / "validation_set.csv"
    train = tmp_path / "train_set.csv"
    for path, rows in ((test, [["1", "N1", "c1", "11", "t", "a1", "1"]]), (validation, [["2", "N2", "c2", "22", "t", "a2", "1"]]),
                       (train, [["3", "N3", "c3", "33", "t", "a3", "2"], ["4", "N4", "c4", "44", "t", "a4", "0"]])):
        with path.open("w", newline="", encoding="utf-8") as fh:
            csv.writer(fh).writerows([PAIR_COLUMNS, *rows])
    out = _outputs(tmp_path, "t5")
    call_step(steps.clinifact_table5, {"pairs": [test, validation, train]}, out, {"split": "test", "words": 12})
    rows = list(csv.DictReader(out["csv"].open(encoding="utf-8")))
    assert [(r["label"], r["index"], r["split"]) for r in rows] == [("evidence", "1", "test"), ("inconclusive", "4", "train"), ("NEI", "3", "train")]
    assert "(evidence from test; inconclusive from train; NEI from train)" in out["md"].read_text(encoding="utf-8")


def test_table5_says_which_label_no_split_has():
    pair = {"claim": "c", "article_abstract": "a", "label": "1", "index": "1"}
    df, table = examples.clinifact_examples([("test", [pair])], 10)
    assert list(df["label"]) == ["evidence"] and "No split has an inconclusive or NEI pair." in table.caption


def test_table7_is_the_prompt_as_sent_its_template_and_the_first_pair_filled_in(tmp_path):
    out = _outputs(tmp_path, "t7")
    call_step(steps.clinifact_table7, {"pairs": _pairs(tmp_path)}, out, {"split": "test", "words": 5})
    rows = list(csv.DictReader(out["csv"].open(encoding="utf-8")))
    assert [r["part"] for r in rows] == ["template", "example", "answer options"]
    assert rows[0]["text"] == PROMPT and "{claim}" in rows[0]["text"] and "{abstract}" in rows[0]["text"]
    first = " ".join(LONG.split()[:5]) + "\u00a0…"
    assert rows[1]["pair"] == "7" and rows[1]["text"] == PROMPT.format(
        claim="Drug A is superior to placebo in terms of pain_score at 6 weeks", title="A trial of A", abstract=first)
    assert rows[2]["text"] == "TRUE = evidence, FALSE = inconclusive, NONE = NEI"
    tex = out["tex"].read_text(encoding="utf-8")
    assert r"Claim: \{claim\}" in tex and r"pain\_score" in tex
    assert "the example fills it with the first pair of the test split (its abstract cut at 5 words)" in out["md"].read_text(encoding="utf-8")
    _compiles(tmp_path, out["tex"])


def test_table7_needs_no_pair_for_its_template(tmp_path):
    df, table = examples.clinifact_prompt([], 60)
    assert list(df["part"]) == ["template", "answer options"]
    assert "the test split has no pair to fill it with" in table.caption


@pytest.mark.parametrize("module", ["medfc.tables.steps", "medfc.tables.options", "medfc.plan.examples"])
def test_the_example_tables_load_no_heavy_library(module):
    import subprocess
    import sys

    code = f"import sys, {module}; print(sorted(m for m in ('torch', 'transformers', 'sklearn', 'requests', 'matplotlib', 'scipy') if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         env={"PYTHONPATH": ":".join(sys.path), "PATH": ""})
    assert out.stdout.strip() == "[]"


def test_the_runs_index_lists_the_example_and_medsnip_tables(tmp_path):
    from medfc.common.run_index import index_markdown

    files = ["tables/healthfc_table1.md", "tables/clinifact_table7.md", "medsnip/table3_structure.md", "medsnip/bench/table6_tau.md",
             "medsnip/bench/table.md", "medsnip/bench/fig21_calls.png"]
    for f in files:
        (tmp_path / f).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / f).write_text("x\n", encoding="utf-8")
    md = index_markdown(tmp_path, tmp_path / "provenance", files, None)
    further = next(line for line in md.splitlines() if line.startswith("Further tables"))
    assert all(f"`{f}`" in further for f in ("tables/healthfc_table1.md", "tables/clinifact_table7.md", "medsnip/table3_structure.md",
                                             "medsnip/bench/table6_tau.md"))
    assert "`medsnip/bench/table.md`" not in further and "### `medsnip/bench/table.md`" in md  # a headline table
    assert "`medsnip/bench/fig21_calls.png`" in md.split("## Figures", 1)[1]
