"""The run's error browser: ``<results_dir>/errors.html``, one self-contained page listing every test claim of
HealthFC and every test pair of each pairs dataset with what each row of the run predicted for it.

The page's data (:func:`page_data`, embedded as JSON) holds each text once: ``texts`` (evidence shown), per dataset
``docs``, ``items`` and ``rows`` (each row's predictions, ``[item, gold, predicted, probability, fold, selected
sentence ids, shown texts]``, labels as indices into ``labels``). Same inputs, same bytes.
"""

from __future__ import annotations

import json
import logging
import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from medfc.common.io import atomic_write, input_paths, read_jsonl
from medfc.common.labels import LOE_LABELS, VERACITY_LABELS
from medfc.common.options import Options
from medfc.common.stepfiles import StepFiles
from medfc.experiments.models.options import PairData
from medfc.experiments.healthfc.systems import SYSTEMS
from medfc.experiments.healthfc.systems import system as system_spec
from medfc.tables.errors_page import PAGE_TEMPLATE

log = logging.getLogger(__name__)

Record = Mapping[str, Any]
Run = tuple[Mapping[str, Any], Sequence[Record]]  # one prediction file: its entry (lang, model, system, fold) and its records


@dataclass(frozen=True)
class PairsSection(Options):
    """One pairs dataset's part of the page: its title, how its test split is read and one entry per prediction file."""

    title: str
    data: PairData
    entries: tuple[dict[str, Any], ...]


@dataclass(frozen=True)
class ErrorsOptions(Options):
    """The rule ``error_browser``'s: one entry per HealthFC prediction file, each pairs dataset's section and the
    run's scale."""

    healthfc: tuple[dict[str, Any], ...]
    pairs: tuple[PairsSection, ...]
    scale: Literal["smoke", "cpu", "paper"]


def ordered_labels(known: Sequence[str], seen: Iterable[str]) -> list[str]:
    """``known`` labels that were seen, in their order, then any other seen label, sorted."""
    seen = set(seen)
    return [label for label in known if label in seen] + sorted(seen - set(known))


def _probability(record: Record) -> float | None:
    probs = record.get("probs") or {}
    value = probs.get(record.get("pred_label")) if isinstance(probs, Mapping) else None
    return None if value is None else round(float(value), 3)


def _rows(runs: Sequence[Run], keys: Sequence[str], ids: Sequence[str], unmatched: Counter[str],
          test_only: bool) -> tuple[list[tuple[dict[str, Any], list[Record]]], list[int], dict[str, int]]:
    """The runs grouped into rows (the entry without its fold), in their first file's order, each id once; the
    positions in ``ids`` of the items they predict, in order, and each such item's id → its index among them."""
    item_of = {rid: i for i, rid in enumerate(ids)}
    rows: dict[str, tuple[dict[str, Any], list[Record], set[str]]] = {}
    for entry, records in runs:
        name = " / ".join(str(entry[k]) for k in keys if entry.get(k) not in (None, ""))
        row = rows.setdefault(name, ({k: entry[k] for k in keys if k in entry} | {"name": name, "folds": []}, [], set()))
        if entry.get("fold") is not None and int(entry["fold"]) not in row[0]["folds"]:
            row[0]["folds"].append(int(entry["fold"]))
        for r in records:
            if test_only and r.get("split", "test") != "test":
                continue
            rid = str(r.get("id"))
            if r.get("label") is None:
                unmatched["no gold label"] += 1
            elif rid not in item_of:
                unmatched["id not in the dataset"] += 1
            elif rid in row[2]:
                unmatched["id repeated in a row"] += 1
            else:
                row[2].add(rid)
                row[1].append({**r, "fold": entry.get("fold", r.get("fold"))})
    used = sorted({item_of[str(r["id"])] for _, records, _ in rows.values() for r in records})
    new_index = {ids[old]: new for new, old in enumerate(used)}
    return [(entry, records) for entry, records, _ in rows.values()], used, new_index


