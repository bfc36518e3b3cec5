"""The error browser (medfc.tables.errors) from a small hand-written run: what the page embeds (each claim or pair
once, each article's sentences and each shown text once, every row's predictions with their labels, probabilities
and evidence, only the test split of CliniFact), that it loads nothing and that it is the same bytes every time."""

from __future__ import annotations

import csv
import json
import re

import pytest

from medfc.experiments.models.options import CLINIFACT_PAIRS
from medfc.tables.errors import ErrorsOptions, PairsSection, page, page_data, read_embedded, write_error_browser
from tests.helpers.error_browser import write_jsonl

SENTENCES_A = ["Sentence a0.", "Sentence a1 says </script><b>not markup</b> & more.", "Sentence a2.", "Sentence a3."]
SENTENCES_B = ["Sentence b0.", "Sentence b1.", "Sentence b2."]
CLAIMS = [
    {"id": "a#0", "article_id": "a", "title": "Article A", "claim_en": "Does A work?", "label": "SUPPORTED", "evidence_ids": [1, 2],
     "sentences_en": SENTENCES_A},
    {"id": "unpredicted#0", "article_id": "u", "title": "U", "claim_en": "Never predicted?", "label": "REFUTED", "evidence_ids": [],
     "sentences_en": ["U0."]},
    {"id": "a#1", "article_id": "a", "title": "Article A", "claim_en": "Does A harm?", "label": "REFUTED", "evidence_ids": [3],
     "sentences_en": SENTENCES_A},
    {"id": "b#0", "article_id": "b", "title": "Article B", "claim_en": "Is B safe?", "label": "NOT ENOUGH INFO", "evidence_ids": [],
     "sentences_en": SENTENCES_B},
]
VERACITY = ("SUPPORTED", "NOT ENOUGH INFO", "REFUTED")


def _hfc(cid, gold, pred, p, fold, **extra):
    probs = {label: round((1 - p) / 2, 6) for label in VERACITY} | {pred: p}
    return {"id": cid, "label": gold, "pred_label": pred, "probs": probs, "fold": fold, "lang": "en", **extra}


SNIPPET = "A web snippet shown for two claims."
HEALTHFC_RUNS = [  # (entry, records): two folds of the pipeline, two of retrieved_web, one of level_of_evidence
    ({"lang": "en", "model": "tfidf", "system": "pipeline", "fold": 0},
     [_hfc("a#0", "SUPPORTED", "SUPPORTED", 0.61234, 0, pred_evidence_ids=[2, 0], evidence=["Sentence a2.", "Sentence a0."]),
      _hfc("a#1", "REFUTED", "SUPPORTED", 0.5, 0, pred_evidence_ids=[3], evidence=["Sentence a3."])]),
    ({"lang": "en", "model": "tfidf", "system": "pipeline", "fold": 1},
     [_hfc("b#0", "NOT ENOUGH INFO", "REFUTED", 0.4, 1, pred_evidence_ids=[], evidence=[]),
      _hfc("not-in-dataset#0", "REFUTED", "REFUTED", 0.9, 1, pred_evidence_ids=[0], evidence=[]),
      {"id": "b#0", "label": None, "pred_label": "REFUTED"}]),
    ({"lang": "en", "model": "tfidf", "system": "retrieved_web", "fold": 0},
     [_hfc("a#0", "SUPPORTED", "REFUTED", 0.7, 0, pred_evidence_ids=None, evidence=[SNIPPET, "Only for a#0."]),
      _hfc("a#1", "REFUTED", "REFUTED", 0.8, 0, pred_evidence_ids=None, evidence=[SNIPPET])]),
    ({"lang": "en", "model": "tfidf", "system": "retrieved_web", "fold": 1},
     [_hfc("b#0", "NOT ENOUGH INFO", "NOT ENOUGH INFO", 0.5, 1, pred_evidence_ids=None, evidence=[])]),
    ({"lang": "en", "model": "tfidf", "system": "level_of_evidence", "fold": 0},
     [{"id": "a#0", "label": "moderate", "pred_label": "high", "probs": {"high": 0.5, "moderate": 0.3, "low": 0.2}, "fold": 0,
       "pred_evidence_ids": None, "evidence": []}]),
]


class Pair:
    def __init__(self, id, claim, title, abstract, label):
        self.id, self.claim, self.title, self.abstract, self.label = id, claim, title, abstract, label


