"""What the workflow runs, planned from the validated config: pure functions of the config dict, no
Snakemake (workflow/rules/common.smk builds one :class:`Plan` and the rules call it).

A :class:`Plan` gives the targets of ``rule all``, the run matrix of every table (HealthFC: lang × model ×
system × fold; CliniFact: model × system), each job's input files that depend on the config and each
job's fully built step options: every layering of training configs (``train`` < ``model_train`` <
``system_train`` < ``smoke``; the pipeline's selector < ``evidence_train`` < ``smoke``) is done here, once.
:meth:`Plan.check` holds the checks across keys that the schema cannot express, and builds every planned job's
options once (:meth:`Plan.build_jobs`), so that a mistake found while building them stops the run at once;
:func:`medfc.plan.config_errors.plan_for` is the one entry point (schema, defaults, plan, checks), each mistake
one line naming the key.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from medfc.experiments.aliases import ALIAS_HINT
from medfc.experiments.clinifact_systems import CLINIFACT_SYSTEMS, clinifact_system
from medfc.experiments.systems import evidence_source
from medfc.plan import cluster, prerequisites
from medfc.plan.experiments import HEALTHFC_WILDCARDS, TABLES, ExperimentsPlan, did_you_mean, layered
from medfc.plan.layout import PAPERS, Layout, release_split_files
from medfc.plan.medsnip import MEDSNIP_TITLES, MEDSNIP_WILDCARDS, MedsnipPlan

__all__ = ["HEALTHFC_WILDCARDS", "MEDSNIP_TITLES", "MEDSNIP_WILDCARDS", "PAPERS", "TABLES", "Layout", "Plan", "layered"]


def _files_under(directory: str) -> list[str]:
    """Every file below a directory (as inputs, so editing any of them reruns the rule)."""
    root = Path(directory)
    if not root.is_dir():
        raise ValueError(f"config: directory {directory!r} does not exist")
    return sorted(str(p) for p in root.rglob("*") if p.is_file())


class Plan(ExperimentsPlan, MedsnipPlan):
    """The plan of one validated config (``config`` is read, never changed)."""

    def local_rules(self) -> list[str]:
        """The rules a cluster run keeps where Snakemake runs (:mod:`medfc.plan.cluster`)."""
        return cluster.local_rules(self.config)

    def stage_enabled(self, name: str) -> bool:
        return bool(self.config["stages"].get(name, False))

    # --------------------------------------------------------------------------------- datasets
    @property
    def healthfc_mode(self) -> str:
        return self.config["healthfc"]["dataset"]["mode"]

    def crawl_inputs(self) -> list[str]:
        """The demo mirror's files (a live crawl has no input files). A configured mirror that is missing,
        empty or without its sitemap index stops the run: an old crawl is never reused in its place."""
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
        index = root / crawl["sitemap_path"].lstrip("/")
        if not index.is_file():
            raise ValueError(f"config: healthfc.crawl.mirror_dir {mirror!r} has no sitemap index "
                             f"{crawl['sitemap_path']} (healthfc.crawl.sitemap_path): not a mirror of the site")
        return _files_under(mirror)

    def healthfc_release_inputs(self) -> dict[str, str]:
        """A local release file is an input (editing it reruns); a URL is downloaded into the cache."""
        src = self.config["healthfc"]["release"]["source"]
        if not src:
            raise ValueError("config: healthfc.release.source must be set when healthfc.dataset.mode uses the release")
        return {} if src.startswith(("http://", "https://")) else {"release": src}

    def translation_inputs(self) -> dict[str, Any]:
        """Shipped memory files and the corrections file are inputs, so editing them reruns the translation."""
        tr = self.config["healthfc"]["translation"]
        inputs: dict[str, Any] = {"memory_seeds": list(tr["memory_seeds"])}
        if tr["corrections"]:
            inputs["corrections"] = tr["corrections"]
        return inputs

    def healthfc_dataset_sources(self) -> list[str]:
        """The rules whose outputs the dataset reads in the configured mode (healthfc.dataset.mode)."""
        mode = self.healthfc_mode
        return ([] if mode == "release" else ["parse", "translate"]) + ([] if mode == "crawl" else ["release"]) + (
            ["align"] if mode == "crawl+release" else [])

    def clinifact_release_inputs(self) -> dict[str, str]:
        """A local release directory's three CSVs are inputs (editing one reruns the import)."""
        return release_split_files(self.config["clinifact"]["release"]["source"])

    def clinifact_diff_enabled(self) -> bool:
        cf = self.config["clinifact"]
        return cf["pairs_source"] == "rebuild" and bool(cf["diff"]["release"])

    def clinifact_diff_inputs(self) -> dict[str, list[str]]:
        """A local release's three files are inputs (editing one reruns the diff); a URL is downloaded into the cache."""
        src = self.config["clinifact"]["diff"]["release"]
        if not src:
            raise ValueError("config: clinifact.diff.release must be set for the rule clinifact_diff")
        files = release_split_files(src)
        return {"release_files": list(files.values())} if files else {}

    def healthfc_data_planned(self) -> bool:
        """Whether the run builds the HealthFC dataset: its stage, a HealthFC experiment or MedSNIP on HealthFC."""
        return (self.stage_enabled("healthfc") or bool(self.stage_enabled("experiments") and self.healthfc_runs())
                or (self.stage_enabled("medsnip") and "healthfc" in self.medsnip_datasets()))

    def clinifact_data_planned(self) -> bool:
        """Whether the run builds (or imports) the CliniFact pairs: its stage or a CliniFact experiment."""
        return self.stage_enabled("clinifact") or bool(self.stage_enabled("experiments") and self.clinifact_runs())

    def missing_prerequisites(self) -> list[str]:
        """What the planned rules need from outside the config and lack, one line each (:mod:`medfc.plan.prerequisites`)."""
        return prerequisites.missing_prerequisites(self)

    def cuda_problem(self) -> str | None:
        """A planned job set to ``device: cuda`` on a machine whose torch sees no CUDA (checked on a local run)."""
        return prerequisites.cuda_problem(self)

    # ---------------------------------------------------------------------------------- targets
    def targets(self) -> list[str]:
        """The files of ``rule all``."""
        targets: list[str] = []
        res = self.layout.under
        if self.stage_enabled("healthfc"):
            if self.healthfc_mode != "release":
                targets += [res("healthfc/parsed/report.json"), res("healthfc/translated/report.json")]
            targets += [res(f) for f in (
                "healthfc/dataset/dataset_card.md",
                "healthfc/folds/folds.csv",
                "healthfc/stats/table2.csv",
                "healthfc/stats/fig1_claims_per_year.png",
                "healthfc/stats/fig2_top_topics.png",
                "healthfc/stats/fig3_level_by_verdict.png",
            )]
            if self.healthfc_mode == "crawl+release":
                targets.append(res("healthfc/diff/diff.md"))
        if self.stage_enabled("clinifact"):
            stats = res("clinifact/stats")
            targets += [f"{stats}/table6_labels.csv", f"{stats}/table4_words.csv", f"{stats}/fig2_disease_classes.png", f"{stats}/figS1_years.png"]
            if self.config["clinifact"]["pairs_source"] == "rebuild":
                targets.append(res("clinifact/pairs/dataset_card.md"))
            if self.clinifact_diff_enabled():
                targets.append(res("clinifact/diff/diff.md"))
        if self.stage_enabled("experiments"):
            targets += self.experiment_targets()
        return targets + self.medsnip_targets() + [f"{self.layout.provenance}/software.yml"]

    def named_targets(self) -> dict[str, list[str]]:
        """What users ask for by name (``snakemake --cores 4 datasets``, ``tables``, ``figures``): the rebuilt
        datasets (cards, folds, splits), every table (statistics, experiments, MedSNIP; CSV beside its Markdown
        and TeX) and every figure of :meth:`targets`."""
        res = self.layout.under
        datasets: list[str] = []
        if self.stage_enabled("healthfc"):
            datasets += [res("healthfc/dataset/dataset_card.md"), res("healthfc/folds/folds.csv")]
        if self.stage_enabled("clinifact") or self.stage_enabled("experiments"):
            datasets += [f"{self.clinifact_pairs_dir}/{s}_set.csv" for s in ("train", "validation", "test")]
            if self.config["clinifact"]["pairs_source"] == "rebuild":
                datasets.append(res("clinifact/pairs/dataset_card.md"))
        every = self.targets()
        figures = [t for t in every if t.endswith(".png")]
        tables = [t for t in every if t.endswith(".csv") and (t.startswith(f"{self.layout.tables}/") or "/stats/table" in t
                                                             or t.startswith(f"{self.layout.medsnip}/"))]
        return {"datasets": datasets, "tables": tables, "figures": figures}

    # ----------------------------------------------------------------------------------- checks
    def check(self) -> None:
        """Settings the schema allows one by one but not together: stop at once, naming the keys."""
        config = self.config
        if self.healthfc_mode == "release" and self.stage_enabled("experiments"):
            chosen = [s for s in ("pipeline", "joint") if s in self.healthfc_systems_run()]
            if chosen:
                raise ValueError(
                    "config: healthfc.dataset.mode is 'release', so the evidence-selection systems pipeline and joint "
                    "would only have the gold sentences to choose from and their evidence scores would be meaningless; "
                    f"experiments.healthfc.systems (or .lang_systems) includes {' and '.join(chosen)}. Remove pipeline and "
                    "joint from experiments.healthfc.systems (e.g. [oracle, claims_only, gold_explanations, level_of_evidence]) "
                    "or use healthfc.dataset.mode crawl+release."
                )
        if self.stage_enabled("experiments"):
            for lang in config["experiments"]["healthfc"]["langs"]:
                if not config["models"]["healthfc"][lang]:
                    raise ValueError(
                        f"config: models.healthfc.{lang} is empty but experiments.healthfc.langs includes {lang}, so its HealthFC "
                        f"experiments would silently vanish: name its models, or leave {lang} out of experiments.healthfc.langs "
                        "(langs: [] runs no HealthFC experiments)")
        for key, names in [*((f"models.healthfc.{lang}", config["models"]["healthfc"][lang]) for lang in ("en", "de")),
                           *((spec.models_key, config["models"]["clinifact"][name]) for name, spec in CLINIFACT_SYSTEMS.items())]:
            for name in names:
                if name not in self.aliases and not self.is_ensemble(name):
                    hint = did_you_mean(name, [*self.aliases, *self.ensembles])
                    raise ValueError(f"config: {key}: {name!r} names no model{hint} (models.aliases: {', '.join(sorted(self.aliases))}; "
                                     f"models.ensembles: {', '.join(sorted(self.ensembles)) or 'none'}){ALIAS_HINT}")
        both = sorted(set(self.aliases) & set(self.ensembles))
        if both:
            raise ValueError(f"config: {both} are both models.aliases and models.ensembles: an ensemble needs a name of its own")
        for name, ens in self.ensembles.items():
            unknown = [m for m in ens["members"] if m not in self.aliases]
            if unknown:
                raise ValueError(f"config: models.ensembles.{name}.members {unknown} are not in models.aliases")
        # each model kind serves the datasets its options class declares (its datasets and limits: medfc.experiments.options)
        for dataset, key, names in [("healthfc", "models.healthfc", [*config["models"]["healthfc"]["en"], *config["models"]["healthfc"]["de"]]),
                                    *(("clinifact", spec.models_key, config["models"]["clinifact"][n]) for n, spec in CLINIFACT_SYSTEMS.items())]:
            refused: dict[type, set[str]] = {}
            for m in names:
                for cls in {self.model_class(x) for x in self.ensembles.get(m, {}).get("members", [m])}:
                    if dataset not in cls.datasets:
                        refused.setdefault(cls, set()).add(m)
            for cls, used in refused.items():
                raise ValueError(f"config: {key} uses {sorted(used)}, {cls.limits}")
        self.check_model_options()
        if self.stage_enabled("experiments"):
            self.check_offline_models()
        smoke = {k: v for k, v in config["experiments"]["smoke"].items() if v is not None}
        if self.stage_enabled("experiments") and smoke and config["experiments"]["scale"] != "smoke":
            raise ValueError(
                f"config: experiments.smoke caps training ({smoke}), so the tables' numbers are smoke-sized, but "
                f"experiments.scale is {config['experiments']['scale']!r}: set experiments.scale: smoke, or lift the caps "
                "(experiments.smoke: {max_steps: null, max_examples: null})."
            )
        if self.stage_enabled("medsnip"):
            self.check_medsnip()
        self.build_jobs()

    def build_jobs(self) -> None:
        """Build, once, every config-dependent input and option the planned jobs' rules will ask for, so that a
        mistake only they find (a model alias that names no model, a missing mirror or release, a bad
        override of one model's section) stops the run here, as one line, not as a traceback while
        Snakemake builds its DAG. Raises the plan's ValueError naming the key."""
        config = self.config
        hfc_runs = self.healthfc_runs() if self.stage_enabled("experiments") else []
        cf_runs = self.clinifact_runs() if self.stage_enabled("experiments") else []
        targets = self.targets()
        if self.healthfc_data_planned():
            sources = self.healthfc_dataset_sources()
            if "parse" in sources:
                self.crawl_inputs()
                self.translation_inputs()
            if "release" in sources:
                self.healthfc_release_inputs()
        if self.clinifact_data_planned():
            if config["clinifact"]["pairs_source"] == "release":
                self.clinifact_release_inputs()
            if self.stage_enabled("clinifact") and self.clinifact_diff_enabled():
                self.clinifact_diff_inputs()
        for run in hfc_runs:
            lang, model, system, fold = run["lang"], run["model"], run["system"], run["fold"]
            members = self.ensemble_members(model) if self.is_ensemble(model) else [model]
            if self.is_ensemble(model):
                self.ensemble_options(model)
            for member in members:
                self.healthfc_experiment_options(lang, member, system, fold)
            self.healthfc_experiment_inputs(system)
            self.healthfc_score_options(lang, system)
            source = evidence_source(system)
            if source:
                self.healthfc_retrieve_inputs(source)
                self.healthfc_retrieve_options(source)
        for run in self.healthfc_inner_runs() if hfc_runs else []:
            self.healthfc_inner_cv_options(run["lang"], run["model"], run["system"], run["fold"])
        for model in self.clinifact_inner_models():
            self.clinifact_inner_cv_options(model)
        for run in cf_runs:  # each member's options (the method its system's record names), then an ensemble's
            model, system = run["model"], run["system"]
            for member in self.clinifact_members(system, model):
                self.clinifact_options(system, member)
            if clinifact_system(system).ensemble_rule and self.is_ensemble(model):
                self.ensemble_options(model)
        if cf_runs:
            self.clinifact_fig3_inputs()
            self.clinifact_fig3_options()
        for table in TABLES:
            if f"{self.layout.tables}/{table}.csv" in targets:
                self.table_inputs(table)
                self.table_options(table)
        if self.stage_enabled("medsnip"):
            for dataset in self.medsnip_datasets():
                self.medsnip_prepare_options(dataset)
                self.medsnip_prepare_prompts(dataset)
                self.medsnip_score_options(dataset)
                self.medsnip_score_inputs(dataset)
                for mode in self.medsnip_modes(dataset):
                    self.medsnip_decompose_options(dataset, mode)
                    self.medsnip_decompose_prompts(mode)
                    for verifier in config["medsnip"]["verifiers"]:
                        self.medsnip_verify_options(verifier["name"])
                        self.medsnip_verify_prompts(verifier["name"])
                        self.medsnip_verify_inputs(dataset, mode, verifier["name"])
