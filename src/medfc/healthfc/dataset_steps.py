"""Workflow steps of the HealthFC dataset stage: release → align → dataset → folds, stats, figures.

Each is ``step(inputs, outputs, options)`` (docs/CONTRIBUTING.md). Options come from
``config["healthfc"]`` (``release``, ``align``, ``dataset``, ``folds``); see docs/healthfc.md.

* :func:`release` — read (or download once into the cache) ``Datensatz.csv`` → ``rows`` (JSONL,
  one cleaned row per claim) and ``report`` (JSON: mojibake repairs, empty explanations, verdict
  issues, skipped rows).
* :func:`align` — parsed ``claims``/``articles`` (+ optional ``sentences``) and release ``rows`` →
  ``alignment`` (JSONL, one record per matched row) and ``report`` (JSON: alignment rate, every
  unaligned sentence, unmatched rows and claims).
* :func:`build_dataset` — → ``jsonl``, ``parquet``, ``card`` (markdown) and ``report``. Works in
  three modes, chosen by the inputs present: crawl+release, crawl only, release only.
* :func:`folds` — dataset → ``folds`` (CSV id,fold) and ``report`` (JSON).
* :func:`stats` — dataset → Table 2 (CSV/MD/TeX), Figs. 1–3 (PNG/PDF + the CSV behind each) and a
  JSON summary.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from medfc.common.io import read_json, read_jsonl, write_json, write_jsonl, write_table
from medfc.healthfc import figures
from medfc.healthfc import stats as hstats
from medfc.healthfc.align import align_release, alignment_from_records, alignment_records
from medfc.healthfc.dataset import Translate, build_dataset as build_records, sentences_by_article, write_dataset
from medfc.healthfc.sentences import DEFAULT_BASE
from medfc.healthfc.folds import assign_folds
from medfc.healthfc.release import ReleaseRow, fetch_release, read_release

log = logging.getLogger(__name__)

_ROW_FIELDS = {f.name for f in dataclasses.fields(ReleaseRow)}


def _one(value: Any) -> str | None:
    if value is None or value == [] or value == "":
        return None
    return value[0] if isinstance(value, list) else value


def load_rows(path: str) -> list[ReleaseRow]:
    return [ReleaseRow(**{k: v for k, v in rec.items() if k in _ROW_FIELDS}) for rec in read_jsonl(path)]


# --------------------------------------------------------------------------- release


def release(inputs: dict[str, Any], outputs: dict[str, Any], options: dict[str, Any]) -> None:
    """Release file (input ``release`` or ``options["source"]``, a path or URL) → ``rows`` + ``report``."""
    source = _one(inputs.get("release")) or options.get("source")
    if not source:
        raise ValueError("healthfc.release.source is not set")
    path, cached = fetch_release(source, options.get("cache_dir", "cache"))
    rows, report = read_release(path)
    write_jsonl(outputs["rows"], (r.as_dict() for r in rows))
    rep = report.as_dict()
    rep.update(source=str(source), path=str(path), from_cache=cached)
    write_json(outputs["report"], rep)


# --------------------------------------------------------------------------- align


def align(inputs: dict[str, Any], outputs: dict[str, Any], options: dict[str, Any]) -> None:
    """Parsed claims/articles (+ sentences) and release rows → ``alignment`` + ``report``."""
    claims = list(read_jsonl(inputs["claims"]))
    articles = list(read_jsonl(inputs["articles"]))
    sent_path = _one(inputs.get("sentences"))
    sentences, sections = sentences_by_article(articles, read_jsonl(sent_path) if sent_path else None,
                                               base=str(options.get("splitter", DEFAULT_BASE)))
    rows = load_rows(inputs["rows"])
    result = align_release(
        rows, claims, sentences,
        threshold=float(options.get("fuzzy_threshold", 90)),
        min_claim_score=float(options.get("min_claim_score", 50)),
        min_contained_chars=int(options.get("min_contained_chars", 25)),
        sections=sections,
    )
    write_jsonl(outputs["alignment"], alignment_records(result))
    report = result.report()
    report["fuzzy_threshold"] = float(options.get("fuzzy_threshold", 90))
    write_json(outputs["report"], report)
    log.info("aligned %s of %s evidence sentences (rate %s); %d release rows unmatched",
             report["evidence_sentences_aligned"], report["evidence_sentences"], report["alignment_rate"],
             report["release_rows_unmatched"])


# --------------------------------------------------------------------------- dataset


def make_translate(options: dict[str, Any], missing_ok: bool = False) -> Translate | None:
    """A ``translate(texts)`` over :func:`medfc.healthfc.translate.translate_with_memory`.

    ``options`` are the translation stage's (see ``translation_steps.translate``): ``model``,
    ``model_name`` (the memory key; defaults to ``model``), ``backend``, ``memory`` (working JSONL),
    ``memory_seeds`` (read-only memories), ``corrections`` (TSV), ``device``, ``batch_size`` … —
    the same memory and backend, so both steps share every translation. No ``model`` → None
    (English fields left empty, counted). With ``missing_ok`` (release mode, which must run
    offline) a model that cannot be loaded is not an error: corrections and memory hits are
    returned, the misses come back empty (counted as untranslated) and a warning is logged.
    """
    model = options.get("model")
    if not model:
        return None
    from medfc.healthfc.tm import Corrections, TranslationMemory, normalize_key
    from medfc.healthfc.translate import TranslationUnavailableError, translate_with_memory
    from medfc.healthfc.translation_steps import make_translator_factory

    model_name = str(options.get("model_name") or model)
    memory = TranslationMemory(options.get("memory"), seeds=[s for s in options.get("memory_seeds", []) if s])
    corrections = Corrections.load(options.get("corrections")) if options.get("corrections") else None
    factory = make_translator_factory({**options, "model_name": model_name})

    def translate(texts: Sequence[str]) -> list[str]:
        try:
            out, st = translate_with_memory(texts, factory, memory, corrections, model_name)
        except TranslationUnavailableError as exc:
            if not missing_ok:
                raise
            log.warning("translation unavailable; texts missing from the memory stay empty: %s", exc)
            keys = [normalize_key(t) for t in texts]
            return [(corrections.get(model_name, k) if corrections else None) or memory.get(model_name, k) or ""
                    for k in keys]
        log.info("translation: %s", st)
        return out

    return translate


def known_translations(sentences_path: str | None, claims_en_path: str | None) -> dict[str, str]:
    """German → English pairs already made by the translation stage (``translation_steps:translate``).

    ``sentences`` records carry ``sentences_de``/``sentences_en`` (1:1), ``claims_en`` records
    ``question_de/_en`` and ``explanation_de/_en``.
    """
    table: dict[str, str] = {}
    for rec in read_jsonl(sentences_path) if sentences_path else ():
        de, en = rec.get("sentences_de") or [], rec.get("sentences_en") or []
        if len(de) == len(en):
            table.update((d, e) for d, e in zip(de, en) if d and e)
    for rec in read_jsonl(claims_en_path) if claims_en_path else ():
        for key in ("question", "explanation"):
            if rec.get(f"{key}_de") and rec.get(f"{key}_en"):
                table[rec[f"{key}_de"]] = rec[f"{key}_en"]
    return table


def _with_known(table: dict[str, str], fallback: Translate | None) -> Translate | None:
    if not table:
        return fallback

    def translate(texts: Sequence[str]) -> list[str]:
        missing = list(dict.fromkeys(t for t in texts if t not in table))
        if missing and fallback is not None:
            table.update(zip(missing, fallback(missing)))
        return [table.get(t, "") for t in texts]

    return translate


def build_dataset(inputs: dict[str, Any], outputs: dict[str, Any], options: dict[str, Any]) -> None:
    """(claims, articles, sentences)? + (rows, alignment)? → ``jsonl``, ``parquet``, ``card``, ``report``.

    The mode follows the inputs: with ``claims`` and ``rows`` → crawl+release; ``claims`` only →
    crawl; ``rows`` only → release. The English side: translations already in the optional
    ``sentences`` / ``claims_en`` inputs (the translation stage's outputs) first, then
    ``options["translation"]`` (memory + model) for the rest. The German sentence lists are always
    :func:`medfc.healthfc.sentences.article_sentences` (the same function the translation stage and
    the alignment use, with the same splitter), so an id means the same sentence in every artifact.
    """
    claims_path, rows_path = _one(inputs.get("claims")), _one(inputs.get("rows"))
    claims = articles = sentences = sections = rows = alignment = None
    align_report = None
    if claims_path:
        claims = list(read_jsonl(claims_path))
        articles = list(read_jsonl(inputs["articles"]))
        sent_path = _one(inputs.get("sentences"))
        splitter = str((options.get("translation") or {}).get("splitter", DEFAULT_BASE))
        sentences, sections = sentences_by_article(articles, read_jsonl(sent_path) if sent_path else None, base=splitter)
    if rows_path:
        rows = load_rows(rows_path)
        if _one(inputs.get("alignment")):
            alignment = alignment_from_records(list(read_jsonl(_one(inputs["alignment"]))))
        if _one(inputs.get("align_report")):
            align_report = read_json(_one(inputs["align_report"]))
    if claims is None and rows is None:
        raise ValueError("build_dataset needs parsed claims, release rows, or both")
    mode = "crawl+release" if claims is not None and rows is not None else ("crawl" if claims is not None else "release")
    # release mode runs offline: text the release lacks stays empty (counted) when no model is at hand
    translate = make_translate(options.get("translation", {}) or {}, missing_ok=mode == "release")
    translate = _with_known(known_translations(_one(inputs.get("sentences")), _one(inputs.get("claims_en"))), translate)
    records, report = build_records(claims, articles, sentences, rows, alignment, translate, sections)
    write_dataset(records, outputs.get("jsonl"), outputs.get("parquet"), outputs.get("card"), align_report, mode)
    rep = report.as_dict()
    rep["mode"] = mode
    write_json(outputs["report"], rep)
    log.info("dataset (%s): %d records", mode, len(records))


# --------------------------------------------------------------------------- folds


def folds(inputs: dict[str, Any], outputs: dict[str, Any], options: dict[str, Any]) -> None:
    """Dataset → ``folds`` (CSV id,fold) and ``report`` (JSON)."""
    records = list(read_jsonl(inputs["dataset"]))
    df, report = assign_folds(records, options.get("scheme", "grouped"), int(options.get("n_splits", 5)),
                              int(options.get("seed", 42)))
    Path(outputs["folds"]).parent.mkdir(parents=True, exist_ok=True)
    df.to_csv(outputs["folds"], index=False)
    write_json(outputs["report"], report)


# --------------------------------------------------------------------------- stats and figures


def _stem(path: str) -> Path:
    return Path(path).with_suffix("")


def stats(inputs: dict[str, Any], outputs: dict[str, Any], options: dict[str, Any]) -> None:
    """Dataset → Table 2, Figs. 1–3 (PNG + PDF + data CSV) and ``summary`` (JSON).

    Outputs: ``table2`` (the .csv; .md and .tex are written next to it), ``fig1``/``fig2``/``fig3``
    (the .png; the .pdf next to it), ``fig1_data``/``fig2_data``/``fig3_data`` (CSV), ``summary``.
    """
    records = list(read_jsonl(inputs["dataset"]))
    t2 = hstats.table2(records)
    write_table(t2, _stem(outputs["table2"]), caption="HealthFC Table 2: text statistics (mean, std, min, max)")
    per_year, _ = hstats.claims_per_year(records)
    topics = hstats.top_topics(records, int(options.get("top_topics", 10)))
    levels = hstats.level_by_verdict(records)
    for key, df, plot in (
        ("fig1", per_year, figures.plot_claims_per_year),
        ("fig2", topics, figures.plot_top_topics),
        ("fig3", levels, figures.plot_level_by_verdict),
    ):
        Path(outputs[f"{key}_data"]).parent.mkdir(parents=True, exist_ok=True)
        df.to_csv(outputs[f"{key}_data"], index=False)
        plot(df, _stem(outputs[key]))
    write_json(outputs["summary"], hstats.summary(records))
