"""What a run needs from outside its config, checked when the run is planned (also on ``--dry-run``), before any
job starts: contact e-mails, API keys in the environment, local files the config names, the NLTK data of the
METEOR scorer. Only what the planned rules use is required (a mirror crawl needs no contact, a server on this
machine no key); each missing one is one line naming the key and the fix (:func:`missing_prerequisites`).
:func:`cuda_problem`: a job set to ``device: cuda`` where torch sees no GPU (asked on a local run's start)."""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlparse

from medfc.clinifact.studies_sources import studies_source
from medfc.common.sources import is_url
from medfc.experiments.clinifact.systems import clinifact_system
from medfc.experiments.healthfc.systems import EVIDENCE_SYSTEMS, evidence_source
from medfc.healthfc.translation_backends import translation_backend
from medfc.medsnip.options import verifier_kind
from medfc.common.llm_backends import runs_locally
from medfc.common.pinning import ReleaseChanged, verify
from medfc.plan.layout import release_split_files
from medfc.retrieval.search_sources import REGISTRY as SEARCH_SOURCES
from medfc.retrieval.search_sources import SearchSource, search_source
from medfc.scoring import nltk_data

if TYPE_CHECKING:
    from medfc.plan import Plan

# what a contact e-mail must not be on a live run: the placeholders the configs ship and the domains reserved for
# examples (RFC 2606)
PLACEHOLDER_DOMAINS = ("example.org", "example.com", "example.net", "example", "invalid", "test", "localhost")
PLACEHOLDER_WORDS = re.compile(r"change[-_ ]?me|your[-_.]?(e-?mail|name|address|institution)", re.I)
EMAIL = re.compile(r"^[^@\s]+@[^@\s]+\.[^@\s]+$")


def is_loopback(url: str) -> bool:
    """Whether a URL points at this machine (a local server needs no key and no contact)."""
    host = (urlparse(url).hostname or "").lower()
    return host == "localhost" or host.startswith("127.") or host in ("::1", "0.0.0.0")


def email_problem(value: str | None) -> str | None:
    """Why ``value`` is not a contact e-mail a live service may be sent (None when it is one)."""
    value = (value or "").strip()
    if not value:
        return "is empty"
    if not EMAIL.match(value):
        return f"{value!r} is not an e-mail address"
    domain = value.rsplit("@", 1)[1].lower()
    if PLACEHOLDER_WORDS.search(value) or any(domain == d or domain.endswith("." + d) for d in PLACEHOLDER_DOMAINS):
        return f"{value!r} is a placeholder"
    return None


def _contact(key: str, value: str | None, env: str | None, why: str) -> str | None:
    """A contact e-mail from the config key, or else the environment variable ``env``."""
    problem = email_problem(value or (os.environ.get(env, "") if env else ""))
    if problem is None:
        return None
    where = f"{key} (or {env})" if env else key
    return (f"prerequisite: {where} {problem}: {why}; set it to your e-mail address"
            + (f" (e.g. export {env}=you@your-institution.org)" if env else ""))


def _key(key: str, env: str, why: str, no_key: str = "") -> str | None:
    """An API key in the environment variable the config names under ``key``."""
    if not env or os.environ.get(env, "").strip():
        return None
    return f"prerequisite: {env} (named by {key}) is not set: {why}; export {env}=<your key>{no_key}"


def _exists(key: str, path: str | None, what: str = "file") -> str | None:
    if not path or is_url(path) or (Path(path).is_dir() if what == "directory" else Path(path).is_file()):
        return None
    return f"prerequisite: {key} {path!r}: no such {what} (relative paths are read from {os.getcwd()}); fix the path or fetch the {what}"


