"""The run's index: ``<results_dir>/index.md`` (and ``index.html``), what a results folder holds and which runs made
it (from ``provenance/`` and each ``info.json``)."""

from __future__ import annotations

import html
import json
import os
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from medfc.common.io import atomic_write, numbered_json_lines, read_jsonl
from medfc.common.pinning import RELEASES_FILE
from medfc.common.options import Options
from medfc.common.stepfiles import StepFiles

# what each folder of a run holds, most specific first (a file is described by the first entry its path starts with)
FOLDERS: tuple[tuple[str, str], ...] = (
    ("healthfc/crawl/", "the portal's pages as fetched (raw, so parsing can change without a recrawl) and `stats.json`, which accounts for every listed URL"),
    ("healthfc/parsed/", "articles and claims parsed from the pages; `report.json` counts every page or claim skipped, by reason"),
    ("healthfc/translated/", "each article's German sentences with their English translation, and the claims in English"),
    ("healthfc/release/", "the official HealthFC release, read as it is"),
    ("healthfc/aligned/", "the release's gold evidence sentences aligned to the rebuilt sentence ids"),
    ("healthfc/dataset/", "the rebuilt HealthFC dataset (one record per claim), its dataset card and the `README.md` that "
                          "`datasets.load_dataset` reads (the source view with the folds, the BigBio view, one config per fold)"),
    ("healthfc/folds/", "the 5 cross-validation folds (`folds.csv`)"),
    ("healthfc/evidence/", "open-domain evidence per claim (web, PubMed, Wikipedia search results)"),
    ("healthfc/stats/", "HealthFC Table 2 and Figures 1-3 with the data behind them"),
    ("healthfc/diff/", "every difference between the rebuilt dataset and the official release, with its reason"),
    ("clinifact/studies/", "ClinicalTrials.gov studies read, and the studies excluded with their reasons"),
    ("clinifact/claims/", "claims built from the studies' results"),
    ("clinifact/abstracts/", "the PubMed abstracts the claims cite"),
    ("clinifact/pairs/", "claim-abstract pairs, train/validation/test, in the release's format (CSV, Parquet, instructions), "
                         "the dataset card and the `README.md` that `datasets.load_dataset` reads (the source and BigBio views)"),
    ("clinifact/stats/", "CliniFact Tables 4 and 6 and Figures 2 and S1"),
    ("clinifact/diff/", "every difference between the rebuilt CliniFact and the official release, with its reason"),
    ("final/", "the rows of experiments.final trained on all the data their recipe allows, each kept with its model card "
               "(`README.md`, `medfc_model.json`) for `medfc predict --model-dir`"),
    ("experiments/inner_cv/", "the stacked ensembles' members trained again inside each training split (their out-of-fold predictions)"),
    ("experiments/healthfc/", "each HealthFC run, `<lang>/<model>/<system>/fold<k>/`: predictions, scores, `info.json`"),
    ("experiments/clinifact/", "each CliniFact run, `<model>/` or `<system>/<model>/`: predictions, scores, `info.json`"),
    ("experiments/", "each declared dataset's run, `<dataset>/<model>/`: predictions, scores, `info.json`"),
    ("datasets/", "each declared dataset (datasets.<name>), `<dataset>/`: its train/validation/test splits as imported (JSONL), "
                  "`report.json` with every row skipped by reason and the source files' SHA-256, and its dataset card"),
    ("tables/", "the papers' tables and the significance tests, our rows beside the papers' numbers, and the papers' example tables "
                "(HealthFC Tables 1 and 4, CliniFact Tables 5 and 7), each chosen by the rule its caption states (CSV, Markdown, LaTeX, HTML)"),
    ("figures/", "the figures of the experiments (PNG, PDF)"),
    ("medsnip/", "MedSNIP: units, verdicts, scores, its table, Table 6 (τ swept) and Fig. 21 (calls against FF1) per dataset; "
                 "Table 3 (the datasets' structure)"),
    ("checkpoints/", "kept models (experiments.keep_checkpoints), each with its card; not a workflow output"),
    ("main.tex", "one LaTeX document that inputs every table and includes every figure of the run: `pdflatex main.tex` here"),
    ("errors.html", "the error browser: every test claim or pair with each row's prediction, probability and evidence, "
                    "filters and a confusion matrix per row (one page, opens from the file system)"),
    ("provenance/", "`software.yml` (every package's version behind these results) and `runs.jsonl` (each run's command and resolved config)"),
    ("logs/", "every job's log, by stage; a failed job's cause is at the end of its log"),
    ("timings/", "every job's wall and CPU seconds and memory (Snakemake's benchmark files, by stage)"),
)

