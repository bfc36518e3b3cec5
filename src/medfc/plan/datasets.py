"""The datasets' plan: HealthFC's and CliniFact's rules and each ``datasets.<name>`` import, their config-dependent
inputs and options, from the ``healthfc``, ``clinifact`` and ``datasets`` sections."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from medfc.clinifact import options as cf
from medfc.clinifact.studies_sources import studies_source
from medfc.common.options import NoOptions
from medfc.datasets import sources as dataset_sources
from medfc.datasets.options import ImportOptions
from medfc.datasets.records import labels_by_text
from medfc.healthfc import options as hfc
from medfc.healthfc.options import CrawlOptions
from medfc.healthfc.translation_backends import translation_backend
from medfc.plan.jobs import Config, JobPlan, Part, Planned, job, one_job
from medfc.plan.layout import release_split_files

TRANSLATE = {"threads": 2, "mem_mb": 8192, "runtime": 600}  # Opus-MT over every sentence of the crawl


def translation_is_local(config: Config) -> bool:
    return translation_backend(config["healthfc"]["translation"]["backend"]).local


def translation_resources(plan: JobPlan) -> dict[str, int]:
    gpu = plan.config["healthfc"]["translation"]["gpu"] if translation_is_local(plan.config) else 0
    return {"gpu": gpu, **TRANSLATE}


def _files_under(root: Path) -> list[str]:
    """Every file below a folder (both callers have checked that it is one)."""
    return sorted(str(p) for p in root.rglob("*") if p.is_file())


def _healthfc_data(*sources: str) -> Planned:
    """Planned when the run builds the HealthFC dataset and, for a rule of its sources, reads that source."""
    return one_job(lambda plan: plan.healthfc_data_planned() and all(s in plan.datasets.healthfc_dataset_sources() for s in sources))


def _clinifact_data(when: Callable[[JobPlan], bool]) -> Planned:
    return one_job(lambda plan: plan.clinifact_data_planned() and when(plan))


def _rebuilt(plan: JobPlan) -> bool:
    return plan.config["clinifact"]["pairs_source"] == "rebuild"


def _studies_read(plan: JobPlan) -> bool:
    """Whether a planned job reads the studies: the rebuilt pairs, the statistics and diff, Fig. 3's disease panel."""
    fig3 = plan.config["experiments"]["clinifact"]["disease_panel"] and (plan.stage_enabled("experiments")
                                                                         and bool(plan.experiments.clinifact_runs()))
    return _rebuilt(plan) or plan.stage_enabled("clinifact") or fig3


def _stage(name: str) -> Planned:
    return one_job(lambda plan: plan.stage_enabled(name))


