"""Workflow steps of the HealthFC stage (workflow/rules/healthfc.smk): crawl → parse → translate → release → align →
dataset → folds, stats; diff compares the crawl with the release (docs/healthfc.md, docs/translation.md)."""

from __future__ import annotations

import logging
from dataclasses import asdict
from datetime import date
from functools import partial
from pathlib import Path
from urllib.parse import urlparse

import pandas as pd

from medfc.common.diff import render_markdown, write_diff
from medfc.common.io import input_paths, read_json, read_jsonl, write_json, write_jsonl, write_table
from medfc.common.options import NoOptions, Runtime
from medfc.common.pinning import describe as describe_release
from medfc.common.pinning import record_release, release_record, verify
from medfc.common.report import SkipReport
from medfc.common.stepfiles import StepFiles
from medfc.healthfc import diff as hdiff
from medfc.healthfc import stats as hstats
from medfc.healthfc.align import align_release, alignment_from_records, alignment_records
from medfc.healthfc.options import (AlignOptions, CrawlOptions, DatasetOptions, DiffOptions, FoldsOptions,
                                    ReleaseOptions, RetrieveOptions, StatsOptions, TranslateOptions)
from medfc.healthfc.dataset import build_dataset, known_translations, sentences_by_article, write_dataset
from medfc.healthfc.folds import assign_folds
from medfc.healthfc.parse import PageSkipped, parse_page
from medfc.healthfc.records import ArticleRecord, ClaimRecord, schema_errors
from medfc.healthfc.release import ReleaseRow, fetch_release, read_release
from medfc.healthfc.tm import Corrections, TranslationMemory
from medfc.healthfc.translation_backends import translation_backend
from medfc.healthfc.translate import translate_articles
from medfc.retrieval.search_sources import Connection, build_client, options_class

log = logging.getLogger(__name__)


def crawl(inputs: StepFiles, outputs: StepFiles, options: CrawlOptions, runtime: Runtime) -> None:
    """Crawl the portal (or the demo mirror) → ``pages`` (gzip JSONL) and ``stats`` (JSON)."""
    from medfc.healthfc.crawl import crawl_site  # Scrapy: imported by this step only

    crawl_site(options, outputs["pages"], outputs["stats"], log_file=runtime.log_file)


def parse_pages(pages_path: str) -> tuple[list[ArticleRecord], list[ClaimRecord], SkipReport]:
    """Parse every raw page; return article records, claim records and the skip report."""
    report = SkipReport("healthfc.parse")
    articles: list[ArticleRecord] = []
    claims: list[ClaimRecord] = []
    seen_ids: dict[str, str] = {}
    for page in read_jsonl(pages_path):
        url = page.get("url", "<no url>")
        report.count("pages")
        try:
            article = parse_page(url, page.get("html", ""), int(page.get("status", 200)))
        except PageSkipped as exc:
            report.skip(url, exc.reason, exc.detail)
            continue
        except Exception as exc:  # a parser bug on one page must not stop the run
            log.exception("unexpected error parsing %s", url)
            report.skip(url, "parser_error", f"{type(exc).__name__}: {exc}")
            continue
        record = article.record()
        if errors := schema_errors("article", record):
            report.skip(url, "article_schema", "; ".join(errors))
            continue
        if article.article_id in seen_ids:
            report.skip(url, "duplicate_article_id", f"same slug as {seen_ids[article.article_id]}")
            continue
        seen_ids[article.article_id] = url
        good_claims = []
        for claim in article.claims:
            crec: ClaimRecord = asdict(claim)
            if cerr := schema_errors("claim", crec):
                report.skip(claim.claim_id, "claim_schema", "; ".join(cerr))
            else:
                good_claims.append(crec)
        for problem in article.problems:
            report.skip(url, "claim_skipped", problem)
        if not good_claims:
            report.skip(url, "no_valid_claim", "every claim failed validation")
            continue
        record["n_claims"] = len(good_claims)
        articles.append(record)
        claims.extend(good_claims)
        report.count(f"layout/{article.layout}")
    report.count("articles", len(articles))
    report.count("claims", len(claims))
    report.counts.update(f"label/{c['label']}" for c in claims)
    return articles, claims, report


