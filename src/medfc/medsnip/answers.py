"""What MedSNIP decomposes and verifies: *answers*, read from MedSNIP-Bench or from HealthFC.

An answer record (one JSON line)::

    {"answer_id": "5", "source": "bench" | "healthfc", "query": "...", "text": "...",
     "subset": "consumer" | "vignette", "label": "TRUE" | "FALSE" | null, "split": "dev" | null,
     "shared_context": {...},
     "atoms": [{"index": 1, "text": "...", "label": "TRUE" | "FALSE"}, ...],          # bench only
     "snippets": [{"snippet_id": "5-S1", "index": 1, "text": "...", "atoms": [1, 2], "pattern": "A",
                   "labels": {"atomic": "FALSE", "general": "FALSE", "contextual": "FALSE"},
                   "is_ambiguous": false, "notes": "..."}, ...]}                       # bench only

MedSNIP-Bench (the published format, docs/medsnip.md): a JSON array (or JSONL) with one record per
*snippet*: ``snippet_id`` (``<entry_id>-S<n>``), ``entry_id``, ``query``, ``full_text``, ``subset``,
``batch_id``, ``shared_context``, ``snippet_text``, ``atoms`` [{``index``, ``text``, ``label``}],
``pattern`` (A–F), ``is_ambiguous`` ("yes"/"no"), ``notes``, ``label_atomic``,
``label_human_general``, ``label_human_contextual`` (booleans) and ``split``. :func:`load_bench`
groups them into one answer per entry; a record missing a field, with a pattern outside A–F, a
non-boolean label, a repeated ``snippet_id`` or an entry text that disagrees with its entry's first
record is skipped with its reason. An answer's own ``label`` is FALSE when any of its snippets'
``label_atomic`` is false (OR-FALSE), for answer-level scoring.

HealthFC (the project's dataset JSONL): only SUPPORTED (→ TRUE) and REFUTED (→ FALSE) claims; NOT
ENOUGH INFORMATION claims are excluded and counted. The text decomposed is the English claim,
rewritten into the statement it asserts when the step asks for it; the explanation is never used
(it states the verdict).
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable, Mapping
from pathlib import Path

from medfc.common.io import read_jsonl
from medfc.common.jsontypes import JSONObject, JSONValue
from medfc.common.report import SkipReport
from medfc.medsnip.options import PrepareOptions
from medfc.medsnip.records import Answer, Atom
from medfc.scoring.medsnip import FALSE, TRUE, healthfc_label

PATTERNS = ("A", "B", "C", "D", "E", "F")
BENCH_FIELDS = ("snippet_id", "entry_id", "query", "full_text", "subset", "snippet_text", "atoms", "pattern",
                "label_atomic", "label_human_general", "label_human_contextual")
SNIPPET_ID_RE = re.compile(r"^(.+)-S(\d+)$")


def _tf(value: bool) -> str:
    return TRUE if value else FALSE


def read_records(path: str | os.PathLike) -> list[JSONObject]:
    """A JSON array, or JSONL, of records."""
    text = Path(path).read_text(encoding="utf-8")
    if text.lstrip().startswith("["):
        data = json.loads(text)
        if not isinstance(data, list):
            raise ValueError(f"{path}: not a JSON array")
        return data
    return list(read_jsonl(path))


def _bench_problem(rec: Mapping[str, JSONValue]) -> tuple[str, str] | None:
    for f in BENCH_FIELDS:
        if f not in rec or rec[f] is None:
            return "missing_field", f
    if not SNIPPET_ID_RE.match(str(rec["snippet_id"])):
        return "bad_snippet_id", str(rec["snippet_id"])
    if rec["pattern"] not in PATTERNS:
        return "bad_pattern", str(rec["pattern"])
    for f in ("label_atomic", "label_human_general", "label_human_contextual"):
        if not isinstance(rec[f], bool):
            return "bad_label", f"{f}={rec[f]!r}"
    atoms = rec["atoms"]
    if not isinstance(atoms, list) or not atoms:
        return "no_atoms", ""
    for a in atoms:
        if not isinstance(a, Mapping) or not isinstance(a.get("index"), int) or not str(a.get("text") or "").strip() \
                or not isinstance(a.get("label"), bool):
            return "bad_atom", json.dumps(a, ensure_ascii=False)[:200]
    if not str(rec["snippet_text"]).strip() or not str(rec["full_text"]).strip():
        return "empty_text", ""
    return None


def bench_answers(records: Iterable[Mapping[str, JSONValue]], report: SkipReport, splits: Iterable[str] = ()) -> list[Answer]:
    """MedSNIP-Bench snippet records → one answer per entry (see module docstring)."""
    keep_splits = set(splits)
    answers: dict[str, Answer] = {}
    seen: set[str] = set()
    for rec in records:
        sid = str(rec.get("snippet_id", "?"))
        problem = _bench_problem(rec)
        if problem:
            report.skip(sid, *problem)
            continue
        if sid in seen:
            report.skip(sid, "duplicate_snippet_id")
            continue
        if keep_splits and str(rec.get("split")) not in keep_splits:
            report.exclude(f"split_{rec.get('split')}")
            continue
        eid = str(rec["entry_id"])
        ans = answers.get(eid)
        if ans is None:
            ans = answers[eid] = {
                "answer_id": eid, "source": "bench", "query": str(rec["query"]), "text": str(rec["full_text"]),
                "subset": str(rec["subset"]), "split": rec.get("split"), "shared_context": dict(rec.get("shared_context") or {}),
                "atoms": [], "snippets": [], "label": None,
            }
        elif ans["text"] != rec["full_text"] or ans["query"] != rec["query"]:
            report.skip(sid, "entry_mismatch", f"entry {eid}")
            continue
        seen.add(sid)
        known = {a["index"]: a for a in ans["atoms"]}
        for a in rec["atoms"]:
            if a["index"] in known:
                report.count("atom_references_repeated")
                if known[a["index"]]["text"] != a["text"]:
                    report.count("atom_index_text_conflicts")
                continue
            atom: Atom = {"index": a["index"], "text": a["text"], "label": _tf(a["label"])}
            ans["atoms"].append(atom)
            known[a["index"]] = atom
        ans["snippets"].append({
            "snippet_id": sid, "index": int(SNIPPET_ID_RE.match(sid).group(2)), "text": str(rec["snippet_text"]),
            "atoms": [a["index"] for a in rec["atoms"]], "pattern": rec["pattern"],
            "labels": {"atomic": _tf(rec["label_atomic"]), "general": _tf(rec["label_human_general"]),
                       "contextual": _tf(rec["label_human_contextual"])},
            "is_ambiguous": str(rec.get("is_ambiguous", "no")).strip().lower() == "yes",
            "notes": str(rec.get("notes") or ""),
        })
        report.count("snippets")
    out = []
    for ans in answers.values():
        ans["atoms"].sort(key=lambda a: a["index"])
        ans["snippets"].sort(key=lambda s: s["index"])
        ans["label"] = FALSE if any(s["labels"]["atomic"] == FALSE for s in ans["snippets"]) else TRUE
        out.append(ans)
        report.count("answers")
    return out


def load_bench(path: str | os.PathLike, report: SkipReport, splits: Iterable[str] = ()) -> list[Answer]:
    return bench_answers(read_records(path), report, splits)


def bench_source(path: str | os.PathLike, report: SkipReport, options: PrepareOptions) -> list[Answer]:
    """The loader of the answer source ``bench`` (:mod:`medfc.medsnip.sources`): the splits ``options`` keeps."""
    return load_bench(path, report, options.splits)


def healthfc_source(path: str | os.PathLike, report: SkipReport, options: PrepareOptions) -> list[Answer]:
    """The loader of the answer source ``healthfc`` (:mod:`medfc.medsnip.sources`): the dataset has no splits to keep."""
    return healthfc_answers(path, report)


def healthfc_answers(path: str | os.PathLike, report: SkipReport) -> list[Answer]:
    """The supported and refuted HealthFC claims as answers whose text is the English claim."""
    out: list[Answer] = []
    for rec in read_jsonl(path):
        cid = str(rec.get("id") or "")
        claim = str(rec.get("claim_en") or "").strip()
        if not cid:
            report.skip("?", "missing_id")
            continue
        try:
            label = healthfc_label(rec.get("label"))
        except ValueError:
            report.skip(cid, "unknown_label", str(rec.get("label")))
            continue
        if label is None:
            report.exclude("not_enough_information")
            continue
        if not claim:
            report.skip(cid, "missing_claim_en")
            continue
        out.append({"answer_id": cid, "source": "healthfc", "query": claim, "text": claim, "claim": claim,
                    "subset": "consumer", "label": label, "split": None, "shared_context": {}})
        report.count("answers")
    return out
