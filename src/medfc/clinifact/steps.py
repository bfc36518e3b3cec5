"""Workflow steps of the CliniFact stage (workflow/rules/clinifact.smk): fetch_studies → build_claims →
fetch_abstracts → build_pairs → stats; import_release reads the official CSVs instead; diff compares the rebuilt
pairs with a release."""

from __future__ import annotations

import logging
from datetime import date
from pathlib import Path

from medfc.clinifact import claims as claims_mod
from medfc.clinifact import export, pairs, release, stats
from medfc.clinifact import diff as cdiff
from medfc.clinifact.options import AbstractsOptions, ClaimsOptions, DiffOptions, PairsOptions, ReleaseOptions, StatsOptions, StudiesOptions
from medfc.clinifact.studies_sources import studies_source
from medfc.common.diff import render_markdown, write_diff
from medfc.common.embeddings import Embedder, TransformersEmbedder
from medfc.common.hf_card import front_matter, relative_files
from medfc.common.io import read_json, read_jsonl, write_json, write_jsonl, write_table
from medfc.common.options import NoOptions
from medfc.common.pinning import describe as describe_release
from medfc.common.pinning import record_release
from medfc.common.report import SkipReport
from medfc.common.stepfiles import StepFiles

log = logging.getLogger(__name__)


def fetch_studies(inputs: StepFiles, outputs: StepFiles, options: StudiesOptions) -> int:
    """Studies from the source ``options.source`` names → ``studies`` + ``report`` (+ ``excluded``)."""
    report = SkipReport("clinifact.fetch_studies")
    n = studies_source(options.source).fetch(inputs, outputs, options, report)
    report.write(outputs["report"])
    log.info("fetch_studies: %d studies written to %s", n, outputs["studies"])
    return n


def build_claims(inputs: StepFiles, outputs: StepFiles, options: ClaimsOptions, embedder: Embedder | None = None) -> dict[str, int]:
    """``studies`` → ``claims`` (one per usable primary outcome) + ``labelled`` (claim × reference with label) + ``report``."""
    report = SkipReport("clinifact.build_claims")
    embedder = embedder or TransformersEmbedder(model=options.embedding_model, batch_size=options.embedding_batch_size,
                                                max_length=options.embedding_max_length, device=options.device)
    all_claims: list[claims_mod.Claim] = []
    all_pairs: list[claims_mod.LabelledPair] = []
    for c, p in claims_mod.build_claims(read_jsonl(inputs["studies"]), embedder, report, alpha=options.alpha,
                                        significance=options.significance, use_description=options.use_description):
        all_claims.extend(c)
        all_pairs.extend(p)
    write_jsonl(outputs["claims"], all_claims)
    write_jsonl(outputs["labelled"], all_pairs)
    report.write(outputs["report"])
    return {"claims": len(all_claims), "labelled": len(all_pairs)}


def fetch_abstracts(inputs: StepFiles, outputs: StepFiles, options: AbstractsOptions) -> int:
    """PMIDs of ``labelled`` → ``abstracts`` (parsed PubMed records, gzipped JSONL) + ``report``."""
    from medfc.retrieval import pubmed  # the PubMed client and its HTTP stack: this step's alone

    report = SkipReport("clinifact.fetch_abstracts")
    pmids = sorted({str(r["PMID"]) for r in read_jsonl(inputs["labelled"])}, key=lambda p: (len(p), p))
    fetcher = pubmed.PubmedFetcher(cache_dir=options.cache_dir, extra_cache_dirs=options.extra_cache_dirs, tool=options.tool,
                                   email=options.email, **pubmed.eutils_urls(options.eutils_url), batch_size=options.batch_size,
                                   offline=options.offline, requests_per_second=options.requests_per_second, user_agent=options.user_agent)
    n = write_jsonl(outputs["abstracts"], fetcher.records(pmids, report=report, progress=options.progress))
    report.count("records", n)
    report.write(outputs["report"])
    return n