def parse(inputs: StepFiles, outputs: StepFiles, options: NoOptions) -> None:
    """Raw pages → ``articles`` and ``claims`` (JSONL + Parquet) and ``report`` (JSON)."""
    articles, claims, report = parse_pages(inputs["pages"])
    articles.sort(key=lambda a: a["url"])
    claims.sort(key=lambda c: (c["url"], c["claim_index"]))
    write_jsonl(outputs["articles"], articles)
    write_jsonl(outputs["claims"], claims)
    pd.DataFrame(claims).to_parquet(outputs["claims_table"], index=False)
    pd.DataFrame(articles).to_parquet(outputs["articles_table"], index=False)
    report.write(outputs["report"])
    log.info("parsed %d articles with %d claims; skipped %d pages/claims: %s",
             len(articles), len(claims), len(report.skipped), report.reasons())


def translate(inputs: StepFiles, outputs: StepFiles, options: TranslateOptions) -> None:
    """Parsed ``articles`` + ``claims`` (+ ``memory_seeds`` and ``corrections``) → ``sentences``, ``claims_en`` and
    ``report``: each text through corrections, then the memory, then the model (loaded only for a miss)."""
    articles = sorted(read_jsonl(inputs["articles"]), key=lambda a: a.get("url", ""))
    claims = sorted(read_jsonl(inputs["claims"]), key=lambda c: (c.get("url", ""), c.get("claim_index", 0)))
    seeds = input_paths(inputs, "memory_seeds")
    corr_path = next(iter(input_paths(inputs, "corrections")), None)
    memory = TranslationMemory(options.memory, seeds=seeds)
    corrections = Corrections.load(corr_path) if corr_path else None
    factory = partial(translation_backend(options.backend).build, options)  # called only when the memory misses a text
    sentence_records, claim_records, report = translate_articles(articles, claims, factory, memory, corrections,
                                                                 options.memory_key, base=options.splitter)
    report.update(backend=options.backend, model=options.model, memory=options.memory, memory_seeds=seeds,
                  corrections=corr_path, n_corrections_available=len(corrections) if corrections is not None else 0)
    write_jsonl(outputs["sentences"], sentence_records)
    write_jsonl(outputs["claims_en"], claim_records)
    write_json(outputs["report"], report)
    log.info("translated %d articles / %d claims: %d unique texts, %d corrections, %d memory hits, %d by the model",
             report["n_articles"], report["n_claims"], report["n_unique"], report["n_corrections"],
             report["n_memory_hits"], report["n_model"])


def load_rows(path: str) -> list[ReleaseRow]:
    return [ReleaseRow(**rec) for rec in read_jsonl(path)]  # the release step's rows


def release(inputs: StepFiles, outputs: StepFiles, options: ReleaseOptions) -> None:
    """Release file (input ``release``, or ``options.source`` when it is a URL) → ``rows`` + ``report``."""
    source = inputs.get("release") or options.source  # set: the plan requires it
    path, cached = fetch_release(source, options.cache_dir)
    checked = verify(path, options.sha256, "healthfc.release.sha256", str(source))  # before the file is read
    record = release_record("healthfc", str(source), {Path(urlparse(str(source)).path).name: checked})
    record_release(record)
    rows, report = read_release(path)
    write_jsonl(outputs["rows"], (asdict(r) for r in rows))
    write_json(outputs["report"], {**report.as_dict(), "source": str(source), "path": str(path), "from_cache": cached,
                                   "release": record})