# files whose names say less than they hold
FILES: tuple[tuple[str, str], ...] = (
    ("info.json", "what an experiment ran: its options, data sizes, scores, items skipped, and its provenance (run, software, device)"),
    ("predictions.jsonl", "one line per test item: its id, gold and predicted label, class probabilities"),
    ("scores.json", "the run's scores (macro P/R/F1, accuracy; evidence scores where a system selects evidence)"),
    ("scores.skipped.json", "what the scoring left out and why (items without a prediction or a gold label), counted by reason; empty lists when nothing was"),
    ("report.json", "a dataset step's accounting: what was read, kept and skipped, counted by reason"),
    ("stats.json", "the crawl's accounting of every URL the sitemaps list (fetched, cached, skipped by reason)"),
    ("dataset_card.md", "the dataset card: fields, splits, sources and their licences (Hugging Face format)"),
    (RELEASES_FILE, "each release a job read: its source, the commit it names and every file's SHA-256 (pinned or recorded)"),
)

DEFAULT_CONFIG = "config/config.yaml"  # the workflow's own config, read by every run (workflow/Snakefile's configfile:)
ERROR_BROWSER = "errors.html"  # the run's error browser (rule error_browser), linked at the top of the index

# the papers' tables shown in full in the index (when the run made them), in this order, then MedSNIP's
HEADLINE_TABLES = ("tables/healthfc_table3.md", "tables/healthfc_table5.md", "tables/clinifact_table8.md")
DATASET_TABLE = re.compile(r"tables/[a-z][a-z0-9_]*_table\.md")  # a declared dataset's table (rule dataset_table)
MEDSNIP_TABLE = re.compile(r"medsnip/[^/]+/table\.md")
MEDSNIP_FURTHER = re.compile(r"medsnip/(?:[^/]+/)?table\d+_\w+\.md")  # MedSNIP Tables 3 and 6


@dataclass(frozen=True)
class IndexOptions(Options):
    """The run's folder, its provenance folder, and the index job's own log and timing files (left out)."""

    results: str
    provenance: str
    own: tuple[str, ...]


def folder_of(path: str) -> str:
    """The :data:`FOLDERS` entry that holds ``path``, else its first folder (a top-level file: ``./``)."""
    fallback = path.split("/", 1)[0] + "/" if "/" in path else "./"
    return next((p for p, _ in FOLDERS if path.startswith(p)), fallback)


def run_files(results: Path) -> list[str]:
    """Every file under ``results`` (hidden ones left out), relative and sorted."""
    out = []
    for root, dirs, files in os.walk(results):
        dirs[:] = [d for d in dirs if not d.startswith(".")]
        out += [Path(root, name).relative_to(results).as_posix() for name in files if not name.startswith(".")]
    return sorted(out)


def read_runs(path: Path) -> dict[str, dict[str, object]]:
    """run id → its record in ``runs.jsonl`` (a line that does not parse is left out)."""
    lines = path.read_text(encoding="utf-8").splitlines() if path.is_file() else []
    return {record["run"]: record for _, record in numbered_json_lines(lines)
            if isinstance(record, dict) and isinstance(record.get("run"), str)}


CONFIG_OPTIONS = ("--configfile", "--configfiles")


def configfile_args(command: Sequence[object]) -> list[str]:
    """The files of each ``--configfile`` of a Snakemake command line, in order (``--configfile=a`` takes ``a``
    alone; a bare ``--configfile`` each argument up to the next option)."""
    files: list[str] = []
    taking = False
    for arg in map(str, command):
        if arg.startswith("-"):
            name, eq, value = arg.partition("=")
            taking = name in CONFIG_OPTIONS and not eq
            if name in CONFIG_OPTIONS and eq:
                files.append(value)
        elif taking:
            files.append(arg)
    return files


def experiment_provenance(results: Path, files: Sequence[str]) -> tuple[Counter[str], Counter[str]]:
    """How many experiments each run made, and on which device (from every ``info.json``)."""
    runs: Counter[str] = Counter()
    devices: Counter[str] = Counter()
    for rel in files:
        if not rel.endswith("/info.json"):
            continue
        try:
            prov = json.loads((results / rel).read_text(encoding="utf-8")).get("provenance") or {}
        except (OSError, json.JSONDecodeError, AttributeError):
            continue
        if prov.get("run"):
            runs[str(prov["run"])] += 1
        device = prov.get("device") or {}
        if device:
            gpus = device.get("gpus") or []
            devices[", ".join(gpus) if gpus else f"CPU (torch {device.get('torch')})"] += 1
    return runs, devices


