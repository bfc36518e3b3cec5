"""Workflow steps of the CliniFact stage: ``step(inputs, outputs, options)`` (see docs/CONTRIBUTING.md).

fetch_studies → build_claims → fetch_abstracts → build_pairs → stats; import_release is the
alternative source of pairs (the official CSVs).
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from medfc.clinifact import claims as claims_mod
from medfc.clinifact import ctgov, pairs, pubmed, release, stats
from medfc.common.io import read_jsonl, write_jsonl, write_table
from medfc.common.report import SkipReport

log = logging.getLogger(__name__)


def _cache(options: dict[str, Any], name: str) -> Path:
    return Path(options.get("cache_dir") or "results/clinifact/cache") / name


def fetch_studies(inputs: dict[str, Any], outputs: dict[str, Any], options: dict[str, Any]) -> int:
    """Studies from the bulk zip (``source: bulk_zip``, input ``zip`` or ``bulk_url``) or the search API
    (``source: api``) → ``studies`` (gzipped JSONL) + ``report``."""
    report = SkipReport("clinifact.fetch_studies")
    source = options.get("source", "bulk_zip")
    progress = bool(options.get("progress", True))
    ua: dict[str, Any] = {"user_agent": options["user_agent"]} if options.get("user_agent") else {}
    if source == "bulk_zip":
        zip_path = inputs.get("zip")
        if not zip_path:
            http = ctgov.ctgov_client(None, requests_per_minute=float(options.get("requests_per_minute", 50)), **ua)
            zip_path = http.download(options.get("bulk_url", ctgov.BULK_URL), _cache(options, "ctgov_bulk.zip"), progress=progress)
        n = ctgov.read_bulk_zip(zip_path, outputs["studies"], report=report, apply_filter=bool(options.get("apply_filter", True)), limit=options.get("limit"), progress=progress)
    elif source == "api":
        http = ctgov.ctgov_client(_cache(options, "ctgov_pages"), requests_per_minute=float(options.get("requests_per_minute", 50)), **ua)
        params = ctgov.search_params(
            page_size=int(options.get("page_size", ctgov.MAX_PAGE_SIZE)),
            status_filter=options.get("status_filter", ctgov.STATUS_FILTER),
            advanced_filter=options.get("advanced_filter", ctgov.ADVANCED_FILTER),
            fields=options.get("fields"),
        )
        state = outputs.get("state") or _cache(options, "ctgov_search_state.json")
        n = ctgov.fetch_search(outputs["studies"], http, params, state, url=options.get("api_url", ctgov.API_URL), max_pages=options.get("max_pages"), report=report, progress=progress)
    else:
        raise ValueError(f"clinifact fetch_studies: unknown source {source!r} (bulk_zip or api)")
    report.write(outputs["report"])
    log.info("fetch_studies: %d studies written to %s", n, outputs["studies"])
    return n


def make_embedder(options: dict[str, Any]) -> claims_mod.Embedder:
    return claims_mod.TransformersEmbedder(
        model=options.get("embedding_model") or None,
        batch_size=int(options.get("embedding_batch_size", 32)),
        max_length=int(options.get("embedding_max_length", 128)),
        device=options.get("device", "cpu"),
    )


def build_claims(inputs: dict[str, Any], outputs: dict[str, Any], options: dict[str, Any], embedder: claims_mod.Embedder | None = None) -> dict[str, int]:
    """``studies`` → ``claims`` (one per usable primary outcome) + ``labelled`` (claim × reference with label) + ``report``."""
    report = SkipReport("clinifact.build_claims")
    embedder = embedder or make_embedder(options)
    all_claims: list[dict[str, Any]] = []
    all_pairs: list[dict[str, Any]] = []
    for c, p in claims_mod.build_claims(
        read_jsonl(inputs["studies"]), embedder, report, alpha=float(options.get("alpha", claims_mod.ALPHA)), use_description=bool(options.get("use_description", True))
    ):
        all_claims.extend(c)
        all_pairs.extend(p)
    write_jsonl(outputs["claims"], all_claims)
    write_jsonl(outputs["labelled"], all_pairs)
    report.write(outputs["report"])
    return {"claims": len(all_claims), "labelled": len(all_pairs)}


def fetch_abstracts(inputs: dict[str, Any], outputs: dict[str, Any], options: dict[str, Any]) -> int:
    """PMIDs of ``labelled`` → ``abstracts`` (parsed PubMed records, gzipped JSONL) + ``report``."""
    report = SkipReport("clinifact.fetch_abstracts")
    pmids = sorted({str(r["PMID"]) for r in read_jsonl(inputs["labelled"])}, key=lambda p: (len(p), p))
    kwargs: dict[str, Any] = {}
    if options.get("user_agent"):
        kwargs["user_agent"] = options["user_agent"]
    fetcher = pubmed.PubmedFetcher(
        cache_dir=options.get("pubmed_cache_dir") or _cache(options, "pubmed"),
        extra_cache_dirs=options.get("extra_cache_dirs") or [],
        api_key=options.get("api_key"),
        tool=options.get("tool", "medfc"),
        email=options.get("email"),
        batch_size=int(options.get("batch_size", pubmed.GET_MAX_IDS)),
        offline=bool(options.get("offline", False)),
        requests_per_second=options.get("requests_per_second"),
        **kwargs,
    )
    n = write_jsonl(outputs["abstracts"], fetcher.records(pmids, report=report, progress=bool(options.get("progress", True))))
    report.count("records", n)
    report.write(outputs["report"])
    return n


def build_pairs(inputs: dict[str, Any], outputs: dict[str, Any], options: dict[str, Any]) -> dict[str, int]:
    """``labelled`` + ``abstracts`` → ``pairs`` (all kept pairs), ``train``/``validation``/``test`` (balanced, split),
    ``card`` (markdown) + ``report``."""
    report = SkipReport("clinifact.build_pairs")
    seed = int(options.get("seed", 1234))
    abstracts = {str(r["pmid"]): r for r in read_jsonl(inputs["abstracts"])}
    df = pairs.make_pairs(read_jsonl(inputs["labelled"]), abstracts, report, min_abstract_words=int(options.get("min_abstract_words", 15)))
    Path(outputs["pairs"]).parent.mkdir(parents=True, exist_ok=True)
    pairs.write_release_csv(df, outputs["pairs"])
    if options.get("downsample_nei", True):
        df = pairs.downsample_nei(df, seed=seed, report=report)
    splits = pairs.split_pairs(
        df, seed=seed, test_size=float(options.get("test_size", 0.2)), validation_size=float(options.get("validation_size", 0.2)), stratify=bool(options.get("stratify", False))
    )
    for name in pairs.SPLITS:
        pairs.write_release_csv(splits[name], outputs[name])
        report.count(f"split_{name}", len(splits[name]))
    Path(outputs["card"]).write_text(pairs.dataset_card(splits, report, notes=options.get("card_notes", "")), encoding="utf-8")
    report.write(outputs["report"])
    return {k: len(v) for k, v in splits.items()}


def import_release(inputs: dict[str, Any], outputs: dict[str, Any], options: dict[str, Any]) -> dict[str, int]:
    """The official CSVs (``source``: a directory or base URL) → ``train``/``validation``/``test`` + ``report``."""
    report = SkipReport("clinifact.import_release")
    source = inputs.get("release_dir") or options.get("source") or release.RELEASE_BASE_URL
    splits = release.import_release(str(source), report, cache_dir=_cache(options, "release"))
    for name in pairs.SPLITS:
        Path(outputs[name]).parent.mkdir(parents=True, exist_ok=True)
        pairs.write_release_csv(splits[name], outputs[name])
    report.write(outputs["report"])
    return {k: len(v) for k, v in splits.items()}


def _stem(path: str) -> Path:
    p = Path(path)
    return p.with_suffix("")


def stats_figures(inputs: dict[str, Any], outputs: dict[str, Any], options: dict[str, Any]) -> None:
    """Splits (+ optional ``studies``) → Table 6 (``table_labels``), Table 4 (``table_words``), Fig. 2
    (``table_classes``, ``fig_classes``), Fig. S1 (``table_years``, ``fig_years``). Tables are written as
    CSV + MD + TeX next to the CSV output, figures as PNG + PDF."""
    splits = {name: pairs.read_release_csv(inputs[name]) for name in pairs.SPLITS}
    allp = pairs.pd.concat(list(splits.values()), ignore_index=True)
    write_table(stats.label_table(splits), _stem(outputs["table_labels"]), caption="Table 6: labels per split (1 evidence, 0 inconclusive, 2 NEI).")
    write_table(stats.word_count_table(allp), _stem(outputs["table_words"]), caption="Table 4: words per claim, title and abstract.")
    if inputs.get("studies"):
        classes = stats.study_classes(read_jsonl(inputs["studies"]), excluded=options.get("excluded_branches", stats.EXCLUDED_BRANCHES))
    else:
        classes = {}
    ctab = stats.disease_class_table(allp, classes)
    note = stats.disease_class_note(ctab, len(allp))
    write_table(ctab, _stem(outputs["table_classes"]), caption=f"Fig. 2 data: claim-evidence pairs per disease class. {note}")
    stats.plot_disease_classes(ctab, outputs["fig_classes"], n_pairs=len(allp))
    ytab = stats.year_table(allp)
    write_table(ytab, _stem(outputs["table_years"]), caption="Fig. S1 data: publications per year.")
    stats.plot_years(ytab, outputs["fig_years"])