class DatasetsPlan(Part):
    @property
    def cache(self) -> str:
        return self.config["cache_dir"]

    @property
    def healthfc_mode(self) -> str:
        return self.config["healthfc"]["dataset"]["mode"]

    def crawl_inputs(self) -> list[str]:
        """The mirror's files (a live crawl has none). A configured mirror that is missing or without its sitemap
        index stops the run: an old crawl is never reused in its place."""
        crawl = self.config["healthfc"]["crawl"]
        mirror = crawl["mirror_dir"]
        if mirror is not None and crawl["mirror_url"] is not None:
            raise ValueError("config: healthfc.crawl.mirror_dir and healthfc.crawl.mirror_url are both set; set one (or neither, "
                             "to crawl the live site)")
        if mirror is None:
            return []
        root = Path(mirror)
        if not root.is_dir():
            raise ValueError(f"config: healthfc.crawl.mirror_dir {mirror!r} does not exist (or is not a directory); "
                             "set it to the mirror's directory, or to null to crawl the live site")
        if not (root / crawl["sitemap_path"].lstrip("/")).is_file():
            raise ValueError(f"config: healthfc.crawl.mirror_dir {mirror!r} has no sitemap index "
                             f"{crawl['sitemap_path']} (healthfc.crawl.sitemap_path): not a mirror of the site")
        return _files_under(root)

    def healthfc_release_inputs(self) -> dict[str, str]:
        src = self.config["healthfc"]["release"]["source"]
        if not src:
            raise ValueError("config: healthfc.release.source must be set when healthfc.dataset.mode uses the release")
        return {} if src.startswith(("http://", "https://")) else {"release": src}

    def translation_inputs(self) -> dict[str, object]:
        tr = self.config["healthfc"]["translation"]
        corrections = {"corrections": tr["corrections"]} if tr["corrections"] else {}
        return {"memory_seeds": list(tr["memory_seeds"]), **corrections}

    def healthfc_dataset_sources(self) -> list[str]:
        """The rules whose outputs the dataset reads in the configured ``healthfc.dataset.mode``."""
        mode = self.healthfc_mode
        return ([] if mode == "release" else ["parse", "translate"]) + ([] if mode == "crawl" else ["release"]) + (
            ["align"] if mode == "crawl+release" else [])

    def clinifact_diff_enabled(self) -> bool:
        cf = self.config["clinifact"]
        return cf["pairs_source"] == "rebuild" and bool(cf["diff"]["release"])

    def clinifact_diff_inputs(self) -> dict[str, list[str]]:
        src = self.config["clinifact"]["diff"]["release"]
        if not src:
            raise ValueError("config: clinifact.diff.release must be set for the rule clinifact_diff")
        files = release_split_files(src)
        return {"release_files": list(files.values())} if files else {}

    def healthfc_dataset_inputs(self) -> dict[str, str]:
        """The outputs of the rules :meth:`healthfc_dataset_sources` names."""
        files = {"parse": {"claims": "parsed/claims.jsonl", "articles": "parsed/articles.jsonl"},
                 "translate": {"sentences": "translated/sentences.jsonl", "claims_en": "translated/claims_en.jsonl"},
                 "release": {"rows": "release/rows.jsonl", "release_report": "release/report.json"},
                 "align": {"alignment": "aligned/alignment.jsonl", "align_report": "aligned/report.json"}}
        sources = self.healthfc_dataset_sources()
        return {k: self.layout.under(f"healthfc/{f}") for source, named in files.items() if source in sources
                for k, f in named.items()}

    def dataset_names(self) -> list[str]:
        return list(self.config["datasets"])

    def dataset_split_file(self, name: str, split: str) -> str:
        return self.layout.under(f"datasets/{name}/{split}.jsonl")

    def dataset_import_inputs(self, dataset: str) -> dict[str, list[str]]:
        """A local source's files (a URL's and a Hugging Face repository's are downloaded by the job)."""
        source = self.config["datasets"][dataset]["source"]
        if not source["path"]:
            return {}
        root = Path(source["path"])
        if source["files"]:
            return {"source": [str(root / f) for f in source["files"].values()]}
        return {"source": _files_under(root) if root.is_dir() else [str(root)]}

    @job("network", lambda plan: [{"dataset": name} for name in plan.datasets.dataset_names()],
         options_class=ImportOptions, inputs=dataset_import_inputs)
    def dataset_import(self, dataset: str) -> ImportOptions:
        """``datasets.<name>`` less its models and training keys; a source that is not exactly one of path, url and hf
        at a commit, or whose files are not the three splits, stops the plan naming the key."""
        name, entry = dataset, self.config["datasets"][dataset]
        options = ImportOptions.from_mapping({
            "name": name, "title": entry["title"] or name, "source": entry["source"], "fields": entry["fields"],
            "labels": labels_by_text(entry["labels"]), "splits": entry["splits"], "card_notes": entry["card_notes"],
            "cache_dir": f"{self.cache}/datasets"}, where=f"datasets.{name}")
        if problem := dataset_sources.source_problem(options):
            raise ValueError(f"config: {problem}")
        if len(options.classes) < 2:
            raise ValueError(f"config: datasets.{name}.labels maps its values to {len(options.classes)} class(es) "
                             f"({', '.join(options.classes) or 'none'}); a classifier needs at least two")
        return options

    def clinifact_studies_inputs(self) -> dict[str, str]:
        studies = self.config["clinifact"]["studies"]
        return {"zip": studies["bulk_zip"]} if studies_source(studies["source"]).reads_zip and studies["bulk_zip"] else {}

    @job("network", _healthfc_data("parse"), options_class=CrawlOptions, inputs=crawl_inputs)
    def healthfc_crawl(self) -> dict[str, object]:
        return {**self.config["healthfc"]["crawl"], "http_cache_dir": f"{self.cache}/healthfc/http", "jobdir": f"{self.cache}/healthfc/crawl-job"}

    @job("light", _healthfc_data("parse"), options_class=NoOptions)
    def healthfc_parse(self) -> dict[str, object]:
        return {}

    @job("model", _healthfc_data("translate"), options_class=hfc.TranslateOptions, inputs=translation_inputs,
         resources=translation_resources, local_model=translation_is_local)
    def healthfc_translate(self) -> dict[str, object]:
        """``healthfc.translation`` less its inputs and GPUs; the working translation memory is this rule's alone."""
        hfc = self.config["healthfc"]
        return {**{k: v for k, v in hfc["translation"].items() if k not in ("memory_seeds", "corrections", "gpu")},
                "memory": f"{self.cache}/healthfc/translation_memory.jsonl", "ct2_cache": f"{self.cache}/healthfc/ctranslate2",
                "splitter": hfc["sentences"]["base"]}

    @job("network", _healthfc_data("release"), options_class=hfc.ReleaseOptions, inputs=healthfc_release_inputs)
    def healthfc_release(self) -> dict[str, object]:
        return {**self.config["healthfc"]["release"], "cache_dir": self.cache}

    @job("light", _healthfc_data("align"), options_class=hfc.AlignOptions)
    def healthfc_align(self) -> dict[str, object]:
        hfc = self.config["healthfc"]
        return {**hfc["align"], "splitter": hfc["sentences"]["base"]}

    @job("light", _healthfc_data(), options_class=hfc.DatasetOptions, inputs=healthfc_dataset_inputs)
    def healthfc_dataset(self) -> dict[str, object]:
        return {"mode": self.healthfc_mode, "splitter": self.config["healthfc"]["sentences"]["base"]}

    @job("light", one_job(lambda plan: plan.stage_enabled("healthfc") or bool(plan.stage_enabled("experiments") and plan.healthfc.healthfc_runs())),
         options_class=hfc.FoldsOptions)
    def healthfc_folds(self) -> dict[str, object]:
        return self.config["healthfc"]["folds"]

    @job("light", _stage("healthfc"), options_class=NoOptions)
    def healthfc_export(self) -> dict[str, object]:
        return {}

    @job("light", _stage("healthfc"), options_class=hfc.StatsOptions, inputs=Part.papers_inputs)
    def healthfc_stats(self) -> dict[str, object]:
        return {"top_topics": self.config["healthfc"]["dataset"]["top_topics"]}

    @job("light", one_job(lambda plan: plan.stage_enabled("healthfc") and plan.datasets.healthfc_mode == "crawl+release"), options_class=hfc.DiffOptions)
    def healthfc_diff(self) -> dict[str, object]:
        hfc = self.config["healthfc"]
        return {**hfc["diff"], "min_claim_score": hfc["align"]["min_claim_score"]}

    @job("network", _clinifact_data(_studies_read), options_class=cf.StudiesOptions, inputs=clinifact_studies_inputs)
    def clinifact_fetch_studies(self) -> dict[str, object]:
        cf = self.config["clinifact"]
        return {**{k: v for k, v in cf["studies"].items() if k != "bulk_zip"}, "cache_dir": f"{self.cache}/clinifact",
                "user_agent": cf["user_agent"]}

    @job("light", _clinifact_data(_rebuilt), options_class=cf.ClaimsOptions)
    def clinifact_build_claims(self) -> dict[str, object]:
        return self.config["clinifact"]["claims"]

    @job("network", _clinifact_data(_rebuilt), options_class=cf.AbstractsOptions)
    def clinifact_fetch_abstracts(self) -> dict[str, object]:
        cf = self.config["clinifact"]
        return {**cf["pubmed"], "cache_dir": f"{self.cache}/clinifact/pubmed", "user_agent": cf["user_agent"]}

    @job("light", _clinifact_data(_rebuilt), options_class=cf.PairsOptions)
    def clinifact_build_pairs(self) -> dict[str, object]:
        return self.config["clinifact"]["pairs"]

    @job("network", _clinifact_data(lambda plan: not _rebuilt(plan)), options_class=cf.ReleaseOptions,
         inputs=lambda self: release_split_files(self.config["clinifact"]["release"]["source"]))
    def clinifact_import_release(self) -> dict[str, object]:
        return {**self.config["clinifact"]["release"], "cache_dir": f"{self.cache}/clinifact"}

    @job("light", _clinifact_data(lambda plan: plan.stage_enabled("clinifact") and _rebuilt(plan)), options_class=NoOptions)
    def clinifact_export(self) -> dict[str, object]:
        return {}

    @job("light", _stage("clinifact"), options_class=cf.StatsOptions, inputs=Part.papers_inputs)
    def clinifact_stats(self) -> dict[str, object]:
        return self.config["clinifact"]["stats"]

    @job("light", _clinifact_data(lambda plan: plan.stage_enabled("clinifact") and plan.datasets.clinifact_diff_enabled()),
         options_class=cf.DiffOptions, inputs=clinifact_diff_inputs)
    def clinifact_diff(self) -> dict[str, object]:
        return {**self.config["clinifact"]["diff"], "cache_dir": f"{self.cache}/clinifact"}