SKIP_ENV = "MEDFC_SKIP_PREREQUISITES"  # =1: plan without checking them (a run whose fetching rules are all done)
# commands that run no job: they need no key, no contact and no file from outside the config
NO_JOB_FLAGS = ("--unlock", "--report", "--list", "-l", "--list-rules", "--list-target-rules", "--lt", "--summary", "-S",
                "--detailed-summary", "-D", "--cleanup-metadata", "--cm", "--lint", "--dag", "--rulegraph", "--d3dag",
                "--filegraph", "--list-changes", "--lc", "--list-code-changes", "--list-input-changes", "--list-params-changes",
                "--delete-all-output", "--delete-temp-output", "--archive", "--containerize", "--generate-unit-tests")


def checked_here(argv: list[str]) -> bool:
    """Whether this Snakemake command checks the prerequisites: every command that may run jobs (a dry run too),
    unless :data:`SKIP_ENV` is set; not the commands of :data:`NO_JOB_FLAGS`."""
    if os.environ.get(SKIP_ENV, "") not in ("", "0"):
        return False
    return not any(arg.split("=", 1)[0] in NO_JOB_FLAGS for arg in argv[1:])


# ------------------------------------------------------------------------------------------ the checks

def _healthfc_data(plan: Plan) -> Iterator[str | None]:
    if not plan.healthfc_data_planned():
        return
    hfc = plan.config["healthfc"]
    sources = plan.datasets.healthfc_dataset_sources()
    if "parse" in sources:
        crawl = hfc["crawl"]
        if crawl["mirror_dir"] is None and not is_loopback(crawl["mirror_url"] or crawl["base_url"]):
            yield _contact("healthfc.crawl.contact", crawl["contact"], None,
                           f"the crawl of {crawl['base_url']} sends it in its user agent so the site's operators can reach you")
        tr = hfc["translation"]
        for i, seed in enumerate(tr["memory_seeds"]):
            yield _exists(f"healthfc.translation.memory_seeds[{i}]", seed)
        yield _exists("healthfc.translation.corrections", tr["corrections"])
        key = translation_backend(tr["backend"]).key
        if key is not None:
            yield _key("healthfc.translation.backend", key.env, key.why)
    if "release" in sources:
        release = hfc["release"]
        yield _exists("healthfc.release.source", release["source"])
        if release["source"]:
            from medfc.healthfc.release import release_cache_path

            local = release_cache_path(release["source"], plan.datasets.cache) if is_url(release["source"]) else Path(release["source"])
            yield _changed("healthfc.release.sha256", local, release["sha256"], release["source"])


def _clinifact_data(plan: Plan) -> Iterator[str | None]:
    cf = plan.config["clinifact"]
    if not plan.clinifact_data_planned():
        return
    studies = cf["studies"]
    if studies_source(studies["source"]).reads_zip and (cf["pairs_source"] == "rebuild" or plan.stage_enabled("clinifact")):
        yield _exists("clinifact.studies.bulk_zip", studies["bulk_zip"])  # the studies behind the pairs or the statistics
    if cf["pairs_source"] == "release":
        yield from _release(plan, "clinifact.release.source", cf["release"]["source"], "clinifact.release.sha256",
                            cf["release"]["sha256"])
        return
    pubmed = cf["pubmed"]
    if not pubmed["offline"] and not is_loopback(pubmed["eutils_url"]):
        yield _contact("clinifact.pubmed.email", pubmed["email"], "NCBI_EMAIL",
                       "PubMed's E-utilities ask for a contact e-mail with every request (clinifact_fetch_abstracts)")
    for i, d in enumerate(pubmed["extra_cache_dirs"]):
        yield _exists(f"clinifact.pubmed.extra_cache_dirs[{i}]", d, "directory")
    if plan.stage_enabled("clinifact") and plan.datasets.clinifact_diff_enabled():
        yield from _release(plan, "clinifact.diff.release", cf["diff"]["release"], "clinifact.diff.release_sha256",
                            cf["diff"]["release_sha256"])


