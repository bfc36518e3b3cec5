"""The loaders of MedSNIP's answer sources (``ANSWER_SOURCES`` of :mod:`medfc.medsnip.options`; what each source
gives, its formats and ids in docs/medsnip.md): MedSNIP-Bench, HealthFC (and its claims rewritten into statements)
and MedHallu."""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable, Mapping
from pathlib import Path

from medfc.common.io import read_jsonl
from medfc.common.jsoncache import UnitCache
from medfc.common.jsontypes import JSONObject, JSONValue
from medfc.common.report import SkipReport
from medfc.llm.base import Ledger, LLMClient
from medfc.llm.prompts import load_prompt
from medfc.medsnip.calls import cached_ask, gen_params, llm_identity, llm_prices, settle_failures
from medfc.medsnip.options import PrepareOptions
from medfc.medsnip.records import Answer, Atom, usage_total
from medfc.scoring.medsnip import FALSE, TRUE, healthfc_label

PATTERNS = ("A", "B", "C", "D", "E", "F")
BENCH_FIELDS = ("snippet_id", "entry_id", "query", "full_text", "subset", "snippet_text", "atoms", "pattern",
                "label_atomic", "label_human_general", "label_human_contextual")
SNIPPET_ID_RE = re.compile(r"^(.+)-S(\d+)$")
PARQUET_MAGIC = b"PAR1"
STATEMENT_SCHEMA: dict[str, JSONValue] = {"type": "object", "required": ["statement"], "properties": {
    "statement": {"type": "string", "minLength": 1, "pattern": r"\S"}}}


def _tf(value: bool) -> str:
    return TRUE if value else FALSE


def read_records(path: str | os.PathLike) -> list[JSONObject]:
    """A JSON array, JSONL or a Parquet file (told by its first bytes, whatever its name) of records."""
    with open(path, "rb") as fh:
        if fh.read(len(PARQUET_MAGIC)) == PARQUET_MAGIC:
            import pyarrow.parquet as pq

            return pq.read_table(path).to_pylist()
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
            ans = answers[eid] = {"answer_id": eid, "source": "bench", "query": str(rec["query"]), "text": str(rec["full_text"]),
                                  "subset": str(rec["subset"]), "split": rec.get("split"),
                                  "shared_context": dict(rec.get("shared_context") or {}), "atoms": [], "snippets": [], "label": None}
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
        ans["snippets"].append({"snippet_id": sid, "index": int(SNIPPET_ID_RE.match(sid).group(2)), "text": str(rec["snippet_text"]),
                                "atoms": [a["index"] for a in rec["atoms"]], "pattern": rec["pattern"],
                                "labels": {"atomic": _tf(rec["label_atomic"]), "general": _tf(rec["label_human_general"]),
                                           "contextual": _tf(rec["label_human_contextual"])},
                                "is_ambiguous": str(rec.get("is_ambiguous", "no")).strip().lower() == "yes", "notes": str(rec.get("notes") or "")})
        report.count("snippets")
    for ans in answers.values():
        ans["atoms"].sort(key=lambda a: a["index"])
        ans["snippets"].sort(key=lambda s: s["index"])
        ans["label"] = FALSE if any(s["labels"]["atomic"] == FALSE for s in ans["snippets"]) else TRUE
        report.count("answers")
    return list(answers.values())


def bench_source(path: str | os.PathLike, report: SkipReport, options: PrepareOptions) -> list[Answer]:
    """The answers of a MedSNIP-Bench file, in the splits ``options`` keeps."""
    return bench_answers(read_records(path), report, options.splits)


def healthfc_source(path: str | os.PathLike, report: SkipReport, options: PrepareOptions) -> list[Answer]:
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


def rewrite_statements(answers: list[Answer], client: LLMClient, opts: PrepareOptions, report: SkipReport,
                       ledger: Ledger) -> dict[str, object]:
    """Rewrite each claim into the statement it asserts, the answer's text (in place): one cached JSON call per claim;
    a malformed answer or failed call keeps the question. Returns the rewrite's info."""
    assert opts.llm is not None
    prompt = load_prompt("medsnip/healthfc_statement", opts.prompt_dir)
    repair = load_prompt("llm/json_repair", opts.prompt_dir)
    cache = UnitCache(opts.unit_cache_dir)
    items = [((a["claim"],), prompt.render(claim=a["claim"])) for a in answers]
    results = cached_ask(client, cache, llm_identity(opts.llm), "prepare:statement", [prompt], items,
                         gen_params(opts.llm, True), STATEMENT_SCHEMA, repair, key_env=opts.llm.api_key_env)
    failures = []
    for a, r in zip(answers, results):
        if r["failed"]:
            failures.append((a["answer_id"], r["error"] or "call failed"))
            report.skip(a["answer_id"], "statement_call_failed_question_kept", (r["error"] or "")[:300])
        elif r["ok"]:
            a["text"] = " ".join(r["value"]["statement"].split())
            report.count("claims_rewritten")
        else:
            report.skip(a["answer_id"], "statement_malformed_question_kept", (r["error"] or "")[:300])
    settle_failures("medsnip prepare (statement rewrite)", "claims", failures, len(answers), opts.llm.max_failed_share,
                    report, ledger, cache)
    usage = usage_total(r["usage"] for r in results) if results else {}  # no claim: no usage keys
    return {"usage": usage, "cache": dict(cache.stats), "calls": ledger.as_dict(llm_prices(opts.llm)),
            "failed": len(failures)}