ABSTRACT = "One abstract that two pairs share."
PAIRS = [Pair("7", "Drug X is superior to placebo.", "Trial X", ABSTRACT, "evidence"),
         Pair("9", "Drug X is not superior to placebo.", "Trial X", ABSTRACT, "inconclusive"),
         Pair("11", "Drug Y lowers pressure.", "Trial Y", "Another abstract.", "NEI")]
CLINIFACT_RUNS = [
    ({"model": "tfidf", "system": "discriminative"},
     [{"id": "7", "split": "test", "label": "evidence", "pred_label": "inconclusive", "probs": {"evidence": 0.2, "inconclusive": 0.5, "NEI": 0.3}},
      {"id": "9", "split": "validation", "label": "inconclusive", "pred_label": "NEI", "probs": {"evidence": 0.2, "inconclusive": 0.3, "NEI": 0.5}},
      {"id": "9", "split": "test", "label": "inconclusive", "pred_label": "inconclusive", "probs": {"evidence": 0.1, "inconclusive": 0.8, "NEI": 0.1}},
      {"id": "11", "split": "test", "label": "NEI", "pred_label": "NEI", "probs": {"evidence": 0.1, "inconclusive": 0.1, "NEI": 0.8}}]),
    ({"model": "tinylm", "system": "zero_shot"},
     [{"id": "7", "split": "test", "label": "evidence", "pred_label": None, "probs": {"evidence": None, "inconclusive": None, "NEI": None}}]),
]


CLINIFACT = PairsSection("CliniFact (test split)", CLINIFACT_PAIRS, tuple(e for e, _ in CLINIFACT_RUNS))


@pytest.fixture(scope="module")
def data():
    built, left_out = page_data(HEALTHFC_RUNS, CLAIMS, [(CLINIFACT, CLINIFACT_RUNS, PAIRS)], "smoke")
    assert left_out == {"id not in the dataset": 1, "no gold label": 1}
    return built


def _rows(section):
    return {row["name"]: row for row in section["rows"]}


def test_healthfc_claims_and_articles_are_embedded_once_in_the_datasets_order(data):
    hfc = data["datasets"][0]
    assert hfc["key"] == "healthfc" and hfc["unit"] == "claim" and hfc["langs"] == ["en"]
    assert [i["id"] for i in hfc["items"]] == ["a#0", "a#1", "b#0"]  # a claim no row predicts is left out
    assert hfc["items"][0] == {"id": "a#0", "label": "SUPPORTED", "doc": "a", "text": {"en": "Does A work?"}, "gold": [1, 2]}
    assert hfc["docs"] == {"a": {"title": "Article A", "sentences": {"en": SENTENCES_A}},
                           "b": {"title": "Article B", "sentences": {"en": SENTENCES_B}}}
    assert hfc["labels"] == ["SUPPORTED", "NOT ENOUGH INFO", "REFUTED", "high", "moderate", "low"]


def test_each_rows_predictions_hold_gold_prediction_probability_fold_and_evidence(data):
    hfc = data["datasets"][0]
    rows = _rows(hfc)
    assert list(rows) == ["en / tfidf / pipeline", "en / tfidf / retrieved_web", "en / tfidf / level_of_evidence"]
    code = {label: i for i, label in enumerate(hfc["labels"])}
    pipeline = rows["en / tfidf / pipeline"]
    assert pipeline["folds"] == [0, 1] and pipeline["labels"] == [code[x] for x in VERACITY]
    # [item, gold, predicted, probability of the prediction (3 places), fold, selected sentence ids, shown texts]
    assert pipeline["preds"] == [[0, code["SUPPORTED"], code["SUPPORTED"], 0.612, 0, [0, 2], None],
                                 [1, code["REFUTED"], code["SUPPORTED"], 0.5, 0, [3], None],
                                 [2, code["NOT ENOUGH INFO"], code["REFUTED"], 0.4, 1, [], None]]
    web = rows["en / tfidf / retrieved_web"]["preds"]
    assert [data["texts"][t] for t in web[0][6]] == [SNIPPET, "Only for a#0."] and web[1][6] == web[0][6][:1]  # a text kept once
    assert web[2][5:] == [None, None]  # no evidence shown
    loe = rows["en / tfidf / level_of_evidence"]
    assert loe["preds"] == [[0, code["moderate"], code["high"], 0.5, 0, None, None]]
    assert loe["labels"] == [code[x] for x in ("high", "moderate", "low")]  # its system's classes: its confusion matrix's axes