def _changed(key: str, path: Path, expected: str | None, file: str) -> str | None:
    """A release file already here (a local copy, or a download in the cache) whose SHA-256 is not the one ``key``
    pins, as one line; a file not here yet is checked by the job that downloads it."""
    try:
        if expected and path.is_file():
            verify(path, expected, key, file)
    except ReleaseChanged as exc:
        return str(exc)
    return None


def _release(plan: Plan, key: str, source: str, pins_key: str, pins: dict[str, str | None]) -> Iterator[str | None]:
    """A CliniFact release's split files (``key``: the config key of their ``source``): each local one that is missing,
    then each one already here whose SHA-256 is not the one ``pins_key`` pins (:func:`_changed`)."""
    from medfc.clinifact.options import cached_path, file_location

    for split, path in release_split_files(source).items():
        yield _exists(f"{key} ({split} split)", path)
    for split, expected in pins.items():
        location = file_location(source, split)
        local = cached_path(source, split, f"{plan.datasets.cache}/clinifact/release") if is_url(source) else Path(location)
        yield _changed(f"{pins_key}.{split}", local, expected, location)


def _datasets(plan: Plan) -> Iterator[str | None]:
    """Each ``datasets.<name>`` entry's local data and every pinned file already here against its SHA-256."""
    from medfc.datasets.sources import source_files

    for name in plan.datasets.dataset_names():
        key = f"datasets.{name}.source"
        source = plan.config["datasets"][name]["source"]
        if source["path"]:
            root = Path(source["path"])
            if not root.exists():
                yield (f"prerequisite: {key}.path {source['path']!r}: no such file or folder (relative paths are read from "
                       f"{os.getcwd()}); fix the path or fetch the data")
                continue
            missing = [_exists(f"{key}.files.{k}", str(root / f)) for k, f in source["files"].items()]
            yield from missing
            if any(missing):
                continue
        options = plan.job_options("dataset_import", {"dataset": name})
        try:
            files = source_files(options)
        except ValueError as exc:
            yield f"prerequisite: {exc}"
            continue
        for f in files:
            yield _changed(f"{key}.sha256.{f.key}", f.local, source["sha256"].get(f.key), f.location)


def _medsnip_data(plan: Plan) -> Iterator[str | None]:
    """A dataset's Hub file already downloaded whose SHA-256 is not the one its section pins."""
    if not plan.stage_enabled("medsnip"):
        return
    for name in plan.medsnip.medsnip_datasets():
        if plan.medsnip.medsnip_fetched(name):
            options = plan.job_options("medsnip_fetch", {"dataset": name})
            yield _changed(f"medsnip.datasets.{name}.hf.sha256", options.cache_path, options.sha256, options.url)


def _source_needs(where: str, spec: SearchSource, own: dict[str, Any], why: str, no_key: str = "") -> Iterator[str | None]:
    """What a live search of ``spec`` needs from its config section ``own`` (at ``where``): the API key its option
    ``key_env`` names; a contact e-mail unless its ``local_url`` is on this machine."""
    if spec.key_env:
        yield _key(f"{where}.{spec.key_env}", own[spec.key_env], why, no_key)
    if spec.contact and not (spec.local_url and is_loopback(own[spec.local_url])):
        yield _contact(f"{where}.{spec.contact}", own[spec.contact], spec.contact_env, why)


def _retrieval(plan: Plan) -> Iterator[str | None]:
    """The evidence sources of the planned HealthFC systems (retrieved_<source>, open_domain_<source>)."""
    if not plan.stage_enabled("experiments"):
        return
    sources = dict.fromkeys(s for s in map(evidence_source, plan.healthfc.healthfc_systems_run()) if s)
    retrieval = plan.config["healthfc"]["retrieval"]
    for source in sources:
        own = retrieval[source]
        if own.get("file"):
            yield _exists(f"healthfc.retrieval.{source}.file", own["file"])
            continue
        why = f"the {source} evidence of the HealthFC systems *_{source} is searched live (healthfc_retrieve)"
        yield from _source_needs(f"healthfc.retrieval.{source}", search_source(source), own, why,
                                 f", or set healthfc.retrieval.{source}.file to a prepared evidence file")