def _encode_rows(rows: list[tuple[dict[str, Any], list[Record]]], labels: list[str], item_of: Mapping[str, int],
                 evidence: Any, declared: Any) -> list[dict[str, Any]]:
    """Each row's entry with its predictions as compact lists sorted by item, and its labels (those its system
    predicts, ``declared(entry)``, and any other it has)."""
    code = {label: i for i, label in enumerate(labels)}
    out = []
    for entry, records in rows:
        preds = []
        for r in records:
            ids, texts = evidence(r)
            pred = r.get("pred_label")
            preds.append([item_of[str(r["id"])], code[str(r["label"])], None if pred is None else code[str(pred)], _probability(r),
                          None if r.get("fold") is None else int(r["fold"]), ids, texts])
        preds.sort(key=lambda p: p[0])
        seen = {*declared(entry), *(str(r["label"]) for r in records), *(str(r["pred_label"]) for r in records if r.get("pred_label") is not None)}
        out.append({**entry, "folds": sorted(entry["folds"]), "labels": [code[x] for x in labels if x in seen], "preds": preds})
    return out


def _seen_labels(rows: list[tuple[dict[str, Any], list[Record]]]) -> set[str]:
    return {str(r[k]) for _, records in rows for r in records for k in ("label", "pred_label") if r.get(k) is not None}


def healthfc_section(runs: Sequence[Run], claims: Iterable[Record], pool: dict[str, int],
                     unmatched: Counter[str]) -> dict[str, Any] | None:
    """HealthFC's part of the page (each shown text's index in ``pool``, first seen first); None without runs."""
    if not runs:
        return None
    langs = sorted({str(entry["lang"]) for entry, _ in runs})
    claims = list(claims)
    ids = [str(c["id"]) for c in claims]
    rows, used, item_of = _rows(runs, ("lang", "model", "system"), ids, unmatched, test_only=False)
    items, docs = [], {}
    for old in used:
        c = claims[old]
        article = str(c.get("article_id") or c["id"])
        if article not in docs:
            docs[article] = {"title": str(c.get("title") or article),
                             "sentences": {lang: [str(s) for s in c.get(f"sentences_{lang}") or []] for lang in langs}}
        items.append({"id": str(c["id"]), "label": str(c.get("label") or ""), "doc": article,
                      "text": {lang: str(c.get(f"claim_{lang}") or "") for lang in langs},
                      "gold": sorted(int(i) for i in c.get("evidence_ids") or [])})

    def evidence(r: Record) -> tuple[list[int] | None, list[int] | None]:
        ids = r.get("pred_evidence_ids")
        if ids is not None:
            return sorted(int(i) for i in ids), None
        shown = [str(t) for t in r.get("evidence") or []]
        return None, ([pool.setdefault(t, len(pool)) for t in shown] if shown else None)

    def declared(entry: Mapping[str, Any]) -> tuple[str, ...]:
        return system_spec(str(entry["system"])).labels if entry["system"] in SYSTEMS else ()

    labels = ordered_labels([*VERACITY_LABELS, *LOE_LABELS], {*_seen_labels(rows), *(x for entry, _ in rows for x in declared(entry))})
    return {"key": "healthfc", "title": "HealthFC", "unit": "claim", "kind": "article", "langs": langs, "labels": labels,
            "items": items, "docs": docs, "rows": _encode_rows(rows, labels, item_of, evidence, declared)}


def pairs_section(runs: Sequence[Run], pairs: Iterable[Any], unmatched: Counter[str], name: str, title: str,
                  classes: Sequence[str]) -> dict[str, Any] | None:
    """A pairs dataset's part of the page (a pair's evidence is its whole text); None without runs."""
    if not runs:
        return None
    pairs = list(pairs)
    rows, used, item_of = _rows(runs, ("model", "system"), [str(p.id) for p in pairs], unmatched, test_only=True)
    items, docs, doc_of = [], {}, {}
    for old in used:
        p = pairs[old]
        key = doc_of.setdefault((p.title, p.abstract), f"a{len(doc_of)}")
        docs.setdefault(key, {"title": p.title, "text": p.abstract})
        items.append({"id": str(p.id), "label": str(p.label or ""), "doc": key, "text": {"": p.claim}, "gold": None})
    labels = ordered_labels(list(classes), {*_seen_labels(rows), *classes})
    return {"key": name, "title": title, "unit": "pair", "kind": "abstract", "langs": [""], "labels": labels,
            "items": items, "docs": docs, "rows": _encode_rows(rows, labels, item_of, lambda r: (None, None), lambda entry: list(classes))}