def software_line(path: Path) -> str:
    """The key versions of ``software.yml``."""
    import yaml

    try:
        record = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    except (OSError, yaml.YAMLError):
        return "(no software record)"
    packages = record.get("packages") or {}
    shown = [f"{name} {packages[name]}" for name in ("medfc", "snakemake", "torch", "transformers", "scikit-learn") if packages.get(name)]
    return f"Python {record.get('python')} on {record.get('platform')}; " + ", ".join(shown)


def markdown_table(header: Sequence[str], rows: Iterable[Sequence[str]]) -> list[str]:
    cells = lambda row: "| " + " | ".join(str(c).replace("|", "\\|").replace("\n", " ") for c in row) + " |"  # noqa: E731
    return [cells(header), "| " + " | ".join("---" for _ in header) + " |", *(cells(r) for r in rows)]


def releases_section(path: Path) -> list[str]:
    """The releases the run's jobs read (``provenance/releases.jsonl``, the latest record per dataset and
    source): their commit and each file's SHA-256, pinned or recorded."""
    latest = {(str(r.get("dataset")), str(r.get("source"))): r for r in (read_jsonl(path) if path.is_file() else [])}
    if not latest:
        return []
    rows = []
    for (dataset, source), record in sorted(latest.items()):
        files = record.get("files") if isinstance(record.get("files"), dict) else {}
        for name, f in files.items():
            if isinstance(f, dict):
                rows.append([dataset, f"`{source}`", str(record.get("commit") or "none"), f"`{name}`", f"`{f.get('sha256')}`",
                             "pinned" if f.get("pinned") else "recorded"])
    return ["", "## Releases read", "", *markdown_table(["dataset", "source", "commit", "file", "SHA-256", "hash"], rows),
            "", f"Each job's record: `provenance/{RELEASES_FILE}`."]


def index_markdown(results: Path, provenance: Path, files: Sequence[str], this_run: str | None) -> str:
    runs = read_runs(provenance / "runs.jsonl")
    made, devices = experiment_provenance(results, files)
    ids = sorted(r for r in {*made, this_run} if r and r in runs)
    out = [f"# Results in `{results.as_posix()}`", "",
           "What this folder holds and which runs made it. `snakemake --report report.html` puts every table and figure "
           "with its caption into one HTML file.", "", "## Made by", ""]
    rows = []
    for run_id in ids:
        record = runs[run_id]
        command = [str(a) for a in record.get("command") or []]
        experiments = made.get(run_id, 0)
        rows.append([run_id, record.get("started", ""), record.get("host", ""), "`" + " ".join(command) + "`",
                     ", ".join(f"`{c}`" for c in [DEFAULT_CONFIG, *configfile_args(command)]), str(experiments)])
    if rows:
        out += markdown_table(["run", "started (UTC)", "host", "command", "config files", "experiments made"], rows)
    else:
        out.append("No run is recorded in `provenance/runs.jsonl`.")
    out += ["", f"Software: {software_line(provenance / 'software.yml')} (`provenance/software.yml`).",
            "Device of the experiments: " + ("; ".join(f"{d} ({n})" for d, n in devices.most_common()) or "none recorded") + ".",
            "Each run's resolved config is its line in `provenance/runs.jsonl`."]
    if ERROR_BROWSER in files:
        out += ["", "## Error browser", "",
                f"[`{ERROR_BROWSER}`]({ERROR_BROWSER}): every test claim (HealthFC) and test pair (CliniFact) with each row's "
                "prediction, its probability and the evidence it selected, filters by row, gold and predicted class, and a "
                "confusion matrix per row. It opens from the file system."]
    out += releases_section(provenance / RELEASES_FILE)
    out += ["", "## Headline tables", ""]
    headline = [f for f in HEADLINE_TABLES if f in files] + [f for f in files if DATASET_TABLE.fullmatch(f) or MEDSNIP_TABLE.fullmatch(f)]
    for rel in headline:
        out += [f"### `{rel}`", "", (results / rel).read_text(encoding="utf-8").strip(), ""]
    others = [f for f in files if (f.startswith("tables/") and f.endswith(".md") or MEDSNIP_FURTHER.fullmatch(f)) and f not in headline]
    if others:
        out += ["Further tables: " + ", ".join(f"`{f}`" for f in others) + " (each also as CSV, LaTeX and HTML).", ""]
    if not headline and not others:
        out += ["This run made no table.", ""]
    if "main.tex" in files:
        out += ["Every table and figure in one LaTeX document: `main.tex` (`pdflatex main.tex` in this folder).", ""]
    figures = [f for f in files if f.endswith(".png")]
    out += ["## Figures", ""]
    out += markdown_table(["figure", "also as"], [[f"`{f}`", ", ".join(f"`{Path(g).name}`" for g in files
                                                                           if g != f and g.rsplit(".", 1)[0] == f.rsplit(".", 1)[0])]
                                                 for f in figures]) if figures else ["This run made no figure."]
    counts = Counter(folder_of(f) for f in files)
    out += ["", "## Folders", ""]
    folders, named = dict(FOLDERS), dict(FILES)
    out += markdown_table(["folder", "what it holds", "files"],
                          [[f"`{folder}`", folders.get(folder) or named.get(folder.rstrip("/"), "not described"),
                            str(n)] for folder, n in sorted(counts.items())])
    names = {Path(f).name for f in files}
    explained = [(name, text) for name, text in FILES if name in names]
    if explained:
        out += ["", "## Files", ""]
        out += [f"- `{name}`: {text}" for name, text in explained]
    return "\n".join(out) + "\n"


