"""The error browser (medfc.tables.errors) in tests and its benchmark: a stand-in run of any size (a HealthFC
dataset, each row's fold predictions, CliniFact test pairs and their predictions, made up and seeded) and the probe
that drives the page in Chromium (tests.helpers.browser), recording what it shows."""

from __future__ import annotations

import csv
import json
import random
from collections import Counter
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from medfc.common.labels import CLINIFACT_CODES, LOE_LABELS, VERACITY_LABELS
from medfc.experiments.models.options import CLINIFACT_PAIRS

CLINIFACT_CODE = {label: code for code, label in CLINIFACT_CODES.items()}
WORDS = ("trial randomised placebo evidence effect patients dose risk outcome review cohort therapy symptom reduced "
         "participants months weeks compared significant studies treatment group adults children blood pressure").split()


def _sentence(rng: random.Random, n: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(n)).capitalize() + "."


def _probs(rng: random.Random, labels: Sequence[str], pred: str) -> dict[str, float]:
    raw = {label: rng.random() for label in labels}
    raw[pred] = max(raw.values()) + 0.5
    total = sum(raw.values())
    return {label: round(v / total, 6) for label, v in raw.items()}


def write_jsonl(path: Path, records: Iterable[dict[str, Any]]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def stand_in_run(root: Path, *, claims: int = 750, claims_per_article: int = 1, sentences: int = 45, folds: int = 5,
                 models: Sequence[str] = ("tfidf", "minilm"), systems: Sequence[str] = ("pipeline", "oracle", "claims_only", "retrieved_web"),
                 pairs: int = 394, clinifact_models: Sequence[str] = ("tfidf", "gbm", "minilm", "tfidf+gbm"),
                 seed: int = 0) -> tuple[dict[str, Any], dict[str, Any]]:
    """A made-up run under ``root``: ``claims`` HealthFC claims in articles of ``sentences`` sentences (English), each
    model × system predicting every claim over ``folds`` folds, and ``pairs`` CliniFact test pairs predicted by every
    CliniFact model. The error browser step's ``(inputs, options)`` for it."""
    rng = random.Random(seed)
    records = []
    for i in range(claims):
        article = f"article-{i // claims_per_article:04d}"
        gold = sorted(rng.sample(range(sentences), 3))
        label = rng.choice(VERACITY_LABELS)
        records.append({"id": f"{article}#{i % claims_per_article}", "article_id": article, "title": f"Article {article}",
                        "claim_en": _sentence(rng, 12).rstrip(".") + "?", "label": label, "evidence_level": rng.choice(LOE_LABELS),
                        "evidence_ids": gold, "sentences_en": [_sentence(rng, rng.randint(12, 30)) for _ in range(sentences)]})
    by_article = {r["article_id"]: r["sentences_en"] for r in records}
    for r in records:  # the claims of one article share its sentences
        r["sentences_en"] = by_article[r["article_id"]]
    dataset = write_jsonl(root / "healthfc.jsonl", records)
    snippets = [_sentence(rng, 25) for _ in range(claims * 2)]
    healthfc_entries, healthfc_files = [], []
    for model in models:
        for system in systems:
            for fold in range(folds):
                out = []
                for r in records[fold::folds]:
                    gold = r["label"]
                    pred = gold if rng.random() < 0.6 else rng.choice(VERACITY_LABELS)
                    rec = {"id": r["id"], "label": gold, "pred_label": pred, "probs": _probs(rng, VERACITY_LABELS, pred), "fold": fold,
                           "lang": "en", "system": system, "evidence_ids": r["evidence_ids"], "pred_evidence_ids": None, "evidence": []}
                    if system == "pipeline":
                        rec["pred_evidence_ids"] = sorted(rng.sample(range(sentences), 5))
                        rec["evidence"] = [r["sentences_en"][k] for k in rec["pred_evidence_ids"]]
                    elif system == "oracle":
                        rec["evidence"] = [r["sentences_en"][k] for k in r["evidence_ids"]]
                    elif system.startswith("retrieved_"):
                        rec["evidence"] = rng.sample(snippets, 3)
                    out.append(rec)
                healthfc_files.append(str(write_jsonl(root / "healthfc" / model / system / f"fold{fold}.jsonl", out)))
                healthfc_entries.append({"lang": "en", "model": model, "system": system, "fold": fold})
    abstracts = [(_sentence(rng, 10), " ".join(_sentence(rng, 20) for _ in range(10))) for _ in range(max(1, pairs // 2))]
    rows = []
    for i in range(pairs):
        title, abstract = abstracts[i % len(abstracts)]
        rows.append({"index": str(i), "nctId": f"NCT{i:08d}", "claim": _sentence(rng, 20), "PMID": str(10_000_000 + i % len(abstracts)),
                     "article_title": title, "article_abstract": abstract, "label": str(CLINIFACT_CODE[rng.choice(list(CLINIFACT_CODE))])})
    test_set = root / "test_set.csv"
    with test_set.open("w", newline="", encoding="utf-8") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    clinifact_entries, clinifact_files = [], []
    labels = list(CLINIFACT_CODE)
    for model in clinifact_models:
        out = []
        for row in rows:
            gold = CLINIFACT_CODES[int(row["label"])]
            pred = gold if rng.random() < 0.7 else rng.choice(labels)
            out.append({"id": row["index"], "split": "test", "system": "discriminative", "label": gold, "pred_label": pred,
                        "probs": _probs(rng, labels, pred)})
        clinifact_files.append(str(write_jsonl(root / "clinifact" / model / "predictions.jsonl", out)))
        clinifact_entries.append({"model": model, "system": "discriminative"})
    inputs = {"healthfc": healthfc_files, "dataset": str(dataset), "pairs_clinifact": clinifact_files, "pairs_clinifact_test": str(test_set)}
    section = {"title": "CliniFact (test split)", "data": CLINIFACT_PAIRS.to_mapping(), "entries": clinifact_entries}
    options = {"healthfc": healthfc_entries, "pairs": [section], "scale": "smoke"}
    return inputs, options


def expected_counts(files: Sequence[str | Path]) -> dict[str, Any]:
    """What a row's prediction files hold (test split only): predictions, wrong ones, and (gold, predicted) pairs."""
    pairs: Counter[tuple[str, str]] = Counter()
    for path in files:
        for line in Path(path).read_text(encoding="utf-8").splitlines():
            if line.strip():
                r = json.loads(line)
                if r.get("split", "test") == "test":
                    pairs[(r["label"], r["pred_label"] if r.get("pred_label") is not None else "(no prediction)")] += 1
    return {"preds": sum(pairs.values()), "wrong": sum(n for (g, p), n in pairs.items() if g != p), "pairs": dict(pairs)}


# Drives the page as a reader would, for each dataset in turn: its tab, the counts with no filter, every row's
# confusion matrix; then the first row in the row filter, "wrong only", a gold class, a matrix cell, and the first
# shown card's article or abstract opened. Records into <pre id="medfc-probe">.
PROBE = r"""
<script id="medfc-probe-script">
(function () {
  var out = {errors: [], datasets: [], done: false};
  window.addEventListener("error", function (e) { out.errors.push(String(e.message)); });
  function $(id) { return document.getElementById(id); }
  function num(id) { return +$(id).textContent; }
  function counts() {
    return {items: num("shown-items"), preds: num("shown-preds"), wrong: num("shown-wrong"),
            cards: document.querySelectorAll("#list article.item").length,
            card_rows: document.querySelectorAll("#list tr[data-row]").length,
            shown_rows: Array.from(new Set(Array.from(document.querySelectorAll("#list tr[data-row]")).map(function (tr) { return tr.getAttribute("data-row"); }))),
            wrong_rows: document.querySelectorAll("#list tr.wrong").length, page: $("page-no").textContent};
  }
  function choose(id, value) { var s = $(id); s.value = value; s.dispatchEvent(new Event("change")); }
  function matrices() {
    return Array.from(document.querySelectorAll("#matrices figure.matrix")).map(function (f) {
      var head = Array.from(f.querySelectorAll("tr:first-of-type th")).slice(1).map(function (th) { return th.textContent; });
      var cells = {};
      Array.from(f.querySelectorAll("tr")).slice(1).forEach(function (tr) {
        var gold = tr.querySelector("th").textContent;
        Array.from(tr.querySelectorAll("td")).forEach(function (td, k) { cells[gold + " -> " + head[k]] = +td.textContent; });
      });
      return {row: +f.getAttribute("data-row"), caption: f.querySelector("caption").textContent, cells: cells};
    });
  }
  function main() {
    out.ready = document.documentElement.getAttribute("data-ready");
    Array.from(document.querySelectorAll("#datasets button")).forEach(function (b) {
      b.click();
      var d = {key: b.getAttribute("data-dataset"), rows: Array.from($("f-row").options).slice(1).map(function (o) { return o.textContent; }),
               gold_options: Array.from($("f-gold").options).map(function (o) { return o.textContent; }),
               all: counts(), matrices: matrices()};
      choose("f-row", "0"); d.row0 = counts(); d.row0_matrices = matrices().length;
      $("f-wrong").click(); d.row0_wrong = counts();
      $("f-wrong").click(); choose("f-gold", "0"); d.row0_gold0 = counts();
      choose("f-row", ""); choose("f-gold", "");
      var cell = document.querySelector("#matrices td.miss") || document.querySelector("#matrices td.hit");
      if (cell) {
        cell.click();
        d.cell = {row: $("f-row").value, gold: $("f-gold").value, pred: $("f-pred").value, value: +cell.textContent,
                  gold_label: $("f-gold").selectedOptions[0].textContent, pred_label: $("f-pred").selectedOptions[0].textContent, shown: counts()};
      }
      var details = document.querySelector("#list details.doc");
      if (details) {
        details.open = true; details.dispatchEvent(new Event("toggle"));
        d.doc = {item: details.closest("article.item").getAttribute("data-item"),
                 sentences: details.querySelectorAll("li").length, gold: details.querySelectorAll("li.gold").length,
                 tags: details.querySelectorAll(".tag").length, text: details.textContent.length};
      }
      out.datasets.push(d);
    });
    out.done = true;
  }
  window.addEventListener("load", function () {
    try { main(); } catch (e) { out.errors.push("probe: " + e + " " + (e.stack || "")); }
    var pre = document.createElement("pre");
    pre.id = "medfc-probe"; pre.style.display = "none";
    pre.textContent = JSON.stringify(out);
    document.body.appendChild(pre);
  });
})();
</script>
"""