def page_data(healthfc: Sequence[Run], claims: Iterable[Record], pairs: Sequence[tuple[PairsSection, Sequence[Run], Iterable[Any]]],
              scale: str) -> tuple[dict[str, Any], dict[str, int]]:
    """The page's data and the predictions left out, counted by reason."""
    pool: dict[str, int] = {}  # each shown text, by its index in ``texts``
    unmatched: Counter[str] = Counter()  # predictions left out, by reason
    sections = [healthfc_section(healthfc, claims, pool, unmatched),
                *(pairs_section(runs, test, unmatched, section.data.dataset, section.title, section.data.classes) for section, runs, test in pairs)]
    datasets = [d for d in sections if d is not None]
    return {"datasets": datasets, "texts": list(pool), "scale": scale}, dict(sorted(unmatched.items()))


def page(data: Mapping[str, Any], title: str) -> str:
    """The whole page: ``data`` embedded as JSON (keys sorted; every ``<``, ``>`` and ``&`` escaped, safe inside a
    ``<script>`` element), the page's own style and script, nothing loaded from elsewhere."""
    text = json.dumps(data, ensure_ascii=False, sort_keys=True, separators=(",", ":"), allow_nan=False)
    text = text.replace("&", "\\u0026").replace("<", "\\u003c").replace(">", "\\u003e")
    text = text.replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")
    return PAGE_TEMPLATE.replace("@TITLE@", re.sub(r"[<>&\"]", "", title)).replace("@DATA@", text)


def read_embedded(page_text: str) -> dict[str, Any]:
    """The data a page embeds (what :func:`page` wrote), for tests and tools."""
    m = re.search(r'<script id="medfc-errors-data" type="application/json">(.*?)</script>', page_text, re.S)
    if not m:
        raise ValueError("no embedded data in the page (<script id=\"medfc-errors-data\">)")
    return json.loads(m.group(1))


def _runs(entries: Sequence[Mapping[str, Any]], files: Sequence[str], what: str) -> list[Run]:
    if len(entries) != len(files):
        raise ValueError(f"error browser: {len(files)} {what} prediction files for {len(entries)} entries of its options")
    return [(entry, list(read_jsonl(path))) for entry, path in zip(entries, files)]


def write_error_browser(inputs: StepFiles, outputs: StepFiles, options: ErrorsOptions) -> dict[str, int]:
    """The ``error_browser`` rule's step: the page ``html`` from the prediction files (one per entry) and the
    datasets."""
    from medfc.experiments.pairs import load_pairs  # numpy: for the pairs' sections only

    hfc_runs = _runs(options.healthfc, input_paths(inputs, "healthfc"), "HealthFC")
    sections = []
    for section in options.pairs:
        runs = _runs(section.entries, input_paths(inputs, f"pairs_{section.data.dataset}"), section.title)
        test = inputs.get(f"pairs_{section.data.dataset}_test")
        sections.append((section, runs, load_pairs(test, data=section.data) if runs and test else []))
    dataset = inputs.get("dataset")
    data, left_out = page_data(hfc_runs, read_jsonl(dataset) if hfc_runs and dataset else [], sections, options.scale)
    counts = {f"{d['key']}_items": len(d["items"]) for d in data["datasets"]}
    counts["predictions"] = sum(len(row["preds"]) for d in data["datasets"] for row in d["rows"])
    left = {f"left out: {reason}": n for reason, n in left_out.items()}
    counts.update(left)
    text = page(data, "Error browser")
    atomic_write(outputs["html"], text)
    if left:
        log.warning("predictions left out: %s", left)
    log.info("%s: %s, %d bytes", outputs["html"], counts, len(text.encode("utf-8")))
    return counts