def build_pairs(inputs: StepFiles, outputs: StepFiles, options: PairsOptions) -> dict[str, int]:
    """``labelled`` + ``abstracts`` → ``pairs`` (all kept), the balanced splits (CSV, ``<split>_parquet``,
    ``instruction_<split>``), ``card`` and ``report``."""
    report = SkipReport("clinifact.build_pairs")
    seed = options.seed
    abstracts = {str(r["pmid"]): r for r in read_jsonl(inputs["abstracts"])}
    df = pairs.make_pairs(read_jsonl(inputs["labelled"]), abstracts, report, min_abstract_words=options.min_abstract_words)
    Path(outputs["pairs"]).parent.mkdir(parents=True, exist_ok=True)
    pairs.write_release_csv(df, outputs["pairs"])
    if options.downsample_nei:
        df = pairs.downsample_nei(df, seed=seed, report=report)
    splits = pairs.split_pairs(df, seed=seed, test_size=options.test_size, validation_size=options.validation_size, stratify=options.stratify)
    for name in pairs.SPLITS:
        pairs.write_release_csv(splits[name], outputs[name])
        export.write_parquet(splits[name], outputs[f"{name}_parquet"])
        export.write_instruction_jsonl(splits[name], outputs[f"instruction_{name}"], with_response=name in export.SPLITS_WITH_RESPONSE)
        report.count(f"split_{name}", len(splits[name]))

    def files(key: str) -> dict[str, str]:
        return relative_files(outputs["card"], {name: outputs[key.format(name)] for name in pairs.SPLITS})

    meta = front_matter(license="mit", languages=["en"], task_categories=["text-classification"], task_ids=["fact-checking"],
                        tags=["medical", "clinical-trials", "fact-checking"], n_rows=sum(len(v) for v in splits.values()), data_files=files("{}"),
                        extra_configs={"parquet": files("{}_parquet"), "instruction": files("instruction_{}")}, pretty_name="CliniFact (rebuilt)")
    card = pairs.dataset_card(splits, report, notes=options.card_notes) + export.CARD_CONFIGS
    Path(outputs["card"]).write_text(meta + card, encoding="utf-8")
    report.write(outputs["report"])
    return {k: len(v) for k, v in splits.items()}


def import_release(inputs: StepFiles, outputs: StepFiles, options: ReleaseOptions) -> dict[str, int]:
    """The official CSVs (``source``: a directory or base URL) → ``train``/``validation``/``test`` + ``report``."""
    report = SkipReport("clinifact.import_release")
    record = release.verify_release(options.source, options.sha256, "clinifact.release.sha256", Path(options.cache_dir) / "release")
    record_release(record)
    splits = release.import_release(options.source, report, cache_dir=Path(options.cache_dir) / "release")
    for name in pairs.SPLITS:
        Path(outputs[name]).parent.mkdir(parents=True, exist_ok=True)
        pairs.write_release_csv(splits[name], outputs[name])
    write_json(outputs["report"], {**report.as_dict(), "release": record})
    return {k: len(v) for k, v in splits.items()}


def _stem(path: str) -> Path:
    return Path(path).with_suffix("")