NLTK_ENV = "NLTK_DATA"
NLTK_SYSTEM_DIRS = ("/usr/share/nltk_data", "/usr/local/share/nltk_data", "/usr/lib/nltk_data",
                    "/usr/local/lib/nltk_data")


def nltk_search_dirs() -> list[Path]:
    """The folders NLTK reads its data from on a POSIX system, the scorer's data directory first."""
    env = [Path(p.strip()).expanduser() for p in os.environ.get(NLTK_ENV, "").split(os.pathsep) if p.strip()]
    prefix = Path(sys.prefix)
    return [nltk_data.nltk_data_dir(), *env, Path.home() / "nltk_data",
            *(prefix / sub / "nltk_data" for sub in ("", "share", "lib")), *map(Path, NLTK_SYSTEM_DIRS)]


def use_checkout_nltk_data(checkout: str | None) -> str | None:
    """Point ``NLTK_DATA`` (for this process and its jobs) at the checkout's ``.nltk_data`` for a run in another
    folder that has none and names none. Returns that folder; None where nothing was set."""
    if not checkout or os.environ.get(NLTK_ENV, "").strip() or Path(nltk_data.DEFAULT_DIR).is_dir():
        return None
    found = Path(checkout, nltk_data.DEFAULT_DIR)
    if not found.is_dir():
        return None
    os.environ[NLTK_ENV] = str(found)
    return str(found)


def _scoring(plan: Plan) -> Iterator[str | None]:
    """METEOR's WordNet (whole) and English Punkt, where a planned HealthFC system selects evidence: looked for as
    folders or NLTK's zip files without importing NLTK (0.7 s of CPU), which is asked only when they are not found."""
    systems = [s for s in plan.healthfc.healthfc_systems_run() if s in EVIDENCE_SYSTEMS]
    if not plan.stage_enabled("experiments") or not systems:
        return
    dirs = nltk_search_dirs()
    wordnet = [Path("corpora/wordnet", f) for f in (*nltk_data.WORDNET_REQUIRED, "lexnames")]
    has_wordnet = any((d / "corpora/wordnet.zip").is_file() or all((d / f).is_file() for f in wordnet) for d in dirs)
    has_punkt = any((d / "tokenizers/punkt_tab/english").is_dir() or (d / "tokenizers/punkt_tab.zip").is_file()
                    for d in dirs)
    if has_wordnet and has_punkt:
        return
    try:
        nltk_data.ensure_nltk_data(wordnet=True, punkt=True, language="english")
    except nltk_data.NltkDataMissing as exc:
        first = str(exc).split(". ", 1)[0]  # "NLTK WordNet data not found (looked in ...)"
        yield (f"prerequisite: {first}; install it offline with bash {nltk_data.INSTALL_SCRIPT} "
               f"{nltk_data.nltk_data_dir()}, or set NLTK_DATA to the folder that has it (healthfc_score computes "
               f"METEOR for the evidence of {', '.join(systems)})")


def llm_key_problem(key: str, llm: dict[str, Any], why: str) -> str | None:
    """An OpenAI-compatible endpoint's key: required unless the server runs on this machine or ``api_key_env`` is ''."""
    if runs_locally(llm.get("backend", "openai")) or is_loopback(llm.get("base_url", "")):
        return None
    return _key(key, llm.get("api_key_env", ""), f"{why} at {llm.get('base_url')}",
                f", or set {key}: '' for a server that needs no key")


