"""Workflow steps of the MedSNIP stage: fetch → prepare → decompose → verify → score → table, and MedSNIP Table 3
(``structure``), Table 6 (``tau``) and Fig. 21 (``calls``); inputs, outputs and failed calls in docs/medsnip.md.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Mapping

import pandas as pd

from medfc.common.io import input_paths, read_json, read_jsonl, table_stem, write_json, write_jsonl, write_table
from medfc.common.jsoncache import UnitCache
from medfc.common.jsontypes import JSONValue
from medfc.common.options import Runtime
from medfc.common.registry import load
from medfc.common.report import SkipReport
from medfc.common.stepfiles import StepFiles
from medfc.llm.base import Ledger
from medfc.medsnip.analysis import structure_stats
from medfc.medsnip.answers import read_records, rewrite_statements
from medfc.medsnip.calls import make_llm, settle_failures
from medfc.medsnip.decompose import Decomposer
from medfc.medsnip.evaluate import evaluate, group_verdicts, tau_sweep
from medfc.medsnip.options import (LLM_MODES, DecomposeOptions, FetchOptions, PrepareOptions, ScoreOptions,
                                   StructureOptions, TableOptions, TauOptions, VerifyOptions, answer_source,
                                   verifier_kind)
from medfc.medsnip.records import Answer, Unit
from medfc.medsnip.table import (calls_figure, calls_points, paper_rows, structure_table, table_caption, table_latex,
                                 table_rows, tau_table)
from medfc.medsnip.verify import Verifier, check_outages, make_searchers
from medfc.retrieval.search import CachedSearch

log = logging.getLogger(__name__)


def _answers(inputs: StepFiles) -> dict[str, Answer]:
    return {a["answer_id"]: a for a in read_jsonl(inputs["answers"])}


def _write_common(outputs: StepFiles, info: dict[str, object], report: SkipReport) -> None:
    info["skips"] = {k: v for k, v in report.as_dict().items() if k != "skipped"}
    if outputs.get("info"):
        write_json(outputs["info"], info)
    if outputs.get("report"):
        report.write(outputs["report"])


def fetch(inputs: StepFiles, outputs: StepFiles, options: FetchOptions) -> dict[str, object]:
    """A dataset's file on the Hugging Face Hub at the pinned commit, checked against its pinned SHA-256 before it is
    read, its rows as JSONL."""
    from medfc.common.pinning import record_release, release_record, verify
    from medfc.common.sources import local_or_cached

    url = options.url
    path, cached = local_or_cached(url, options.cache_path)  # (path, from the cache)
    checked = verify(path, options.sha256, f"medsnip.datasets.{options.dataset}.hf.sha256", url)
    record = {**release_record(options.dataset, url, {options.file: checked}), "commit": options.revision}  # the Hub's commit
    record_release(record)
    rows = read_records(path)
    write_jsonl(outputs["rows"], rows)
    report: dict[str, object] = {"source": url, "path": str(path), "from_cache": cached, "rows": len(rows), "release": record}
    write_json(outputs["report"], report)
    log.info("%s: %d rows of %s (%s)", options.dataset, len(rows), url, "cached" if cached else "downloaded")
    return report


def prepare(inputs: StepFiles, outputs: StepFiles, options: PrepareOptions, runtime: Runtime) -> dict[str, object]:
    report = SkipReport(f"medsnip-prepare-{options.source}")
    answers = load(answer_source(options.source).loader)(inputs["source"], report, options)
    if options.limit and len(answers) > options.limit:
        report.exclude("beyond_limit", len(answers) - options.limit)
        answers = answers[: options.limit]
    info: dict[str, object] = {"source": options.source, "n_answers": len(answers), "labels": dict(Counter(str(a["label"]) for a in answers))}
    if options.rewrite_claims:  # a source that rewrites (PrepareOptions checks it)
        assert options.llm is not None
        ledger = Ledger()
        info["rewrite"] = rewrite_statements(answers, make_llm(options.llm, ledger, runtime.threads), options, report, ledger)
    write_jsonl(outputs["answers"], answers)
    _write_common(outputs, info, report)
    return info


def decompose(inputs: StepFiles, outputs: StepFiles, options: DecomposeOptions, runtime: Runtime) -> dict[str, object]:
    report = SkipReport(f"medsnip-decompose-{options.mode}")
    answers: list[Answer] = list(read_jsonl(inputs["answers"]))
    ledger = Ledger()
    client = make_llm(options.llm, ledger, runtime.threads) if options.mode in LLM_MODES and options.llm is not None else None
    dec = Decomposer(client, options, UnitCache(options.unit_cache_dir), report)
    units = dec.run(answers)
    n_texts = len([a for a in answers if a["text"].strip()])
    settle_failures(f"medsnip decompose {options.mode}", "answers", dec.failures, n_texts,
                    options.llm.max_failed_share if options.llm else 0.0, report, ledger, dec.cache, dec.n_malformed)
    write_jsonl(outputs["units"], units)
    info = dec.info(len(answers), units, ledger)
    report.count("units", len(units))
    _write_common(outputs, info, report)
    return info


def verify(inputs: StepFiles, outputs: StepFiles, options: VerifyOptions, runtime: Runtime,
           searchers: Mapping[str, CachedSearch] | None = None) -> dict[str, object]:
    """Verify every unit (``searchers`` replaces the backends built from the options, e.g. in tests)."""
    report = SkipReport(f"medsnip-verify-{options.name}-{options.verifier}")
    units: list[Unit] = list(read_jsonl(inputs["units"]))
    answers = _answers(inputs)
    ledger = Ledger()
    if verifier_kind(options.verifier).retrieves and searchers is None:
        assert options.retrieval is not None
        searchers = make_searchers(options.retrieval)
    ver = Verifier(make_llm(options.llm, ledger, runtime.threads), options, UnitCache(options.unit_cache_dir), report, searchers)
    verdicts = ver.run(units, answers)
    n_unparsed = sum(bool(v.get("unparsed") or v.get("malformed")) for v in verdicts)
    settle_failures(f"medsnip verify {options.name}", "units", ver.failures, len(units), options.llm.max_failed_share,
                    report, ledger, ver.cache, n_unparsed)
    check_outages(f"medsnip verify {options.name}", ver.outages, len(verdicts))
    write_jsonl(outputs["verdicts"], verdicts)
    info = ver.info(verdicts, len(units), n_unparsed, ledger)
    _write_common(outputs, info, report)
    return info


def score(inputs: StepFiles, outputs: StepFiles, options: ScoreOptions) -> dict[str, object]:
    """The scores of every verifier and mode (:func:`medfc.medsnip.evaluate.evaluate`)."""
    report = SkipReport("medsnip-score")
    answers = _answers(inputs)
    if inputs.get("verdicts") is None:
        raise KeyError("verdicts: the score step's required input (no verdicts, no scores)")
    groups = group_verdicts(r for path in input_paths(inputs, "verdicts") for r in read_jsonl(path))
    decompositions = [read_json(path) for path in input_paths(inputs, "decompositions")]
    verifications = [read_json(path) for path in input_paths(inputs, "verifications")]
    result = evaluate(answers, groups, decompositions, verifications, options, report)
    write_json(outputs["scores"], result)
    if outputs.get("report"):
        report.write(outputs["report"])
    return result


def table(inputs: StepFiles, outputs: StepFiles, options: TableOptions) -> list[dict[str, JSONValue]]:
    """The atoms-vs-snippets table of one dataset as CSV, Markdown and LaTeX (outputs on one stem)."""
    stem = table_stem(outputs)
    scores = read_json(inputs["scores"])
    rows = table_rows(scores)
    paper: list[dict[str, JSONValue]] = []
    title = ""
    if inputs.get("papers"):
        from medfc.common.papers import read_paper_numbers, reported_title

        numbers = read_paper_numbers(inputs["papers"])
        paper = paper_rows(numbers, options.dataset, sorted({str(r["mode"]) for r in rows}))
        title = reported_title((numbers.get("medsnip") or {}).get("cite", ""))
    caption = table_caption(scores, rows, options.title, paper)
    columns = list(rows[0]) if rows else list(paper[0]) if paper else []
    paper = [{k: p.get(k) for k in columns} for p in paper]  # our columns, those the paper does not state empty
    # object columns: a count stays an integer beside the paper's empty cells
    write_table(pd.DataFrame([*rows, *paper], columns=columns, dtype=object), stem, caption=caption,
                latex=table_latex(scores, rows, caption, paper, title))
    return rows + paper


def _formats(outputs: StepFiles) -> tuple[str, ...]:
    return ("csv", "md", "tex", "html") if "html" in outputs else ("csv", "md", "tex")


def structure(inputs: StepFiles, outputs: StepFiles, options: StructureOptions) -> list[dict[str, object]]:
    """MedSNIP Table 3: the structure of each dataset's answers and units, one row per dataset."""
    answers = input_paths(inputs, "answers")
    units = input_paths(inputs, "units")
    if len(answers) != len(options.datasets) or len(units) != len(options.units):
        raise ValueError(f"medsnip structure: {len(options.datasets)} datasets and {len(options.units)} unit files named, "
                         f"{len(answers)} and {len(units)} given")
    by_dataset: dict[str, dict[str, list[Unit]]] = {d: {} for d in options.datasets}
    for entry, path in zip(options.units, units):
        by_dataset[entry["dataset"]][entry["mode"]] = list(read_jsonl(path))
    stats = [(options.titles.get(d, d), structure_stats(list(read_jsonl(path)), by_dataset[d])) for d, path in zip(options.datasets, answers)]
    rows, caption, latex = structure_table(stats)
    write_table(pd.DataFrame(rows), table_stem(outputs), caption=caption, formats=_formats(outputs), latex=latex)
    return rows


def tau(inputs: StepFiles, outputs: StepFiles, options: TauOptions) -> list[dict[str, object]]:
    """MedSNIP Table 6 of one dataset: each arm's coverage and FF1 at each τ of ``options.taus``, from its verdicts."""
    answers = _answers(inputs)
    if inputs.get("verdicts") is None:
        raise KeyError("verdicts: the score step's required input (no verdicts, no scores)")
    groups = group_verdicts(r for path in input_paths(inputs, "verdicts") for r in read_jsonl(path))
    sweep = tau_sweep(answers, groups, options.score, options.taus)
    rows, caption, latex = tau_table(sweep, options.title, options.score.tau, options.score.level)
    write_table(pd.DataFrame(rows), table_stem(outputs), caption=caption, formats=_formats(outputs), latex=latex)
    return rows


def calls(inputs: StepFiles, outputs: StepFiles, options: TableOptions) -> list[dict[str, object]]:
    """MedSNIP Fig. 21 of one dataset: verifier calls against FF1, per mode, from its scores (and the points as CSV)."""
    points = calls_points(read_json(inputs["scores"]))
    pd.DataFrame(points).to_csv(outputs["csv"], index=False)
    calls_figure(points, options.title, outputs["png"])
    return points