def clinifact_stats(inputs: StepFiles, outputs: StepFiles, options: StatsOptions) -> None:
    """Splits (+ optional ``studies``, + ``papers``) → Tables 6 and 4, Figs. 2 and S1 with their data, ``report``.
    The splits are read strictly (:func:`medfc.clinifact.release.read_split`): a bad row is left out and reported."""
    from medfc.common.plots import WIDTHS
    from medfc.common.papers import read_paper_numbers

    report = SkipReport("clinifact.stats")
    splits = release.read_splits(lambda name: inputs[name], report)
    allp = pairs.pd.concat(list(splits.values()), ignore_index=True)
    numbers = read_paper_numbers(inputs["papers"])["clinifact"]
    released = numbers["release_stats"]  # the released data's Tables 4 and 6
    title = f"Ours: this run's pairs ({len(allp)})"
    labels, words = pairs.label_table(splits), stats.word_count_table(allp)
    write_table(labels, _stem(outputs["table_labels"]), caption="Table 6: labels per split (1 evidence, 0 inconclusive, 2 NEI).",
                latex=stats.table6_latex(labels, released["table6"], title))
    write_table(words, _stem(outputs["table_words"]), caption="Table 4: words per claim, title and abstract.",
                latex=stats.table4_latex(words, released["table4"], title))
    classes = stats.study_classes(read_jsonl(inputs["studies"]), excluded=options.excluded_branches) if inputs.get("studies") else {}
    ctab = stats.disease_class_table(allp, classes)
    paper = numbers["fig2"]
    note = stats.disease_class_note(ctab, len(allp), paper) + f" Drawn {WIDTHS[stats.FIGURE_WIDTHS['fig2']]} in wide (text width)."
    write_table(ctab, _stem(outputs["table_classes"]), caption=f"Fig. 2 data: claim-evidence pairs per disease class. {note}")
    stats.plot_disease_classes(ctab, outputs["fig_classes"], n_pairs=len(allp), paper=paper)
    ytab = stats.year_table(allp)
    years_caption = f"Fig. S1 data: publications per year. Drawn {WIDTHS[stats.FIGURE_WIDTHS['figS1']]} in wide (column width)."
    write_table(ytab, _stem(outputs["table_years"]), caption=years_caption)
    stats.plot_years(ytab, outputs["fig_years"])
    if outputs.get("report"):
        report.write(outputs["report"])


def diff(inputs: StepFiles, outputs: StepFiles, options: DiffOptions) -> dict[str, int]:
    """Rebuilt ``pairs`` (+ our splits) against the release, explained with the rebuild's own records →
    ``markdown``, ``rows``, ``counts`` and ``report``."""
    report = SkipReport("clinifact.diff")
    record = release.verify_release(options.release, options.release_sha256, "clinifact.diff.release_sha256", Path(options.cache_dir) / "release")
    record_release({**record, "dataset": "clinifact (diff)"})
    released = cdiff.release_rows(release.import_release(options.release, report, cache_dir=Path(options.cache_dir) / "release"))
    rebuilt = pairs.read_release_csv(inputs["pairs"])
    kept = {int(i) for name in pairs.SPLITS for i in pairs.read_release_csv(inputs[name])["index"]}
    wanted = {str(n) for n in released["nctId"]} | {str(n) for n in rebuilt["nctId"]}
    trace = cdiff.Trace.from_reports(cdiff.study_facts(read_jsonl(inputs["studies"]), wanted), read_jsonl(inputs["excluded"]),
                                     read_json(inputs["claims_report"]), read_json(inputs["abstracts_report"]), read_json(inputs["pairs_report"]),
                                     wanted)
    release_date = date.fromisoformat(options.release_date)
    rows = cdiff.diff_pairs(rebuilt, released, trace, release_date, kept)
    studies_report = read_json(inputs["studies_report"])
    preamble = cdiff.preamble(options.release, release_date, rebuilt, released, kept)
    preamble.append(f"The release read: {describe_release(record)}.")
    if studies_report.get("excluded_by_reason"):
        preamble.append("Studies the filter left out: " + ", ".join(f"{r} {n}" for r, n in studies_report["excluded_by_reason"].items()) + ".")
    markdown = render_markdown("CliniFact: rebuilt pairs against the release", preamble, rows, cdiff.CATEGORIES, cdiff.LISTED, options.max_listed)
    counts = write_diff(rows, cdiff.CATEGORIES, markdown, outputs)
    for category in cdiff.CATEGORIES:
        report.count(category, counts.get(category, 0))
    write_json(outputs["report"], {**report.as_dict(), "release": record})
    log.info("clinifact diff: %s", dict(report.counts))
    return counts


def export_views(inputs: StepFiles, outputs: StepFiles, options: NoOptions) -> dict[str, int]:
    """The splits' typed Parquet and the pairs' ``card`` → ``readme`` and BigBio's view of each split."""
    from medfc.clinifact import views

    return views.export({s: inputs[f"{s}_parquet"] for s in views.SPLITS}, inputs["card"], outputs["readme"],
                        {s: outputs[f"bigbio_{s}"] for s in views.SPLITS})