def markdown_to_html(markdown: str, title: str) -> str:
    """The index's Markdown as a small self-contained HTML page (headings, paragraphs, lists, tables, code, links)."""
    def inline(text: str) -> str:
        text = re.sub(r"`([^`]+)`", r"<code>\1</code>", html.escape(text, quote=False))
        return re.sub(r"\[([^\]]+)\]\(([^()\s\"]+)\)", r'<a href="\2">\1</a>', text)  # a link: [text](relative path)

    body: list[str] = []
    lines = markdown.splitlines()
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.startswith("#"):
            level = len(line) - len(line.lstrip("#"))
            body.append(f"<h{level}>{inline(line[level:].strip())}</h{level}>")
        elif line.startswith("|"):
            block = []
            while i < len(lines) and lines[i].startswith("|"):
                block.append(lines[i])
                i += 1
            rows = [[c.strip() for c in re.split(r"(?<!\\)\|", r.strip()[1:-1])] for r in block if not re.match(r"^\|[\s:|-]+\|$", r)]
            head, *rest = rows
            body.append("<table><thead><tr>" + "".join(f"<th>{inline(c)}</th>" for c in head) + "</tr></thead><tbody>"
                        + "".join("<tr>" + "".join(f"<td>{inline(c)}</td>" for c in r) + "</tr>" for r in rest) + "</tbody></table>")
            continue
        elif line.startswith("- "):
            items = []
            while i < len(lines) and lines[i].startswith("- "):
                items.append(f"<li>{inline(lines[i][2:])}</li>")
                i += 1
            body.append("<ul>" + "".join(items) + "</ul>")
            continue
        elif line.strip():
            body.append(f"<p>{inline(line)}</p>")
        i += 1
    style = ("body{font-family:sans-serif;max-width:72rem;margin:1rem auto}table{border-collapse:collapse;margin:.5rem 0}"
             "td,th{border:1px solid #ccc;padding:2px 6px;font-size:90%}code{font-size:90%}")
    return (f"<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>{html.escape(title)}</title><style>{style}</style></head>"
            f"<body>\n" + "\n".join(body) + "\n</body></html>\n")


def write_index(inputs: StepFiles, outputs: StepFiles, options: IndexOptions) -> dict[str, int]:
    """The ``index`` rule's step: every file under ``options.results`` → ``md`` and ``html``."""
    from medfc.common.provenance import RUN_ENV

    results = Path(options.results)
    own = {Path(p).resolve() for p in (*options.own, str(outputs["md"]), str(outputs["html"]))}
    files = [f for f in run_files(results) if (results / f).resolve() not in own]
    text = index_markdown(results, Path(options.provenance), files, os.environ.get(RUN_ENV))
    atomic_write(outputs["md"], text)
    atomic_write(outputs["html"], markdown_to_html(text, f"Results in {results.as_posix()}"))
    return {"files": len(files)}