def _llms(plan: Plan) -> Iterator[str | None]:
    config = plan.config
    if plan.stage_enabled("experiments"):
        for run in plan.experiments.clinifact_runs():
            spec, model = clinifact_system(run["system"]), run["model"]
            if spec.asks_llm:
                llm = plan.experiments._model_section(spec.section, spec.overrides, model)  # its client's keys
                key = (f"experiments.clinifact.{spec.overrides}.{model}.api_key_env"
                       if "api_key_env" in (config["experiments"]["clinifact"][spec.overrides].get(model) or {})
                       else f"experiments.clinifact.{spec.section}.api_key_env")
                yield llm_key_problem(key, llm, f"the {spec.title} model {model} is asked")
    if not plan.stage_enabled("medsnip"):
        return
    ms = config["medsnip"]
    for where, overrides in plan.medsnip.medsnip_roles():
        llm = plan.medsnip.medsnip_llm(overrides)
        key = f"{where}.api_key_env" if "api_key_env" in (overrides or {}) else "medsnip.llm.api_key_env"
        yield llm_key_problem(key, llm, f"{where} calls {llm.get('model') or 'its model'}")
    retrieval_sources = {s for v in ms["verifiers"] if verifier_kind(v["kind"]).retrieves for s in ms["retrieval"]["sources"]}
    r = ms["retrieval"]
    for name, spec in SEARCH_SOURCES.items():  # the shared sources (web, pubmed), from MedSNIP's own sections
        if name in retrieval_sources:
            yield from _source_needs(f"medsnip.retrieval.{name}", spec, r[name], f"a retrieval verifier searches {spec.title}")
    if "bm25" in retrieval_sources:  # MedSNIP's own local index
        yield (_exists("medsnip.retrieval.bm25.passages", r["bm25"]["passages"]) if r["bm25"]["passages"] else
               "prerequisite: medsnip.retrieval.bm25.passages is empty but bm25 is in medsnip.retrieval.sources: set it to a JSONL of passages")


CHECKS = (_healthfc_data, _clinifact_data, _datasets, _medsnip_data, _retrieval, _scoring, _llms)


def missing_prerequisites(plan: Plan) -> list[str]:
    """Every missing prerequisite of the planned rules, one line each, in the order of the stages."""
    found: list[str] = []
    for check in CHECKS:
        found += [line for line in check(plan) if line and line not in found]
    return found


# ------------------------------------------------------------------------------------------ devices

def _devices(options: Any) -> Iterator[str]:
    """Every ``device`` value in a job's serialised options (nested: a pipeline's selector, a MedSNIP role's LLM)."""
    items = (options.items() if isinstance(options, Mapping)
             else enumerate(options) if isinstance(options, list | tuple) else ())
    for key, value in items:
        if key == "device" and isinstance(value, str):
            yield value
        else:
            yield from _devices(value)


def cuda_problem(plan: Plan) -> str | None:
    """On a local run: a planned job set to ``device: cuda`` where torch sees no CUDA device, as one line."""
    by_rule: dict[str, list[str]] = {}  # rule → its jobs, each named ``healthfc_experiment (en, minilm, oracle, 0)``
    for spec, wildcards in plan.planned_jobs():
        if any(d.startswith("cuda") for d in _devices(plan.options(spec.rule, wildcards))):
            where = f"{spec.rule} ({', '.join(wildcards.values())})" if wildcards else spec.rule
            by_rule.setdefault(spec.rule, []).append(where)
    if not by_rule:
        return None
    import torch

    if torch.cuda.is_available():
        return None
    n = sum(map(len, by_rule.values()))
    shown = "; ".join(f"{rule}: {len(jobs)} job{'s' if len(jobs) > 1 else ''}" + (f", e.g. {jobs[0]}" if len(jobs) > 1 else f" ({jobs[0]})")
                      for rule, jobs in by_rule.items())
    return (f"prerequisite: {n} planned job{'s' if n > 1 else ''} ({shown}) set device cuda, but torch {torch.__version__} sees no CUDA device on this machine "
            f"(CUDA_VISIBLE_DEVICES={os.environ.get('CUDA_VISIBLE_DEVICES', 'unset')}): run on a GPU machine or through "
            "a cluster profile, install the CUDA build of torch (scripts/install.sh, MEDFC_TORCH), or set device: auto or cpu")