def align(inputs: StepFiles, outputs: StepFiles, options: AlignOptions) -> None:
    """Parsed claims/articles and release rows → ``alignment`` + ``report`` (rate, every unaligned sentence)."""
    claims = list(read_jsonl(inputs["claims"]))
    articles = list(read_jsonl(inputs["articles"]))
    sentences, sections = sentences_by_article(articles, base=options.splitter)
    result = align_release(load_rows(inputs["rows"]), claims, sentences, threshold=options.fuzzy_threshold,
                           min_claim_score=options.min_claim_score, min_contained_chars=options.min_contained_chars,
                           sections=sections)
    write_jsonl(outputs["alignment"], alignment_records(result))
    report = {**result.report(), "fuzzy_threshold": options.fuzzy_threshold}
    write_json(outputs["report"], report)
    log.info("aligned %s of %s evidence sentences (rate %s); %d release rows unmatched",
             report["evidence_sentences_aligned"], report["evidence_sentences"], report["alignment_rate"],
             report["release_rows_unmatched"])


def dataset(inputs: StepFiles, outputs: StepFiles, options: DatasetOptions) -> None:
    """→ ``jsonl``, ``parquet``, ``card`` and ``report`` in the configured mode (``crawl+release``, ``crawl`` or
    ``release``). This step never translates: a text with no English stays empty and is counted."""
    claims = articles = sentences = sections = rows = alignment = align_report = None
    translations: dict[str, str] = {}
    if options.mode != "release":
        claims = list(read_jsonl(inputs["claims"]))
        articles = list(read_jsonl(inputs["articles"]))
        sentence_records = list(read_jsonl(inputs["sentences"]))
        sentences, sections = sentences_by_article(articles, sentence_records, base=options.splitter)
        translations = known_translations(sentence_records, read_jsonl(inputs["claims_en"]))
    if options.mode != "crawl":
        rows = load_rows(inputs["rows"])
    if options.mode == "crawl+release":
        alignment = alignment_from_records(list(read_jsonl(inputs["alignment"])))
        align_report = read_json(inputs["align_report"])
    records, report = build_dataset(claims, articles, sentences, rows, alignment, translations, sections)
    release = read_json(inputs["release_report"]).get("release") if inputs.get("release_report") else None
    write_dataset(records, outputs["jsonl"], outputs["parquet"], outputs["card"], align_report, options.mode,
                  describe_release(release) if release else None)
    write_json(outputs["report"], {**report.as_dict(), "mode": options.mode})
    log.info("dataset (%s): %d records", options.mode, len(records))


def folds(inputs: StepFiles, outputs: StepFiles, options: FoldsOptions) -> None:
    """Dataset → ``folds`` (CSV id,fold) and ``report`` (JSON)."""
    df, report = assign_folds(list(read_jsonl(inputs["dataset"])), options.scheme, options.n_splits, options.seed)
    Path(outputs["folds"]).parent.mkdir(parents=True, exist_ok=True)
    df.to_csv(outputs["folds"], index=False)
    write_json(outputs["report"], report)


def stats(inputs: StepFiles, outputs: StepFiles, options: StatsOptions) -> None:
    """Dataset (+ the ``papers``' numbers) → Table 2 (.csv, .md, .tex), Figs. 1–3 (.png, .pdf, and ``fig*_data``
    CSVs with the paper's numbers beside ours) and ``summary`` (JSON)."""
    from medfc.common.plots import WIDTHS
    from medfc.healthfc import figures  # matplotlib: imported by this step only
    from medfc.common.papers import read_paper_numbers

    records = list(read_jsonl(inputs["dataset"]))
    paper = read_paper_numbers(inputs["papers"])["healthfc"]["figures"]  # the paper's numbers for its Figs. 1–3
    table2 = hstats.table2(records)
    write_table(table2, Path(outputs["table2"]).with_suffix(""), caption="HealthFC Table 2: text statistics (mean, std, min, max)",
                latex=hstats.table2_latex(table2, len(records)))
    sizes: dict[str, object] = {}
    for key, df, plot in (
        ("fig1", hstats.fig1_table(records, paper)[0], figures.plot_claims_per_year),
        ("fig2", hstats.fig2_table(records, options.top_topics, paper), figures.plot_top_topics),
        ("fig3", hstats.fig3_table(records, paper), figures.plot_level_by_verdict),
    ):
        Path(outputs[f"{key}_data"]).parent.mkdir(parents=True, exist_ok=True)
        df.to_csv(outputs[f"{key}_data"], index=False)
        plot(df, Path(outputs[key]).with_suffix(""))
        sizes[key] = {"width": figures.FIGURE_WIDTHS[key], "width_in": WIDTHS[figures.FIGURE_WIDTHS[key]]}
    write_json(outputs["summary"], {**hstats.summary(records), "figures": sizes})