def test_clinifact_pairs_their_test_split_and_each_abstract_once(data):
    cf = data["datasets"][1]
    assert cf["key"] == "clinifact" and cf["labels"] == ["evidence", "inconclusive", "NEI"]
    assert [i["id"] for i in cf["items"]] == ["7", "9", "11"]
    assert cf["items"][0]["text"] == {"": "Drug X is superior to placebo."} and cf["items"][0]["doc"] == cf["items"][1]["doc"]
    assert sorted(d["text"] for d in cf["docs"].values()) == ["Another abstract.", ABSTRACT]
    rows = _rows(cf)
    assert rows["tfidf / discriminative"]["preds"] == [[0, 0, 1, 0.5, None, None, None], [1, 1, 1, 0.8, None, None, None],
                                                        [2, 2, 2, 0.8, None, None, None]]  # the validation record left out
    assert rows["tinylm / zero_shot"]["preds"] == [[0, 0, None, None, None, None, None]]  # no prediction


def test_the_page_embeds_the_data_safely_and_loads_nothing(data):
    text = page(data, "Error browser")
    assert read_embedded(text) == data
    assert text.count("</script>") == 2  # the data's and the page script's: a sentence's "</script>" is escaped
    for sentence in [*SENTENCES_A, *SENTENCES_B, ABSTRACT, SNIPPET]:
        assert text.count(json.dumps(sentence, ensure_ascii=False).replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")) == 1
    assert not re.search(r"""(?:src|href)\s*=\s*["']?(?:https?:)?//""", text) and "@import" not in text and "fetch(" not in text


def test_the_step_writes_the_same_bytes_from_the_files(tmp_path):
    """The rule's step, from prediction files, the dataset JSONL and the test CSV, twice."""
    inputs = {"healthfc": [str(write_jsonl(tmp_path / f"h{i}.jsonl", records)) for i, (_, records) in enumerate(HEALTHFC_RUNS)],
              "dataset": str(write_jsonl(tmp_path / "healthfc.jsonl", CLAIMS)),
              "pairs_clinifact": [str(write_jsonl(tmp_path / f"c{i}.jsonl", records)) for i, (_, records) in enumerate(CLINIFACT_RUNS)],
              "pairs_clinifact_test": str(tmp_path / "test_set.csv")}
    with open(inputs["pairs_clinifact_test"], "w", newline="", encoding="utf-8") as fh:
        writer = csv.writer(fh)
        writer.writerow(["index", "nctId", "claim", "PMID", "article_title", "article_abstract", "label"])
        for p in PAIRS:
            writer.writerow([p.id, "NCT1", p.claim, "1", p.title, p.abstract, {"evidence": 1, "inconclusive": 0, "NEI": 2}[p.label]])
    options = ErrorsOptions.from_mapping({"healthfc": [e for e, _ in HEALTHFC_RUNS], "pairs": [CLINIFACT.to_mapping()], "scale": "smoke"})
    counts = write_error_browser(inputs, {"html": tmp_path / "errors.html"}, options)
    first = (tmp_path / "errors.html").read_bytes()
    assert counts == {"healthfc_items": 3, "clinifact_items": 3, "predictions": 11, "left out: id not in the dataset": 1,
                      "left out: no gold label": 1}
    write_error_browser(inputs, {"html": tmp_path / "errors.html"}, options)
    assert (tmp_path / "errors.html").read_bytes() == first
    embedded = read_embedded(first.decode("utf-8"))
    assert [d["key"] for d in embedded["datasets"]] == ["healthfc", "clinifact"] and embedded["scale"] == "smoke"
    with pytest.raises(ValueError, match=r"2 CliniFact \(test split\) prediction files for 1 entries"):
        one = {**CLINIFACT.to_mapping(), "entries": [{}]}
        write_error_browser(inputs, {"html": tmp_path / "x.html"}, ErrorsOptions.from_mapping({**options.to_mapping(), "pairs": [one]}))


def test_a_run_without_predictions_of_a_dataset_leaves_it_out(tmp_path):
    built, _ = page_data([], [], [(CLINIFACT, CLINIFACT_RUNS, PAIRS)], "cpu")
    assert [d["key"] for d in built["datasets"]] == ["clinifact"] and built["texts"] == []
    # the page of a run with neither still opens, and says so
    assert "This run made no predictions." in page({"datasets": [], "texts": [], "scale": "cpu"}, "Error browser")