#: Each MedHallu field the loader reads, as the published dataset (Hugging Face) and as MedSNIP's repository names it.
MEDHALLU_FIELDS = {"question": ("Question", "question"), "ground_truth": ("Ground Truth", "ground_truth"),
                   "hallucinated_answer": ("Hallucinated Answer", "hallucinated_answer"), "difficulty": ("Difficulty Level", "difficulty"),
                   "hallucination_category": ("Category of Hallucination", "hallucination_category")}
MEDHALLU_REQUIRED = ("question", "ground_truth", "hallucinated_answer")
#: The two answers of a row: (field, kind, label, id suffix).
MEDHALLU_ANSWERS = (("ground_truth", "ground_truth", TRUE, "gt"), ("hallucinated_answer", "hallucinated", FALSE, "h"))
MEDHALLU_SUBSET = "vignette"  # MedSNIP's subset for MedHallu: scientific questions answered from an abstract


class MissingField(ValueError):
    """A file none of whose rows has a field the loader needs."""


def medhallu_form(records: list[Mapping[str, JSONValue]], path: str | os.PathLike) -> int:
    """Which form a file's rows take: 0 the published one (``Question``, ...), 1 MedSNIP's lowercase one;
    :class:`MissingField` when no row has a field the loader needs."""
    records = [r for r in records if isinstance(r, Mapping)]
    if not records:
        raise MissingField(f"{path}: no MedHallu rows")
    form = 0 if any(MEDHALLU_FIELDS["question"][0] in r for r in records) else 1
    for field in MEDHALLU_REQUIRED:
        name = MEDHALLU_FIELDS[field][form]
        if not any(name in r for r in records):
            other = MEDHALLU_FIELDS[field][1 - form]
            raise MissingField(f"{path}: no MedHallu row has the field {name!r} (nor {other!r}): it names the "
                               f"{field.replace('_', ' ')}; a MedHallu file has {', '.join(repr(MEDHALLU_FIELDS[f][form]) for f in MEDHALLU_REQUIRED)}")
    return form


def _text(rec: Mapping[str, JSONValue], field: str, form: int) -> tuple[str | None, str | None]:
    """(the field's text, None) or (None, the reason it has none)."""
    value = rec.get(MEDHALLU_FIELDS[field][form])
    if value is None:
        return None, f"missing_{field}"
    if not isinstance(value, str):
        return None, f"not_text_{field}"
    if not value.strip():
        return None, f"empty_{field}"
    return value.strip(), None


def medhallu_answers(records: list[Mapping[str, JSONValue]], report: SkipReport, path: str | os.PathLike = "MedHallu") -> list[Answer]:
    """MedHallu rows → two answers each (see the module docstring), in row order, the ground truth first."""
    form = medhallu_form(records, path)
    out: list[Answer] = []
    seen_ids: set[str] = set()
    seen_rows: set[tuple[str, str | None, str | None]] = set()
    for n, rec in enumerate(records):
        if not isinstance(rec, Mapping):
            report.skip(str(n), "not_an_object", type(rec).__name__)
            continue
        rid = str(rec["id"]) if rec.get("id") is not None else str(n)
        question, problem = _text(rec, "question", form)
        if problem:
            report.skip(rid, problem)
            continue
        if rid in seen_ids:
            report.skip(rid, "duplicate_id", f"row {n}")
            continue
        texts = {field: _text(rec, field, form) for field, *_ in MEDHALLU_ANSWERS}
        key = (question, texts["ground_truth"][0], texts["hallucinated_answer"][0])
        if key in seen_rows:
            report.skip(rid, "duplicate_row", f"row {n} repeats an earlier row's question and answers")
            continue
        seen_ids.add(rid)
        seen_rows.add(key)
        report.count("rows")
        meta = {k: rec.get(MEDHALLU_FIELDS[k][form]) for k in ("difficulty", "hallucination_category")}
        for field, kind, label, suffix in MEDHALLU_ANSWERS:
            text, problem = texts[field]
            if problem:
                report.skip(f"{rid}-{suffix}", problem)
                continue
            answer: Answer = {"answer_id": f"{rid}-{suffix}", "source": "medhallu", "query": question, "text": text, "subset": MEDHALLU_SUBSET,
                              "label": label, "split": None, "shared_context": {}, "row_id": rid, "kind": kind, "difficulty": meta["difficulty"]}
            if label == FALSE:
                answer["hallucination_category"] = meta["hallucination_category"]
            out.append(answer)
            report.count("answers")
    return out


def medhallu_source(path: str | os.PathLike, report: SkipReport, options: PrepareOptions) -> list[Answer]:
    """The answers of a MedHallu file (a local one, or the rows ``medsnip_fetch`` wrote)."""
    return medhallu_answers(read_records(path), report, path)