def diff(inputs: StepFiles, outputs: StepFiles, options: DiffOptions) -> dict[str, int]:
    """Parsed ``claims``/``articles`` (+ the parser's ``parse_report``) against the release ``rows`` (+ its
    ``release_report``) → ``markdown``, ``rows`` (CSV, one finding per row) and ``counts`` (CSV)."""
    rows = load_rows(inputs["rows"])
    claims = list(read_jsonl(inputs["claims"]))
    release_date = date.fromisoformat(options.release_date)
    findings = hdiff.diff_crawl(rows, claims, read_jsonl(inputs["articles"]), read_json(inputs["parse_report"]),
                                release_date, options.min_claim_score)
    source = read_json(inputs["release_report"]).get("source", "")
    markdown = render_markdown("HealthFC: the crawl against the release", hdiff.preamble(source, release_date, rows, claims, findings),
                               findings, hdiff.CATEGORIES, hdiff.LISTED, options.max_listed)
    counts = write_diff(findings, hdiff.CATEGORIES, markdown, outputs)
    log.info("healthfc diff: %s", counts)
    return counts


def retrieve(inputs: StepFiles, outputs: StepFiles, options: RetrieveOptions) -> dict[str, object]:
    """Dataset → ``evidence`` (one row per claim × rank) and ``report``: each claim searched in ``options.source``
    (cached per query), or the rows of the source's prepared ``file``; fails as :mod:`medfc.healthfc.evidence` says."""
    from medfc.healthfc import evidence as ev

    report = SkipReport(f"healthfc-retrieve-{options.source}")
    src = options_class(options.source).from_mapping(options.source_options, where=f"healthfc.retrieval.{options.source}")
    queries = ev.claim_queries(read_jsonl(inputs["dataset"]), options.lang, report)
    report.count("claims", len(queries))
    if src.file:
        rows = ev.from_file(queries, src.file, options.source, options.top_k, report)
        mode = f"file {src.file}"
    else:
        backend = build_client(options.source, src, Connection(max_retries=options.max_retries))
        searcher = ev.DatedSearchCache(backend, options.cache_dir)
        rows = ev.retrieve(queries, searcher, options.source, options.top_k, report, progress=options.progress)
        mode = "search"
    ev.check_coverage(report, options.source, options.max_share_without_evidence)
    write_jsonl(outputs["evidence"], rows)
    info: dict[str, object] = {"source": options.source, "mode": mode, "top_k": options.top_k, "lang": options.lang, **report.as_dict()}
    write_json(outputs["report"], info)
    log.info("evidence from %s (%s): %d rows for %d of %d claims", options.source, mode, len(rows),
             report.counts.get("claims_with_results", 0), len(queries))
    return info


def export(inputs: StepFiles, outputs: StepFiles, options: NoOptions) -> dict[str, int]:
    """The dataset (``parquet``), its ``folds`` and ``card`` → each fold's claims in the ``source`` and ``bigbio`` views
    (fold 0 first) and the card ``readme`` with the configs ``datasets.load_dataset`` reads."""
    from medfc.healthfc import views

    for k, (source, bigbio) in enumerate(zip(outputs["source"], outputs["bigbio"], strict=True)):
        counts = views.export_fold(inputs["parquet"], inputs["folds"], k, source, bigbio)
        log.info("fold %d: %d claims (%d without gold evidence)", k, counts["claims"], counts["without_gold_evidence"])
    return views.write_card(inputs["card"], {"source": outputs["source"], "bigbio_te": outputs["bigbio"]}, outputs["readme"])
