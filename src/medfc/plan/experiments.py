"""The experiments' plan: the run matrix of HealthFC (lang × model × system × fold) and of the pairs datasets
(CliniFact: model × system; each declared dataset), the ensembles' and stacked members' runs, the final models, and
each job's whole options, built and typed here from the models' configs (:mod:`medfc.plan.models`)."""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypedDict, TypeVar

from medfc.common.llm_backends import runs_locally
from medfc.common.options import Options
from medfc.common.registry import lookup
from medfc.experiments.clinifact.systems import CLINIFACT_SYSTEMS, CliniFactSystem, clinifact_system, ensembling_system
from medfc.experiments.ensembles.ensemble import EnsembleOptions
from medfc.experiments.final.train import HealthFCFinalOptions, PairsFinalOptions
from medfc.experiments.models.options import (CLINIFACT_PAIRS, SPLITS, FineTuneOptions, PairData, PairsTrainOptions,
                                              ZeroShotOptions, imported_pairs)
from medfc.experiments.ensembles.stacking import HealthFCInnerOptions, PairsInnerOptions
from medfc.experiments.healthfc.systems import EVIDENCE_SYSTEMS, SYSTEMS, HealthFCFoldOptions, evidence_source, system_option_keys
from medfc.experiments.healthfc.systems import system as system_spec
from medfc.healthfc.options import RetrieveOptions
from medfc.plan.jobs import Config, JobPlan, Part, Planned, job, unique
from medfc.plan.models import layered
from medfc.plan.resources import INNER_CV, KIND_ROW, ModelRow, final_resources
from medfc.retrieval.search_sources import search_source, wildcard_pattern
from medfc.scoring.options import HealthFCScoreOptions, PairsScoreOptions

HEALTHFC_WILDCARDS = {"source": wildcard_pattern()}  # healthfc_retrieve's {source}: the registered search sources
ZERO_SHOT, FINE_TUNED = clinifact_system("zero_shot"), clinifact_system("fine_tuned")
O = TypeVar("O", bound=Options)


class HealthFCRun(TypedDict):
    lang: str
    model: str
    system: str
    fold: int


class CliniFactRun(TypedDict):  # a run of a pairs dataset: its folder and its job's benchmark file
    model: str
    system: str
    dir: str
    benchmark: str


@dataclass(frozen=True)
class PairsDataset:
    """One dataset of the one discriminative path (:mod:`medfc.experiments.pairs`): ``train``, its own training keys;
    ``key``, its config key; ``runs``, those of the one path; ``all_runs``, CliniFact's generative systems' too."""

    name: str
    title: str
    data: PairData
    splits: Mapping[str, str]
    train: Mapping[str, object]
    key: str
    runs: Callable[[], list[CliniFactRun]]
    all_runs: Callable[[], list[CliniFactRun]]


def _healthfc_runs(plan: JobPlan) -> list[HealthFCRun]:
    return plan.healthfc.healthfc_runs() if plan.stage_enabled("experiments") else []


def _system_models(system: str) -> Planned:
    """The jobs of a CliniFact system's rule of its own: one per model."""
    def planned(plan: JobPlan) -> list[dict[str, str]]:
        runs = plan.experiments.clinifact_runs() if plan.stage_enabled("experiments") else []
        return unique({"model": r["model"]} for r in runs if r["system"] == system)
    return planned


def healthfc_run_path(lang: str, model: str, system: str, fold: int | str) -> str:
    """A HealthFC run's folder below the experiments' (and the inner cross-validations', and the checkpoints')."""
    return f"healthfc/{lang}/{model}/{system}/fold{fold}"


def _local_model(spec: CliniFactSystem) -> Callable[[Config], bool] | None:
    """A system placed ``model``: whether any of its planned models runs in the job's process."""
    if spec.placement != "model":
        return None

    def local(config: Config) -> bool:
        cx = config["experiments"]["clinifact"]
        models = config["models"]["clinifact"][spec.name] or [None]
        return any(runs_locally({**cx[spec.section], **(cx[spec.overrides].get(m) or {} if m else {})}["backend"]) for m in models)
    return local


def _pairs_runs(plan: JobPlan) -> list[dict[str, str]]:
    """Every planned run of the pairs path as its wildcards."""
    if not plan.stage_enabled("experiments"):
        return []
    return [{"dataset": d, "model": r["model"]} for d in plan.experiments.pair_datasets() for r in plan.experiments.pairs_runs(d)]


def _final(axes: tuple[str, ...], healthfc: bool) -> Planned:
    """The final models of HealthFC's rows or the pairs datasets' (``experiments.final``), by the rule's wildcards."""
    def planned(plan: JobPlan) -> list[dict[str, str]]:
        rows = plan.experiments.final_rows() if plan.stage_enabled("experiments") else []
        keep = (lambda d: d == "healthfc") if healthfc else (lambda d: d in plan.experiments.pair_datasets())
        return unique({a: r[a] for a in axes} for r in rows if keep(r["dataset"]))
    return planned


class HealthFCPlan(Part):
    """HealthFC's experiments: the run matrix, each run's options and inputs, the retrieval and the final models."""

    def healthfc_experiment_inputs(self, system: str) -> dict[str, str]:
        """A run's inputs beyond the dataset and the folds: the retrieved evidence of its source, if any."""
        source = evidence_source(system)
        return {"evidence": f"{self.layout.evidence}/{source}.jsonl"} if source else {}

    def healthfc_retrieve_inputs(self, source: str) -> dict[str, str]:
        """A prepared evidence file of the source (its ``file``), when one replaces searching."""
        file = self.config["healthfc"]["retrieval"][source]["file"]
        return {"file": file} if file else {}

    def healthfc_ensemble_inputs(self, lang: str, model: str, system: str, fold: int | str) -> dict[str, list[str]]:
        return self.experiments.ensemble_inputs(model, lambda m: healthfc_run_path(lang, m, system, fold))

    def healthfc_inner_runs(self) -> list[HealthFCRun]:
        """Every (lang, member, system, fold) whose inner cross-validation a planned stack reads, once each."""
        stacked = [r for r in self.healthfc_runs() if self.models.is_stacked(r["model"])]
        runs: list[HealthFCRun] = [{**r, "model": m} for r in stacked for m in self.models.ensemble_members(r["model"])]
        return list({tuple(r.values()): r for r in runs}.values())

    def healthfc_folds_run(self) -> list[int]:
        folds = self.config["experiments"]["healthfc"]["folds"]
        n = self.config["healthfc"]["folds"]["n_splits"]
        folds = list(range(n)) if folds is None else [int(f) for f in folds]
        if bad := [f for f in folds if not 0 <= f < n]:
            raise ValueError(f"config: experiments.healthfc.folds {bad} outside 0..{n - 1} (healthfc.folds.n_splits)")
        return folds

    def healthfc_runs(self, systems: tuple[str, ...] | list[str] | None = None) -> list[HealthFCRun]:
        """Every HealthFC experiment as {lang, model, system, fold}."""
        hx = self.config["experiments"]["healthfc"]
        runs: list[HealthFCRun] = []
        for lang in hx["langs"]:
            for model in self.config["models"]["healthfc"][lang]:
                self.models.model_name(model)
                for system in self.healthfc_systems(lang):
                    if systems is not None and system not in systems:
                        continue
                    if not all(system_spec(system).runs_with(kind) for kind in self.models.model_kinds(model)):
                        continue  # e.g. the joint system needs an encoder
                    for fold in self.healthfc_folds_run():
                        runs.append({"lang": lang, "model": model, "system": system, "fold": fold})
        return runs

    def healthfc_systems(self, lang: str) -> list[str]:
        """The HealthFC systems run in ``lang``: experiments.healthfc.lang_systems.<lang>, else .systems."""
        hx = self.config["experiments"]["healthfc"]
        return list(hx["lang_systems"].get(lang) or hx["systems"])

    def healthfc_systems_run(self) -> list[str]:
        """Every HealthFC system some planned language runs, in the order of SYSTEMS."""
        run = {s for lang in self.config["experiments"]["healthfc"]["langs"] for s in self.healthfc_systems(lang)}
        return [s for s in SYSTEMS if s in run]

    def healthfc_run_dir(self, run: Mapping[str, Any]) -> str:
        return f"{self.layout.experiments}/{healthfc_run_path(**run)}"

    def healthfc_train(self, model: str, system: str) -> dict[str, object]:
        """One HealthFC run's training config: train < model_train[model] < system_train[system] < smoke."""
        hx, smoke = self.config["experiments"]["healthfc"], self.config["experiments"]["smoke"]
        return self.models.model_config(model, hx["train"], hx["model_train"].get(model), hx["system_train"].get(system), smoke)

    @job("compute", lambda plan: unique({**r, "model": m} for r in _healthfc_runs(plan)
                                        for m in plan.models.members(r["model"])),
         inputs=healthfc_experiment_inputs, resources=KIND_ROW)
    def healthfc_experiment(self, lang: str, model: str, system: str, fold: int | str) -> HealthFCFoldOptions:
        """One HealthFC run's whole options: its model's config and the system options its system depends on; the
        pipeline's ``evidence_train`` is the selector's whole model config (the run's < evidence_train < smoke)."""
        hx, smoke = self.config["experiments"]["healthfc"], self.config["experiments"]["smoke"]
        train = self.healthfc_train(model, system)
        system_options = {k: hx[k] for k in system_option_keys(system)}
        if "evidence_train" in system_options:
            system_options["evidence_train"] = self.models.model_config(model, train, hx["evidence_train"], smoke)
        options = {"system": system, "lang": lang, "fold": int(fold), "train": train, "system_options": system_options,
                   "checkpoint_dir": self.models.checkpoint_dir(healthfc_run_path(lang, model, system, fold))}
        return HealthFCFoldOptions.from_mapping(options, f"experiments.healthfc[{lang}/{model}/{system}/fold{fold}]")

    @job("light", lambda plan: unique(r for r in _healthfc_runs(plan) if plan.models.is_ensemble(r["model"])),
         inputs=healthfc_ensemble_inputs)
    def healthfc_ensemble(self, model: str) -> EnsembleOptions:
        return self.experiments.ensemble_options(model)

    @job("compute", lambda plan: unique(plan.healthfc.healthfc_inner_runs() if _healthfc_runs(plan) else []),
         inputs=healthfc_experiment_inputs, resources=INNER_CV)
    def healthfc_inner_cv(self, lang: str, model: str, system: str, fold: int | str) -> HealthFCInnerOptions:
        """A member's inner cross-validation in one HealthFC run: the run's options (no checkpoints), the folds."""
        run = self.healthfc_experiment(lang, model, system, fold).replace(checkpoint_dir=None)
        return HealthFCInnerOptions.from_mapping({"run": run, "inner": self.experiments.inner_folds_options()},
                     f"experiments.stacking[{healthfc_run_path(lang, model, system, fold)}]")

    @job("network", lambda plan: unique({"source": s} for r in _healthfc_runs(plan) if (s := evidence_source(r["system"]))),
         options_class=RetrieveOptions, inputs=healthfc_retrieve_inputs)
    def healthfc_retrieve(self, source: str) -> dict[str, object]:
        """One source's retrieval: ``healthfc.retrieval`` and the source's own section, completed by its registry."""
        r = self.config["healthfc"]["retrieval"]
        own = search_source(source).complete(dict(r[source]), self.config["cache_dir"])
        return {"source": source, "lang": r["lang"], "top_k": r["top_k"], "max_retries": r["max_retries"],
                "max_share_without_evidence": r["max_share_without_evidence"], "progress": r["progress"],
                "cache_dir": r["cache_dir"] or f"{self.config['cache_dir']}/healthfc/evidence", "source_options": own}

    @job("light", lambda plan: unique(_healthfc_runs(plan)), options_class=HealthFCScoreOptions)
    def healthfc_score(self, lang: str, system: str) -> dict[str, object]:
        """The scoring keys a run's scores depend on and the labels its system predicts."""
        sc = self.config["scoring"]
        evidence = {k: sc[k] for k in ("lambdas", "reported_lambda", "max_pred_evidence")} if system in EVIDENCE_SYSTEMS else None
        return {"system": system, "lang": lang, "labels": list(system_spec(system).labels), "abstain": sc["abstain"], "evidence": evidence}

    def healthfc_compared_systems(self) -> tuple[list[list[str]], list[str]]:
        run = set(self.healthfc_systems_run())
        pairs = [p for p in self.config["scoring"]["healthfc_comparisons"] if p[0] in run and p[1] in run]
        return pairs, sorted({s for p in pairs for s in p}, key=SYSTEMS.index)

    def healthfc_final_inputs(self, lang: str, model: str, system: str) -> dict[str, object]:
        """The row's scores per fold, each member's infos, a stack's members' predictions and the system's evidence."""
        folds, members = self.healthfc_folds_run(), self.models.members(model)

        def files(m: str, name: str) -> list[str]:
            return [f"{self.layout.experiments}/{healthfc_run_path(lang, m, system, f)}/{name}" for f in folds]

        inputs: dict[str, object] = {"scores": files(model, "scores.json"), **self.healthfc_experiment_inputs(system)}
        inputs.update({f"info_{m}": files(m, "info.json") for m in members})
        if self.models.is_stacked(model):
            inputs.update({f"oof_{m}": files(m, "predictions.jsonl") for m in members})
        return inputs

    @job("compute", _final(("lang", "model", "system"), healthfc=True), inputs=healthfc_final_inputs,
         resources=final_resources)
    def healthfc_final(self, lang: str, model: str, system: str) -> HealthFCFinalOptions:
        """A HealthFC row's final model: each member's run as the row's cross-validation has it, and its ensemble."""
        fold = self.healthfc_folds_run()[0]
        return self.experiments.final_options(
            HealthFCFinalOptions, f"{model} {system} ({lang})", model, f"healthfc/{lang}/{model}/{system}",
            lambda m: self.healthfc_experiment(lang, m, system, fold).replace(fold=-1, checkpoint_dir=None))


class ExperimentsPlan(Part):
    """The experiments of the pairs datasets (CliniFact's every system, the declared datasets), the ensembles and the
    final models of the pairs datasets."""

    def ensemble_options(self, model: str) -> EnsembleOptions:
        """An ensemble job's options: its members, method, weights (1.0 each unless set), ``experiments.stacking``."""
        members, ensemble = self.models.ensemble_members(model), self.models.ensembles[model]
        weights = [1.0] * len(members) if ensemble["weights"] is None else list(ensemble["weights"])
        if len(weights) != len(members):
            raise ValueError(f"config: models.ensembles.{model}.weights has {len(weights)} values for "
                             f"{len(members)} members")
        options = {"members": members, "method": ensemble["method"], "weights": weights,
                   "stacking": dict(self.config["experiments"]["stacking"])}
        return EnsembleOptions.from_mapping(options, f"models.ensembles.{model}")

    def inner_folds_options(self) -> dict[str, object]:
        st = self.config["experiments"]["stacking"]
        return {"inner_folds": st["inner_folds"], "seed": st["seed"]}

    @property
    def inner_cv_dir(self) -> str:
        return f"{self.layout.experiments}/inner_cv"

    def ensemble_inputs(self, model: str, run: Callable[[str], str]) -> dict[str, list[str]]:
        """An ensemble run's inputs: its members' predictions (``run(member)``: its folder below the experiments')
        and, for a stack, their inner cross-validation's (the same folder below :attr:`inner_cv_dir`)."""
        members = self.models.ensemble_members(model)
        inputs = {"predictions": [f"{self.layout.experiments}/{run(m)}/predictions.jsonl" for m in members]}
        if self.models.is_stacked(model):
            inputs["inner"] = [f"{self.inner_cv_dir}/{run(m)}/predictions.jsonl" for m in members]
        return inputs

    def pairs_ensemble_inputs(self, dataset: str, model: str) -> dict[str, list[str]]:
        return self.ensemble_inputs(model, lambda m: f"{dataset}/{m}")

    def final_options(self, cls: type[O], row: str, model: str, where: str, run: Callable[[str], Options]) -> O:
        """A final model's options (``cls``): each member's ``run(member)`` and the ensemble of a row's ensemble."""
        members = self.models.members(model)
        options = {"row": row, "members": members, "runs": [run(m) for m in members],
                   "ensemble": self.ensemble_options(model) if self.models.is_ensemble(model) else None}
        return cls.from_mapping(options, f"experiments.final[{where}]")

    def pairs_inner_models(self, dataset: str) -> list[str]:
        """Every member whose inner cross-validation on ``dataset`` a planned stacked ensemble reads."""
        runs = self.pairs_runs(dataset) if self.stage_enabled("experiments") else []
        return list(dict.fromkeys(m for r in runs if self.models.is_stacked(r["model"]) for m in self.models.ensemble_members(r["model"])))

    @property
    def clinifact_pairs_dir(self) -> str:
        return self.layout.under("clinifact/release" if self.config["clinifact"]["pairs_source"] == "release" else "clinifact/pairs")

    def pairs_datasets(self) -> dict[str, PairsDataset]:
        """Every dataset of the one discriminative path by name: CliniFact, then each declared dataset."""
        out = {"clinifact": PairsDataset(
            "clinifact", "CliniFact", CLINIFACT_PAIRS, {s: f"{self.clinifact_pairs_dir}/{s}_set.csv" for s in SPLITS}, {},
            "experiments.clinifact", lambda: [r for r in self.clinifact_runs() if r["system"] == ensembling_system().name], self.clinifact_runs)}
        for name, entry in self.config["datasets"].items():
            classes = tuple(dict.fromkeys(c for c in entry["labels"].values() if c is not None))
            runs = functools.partial(self._declared_runs, name)
            out[name] = PairsDataset(name, entry["title"] or name, imported_pairs(name, classes, title=entry["fields"]["title"] is not None),
                                     {s: self.datasets.dataset_split_file(name, s) for s in SPLITS}, entry["train"],
                                     f"datasets.{name}", runs, runs)
        return out

    def pairs_dataset(self, name: str) -> PairsDataset:
        """The pairs dataset called ``name``; another name is a ValueError naming the known ones."""
        return lookup(self.pairs_datasets(), name, "pairs dataset")

    def pair_dataset_pattern(self) -> str:
        """The rules' ``dataset`` wildcard: exactly the pairs datasets."""
        return "|".join(re.escape(d) for d in self.pair_datasets())

    def pair_datasets(self) -> list[str]:
        return list(self.pairs_datasets())

    def pairs_split_inputs(self, dataset: str) -> dict[str, str]:
        return dict(self.pairs_dataset(dataset).splits)

    @job("compute", lambda plan: unique({"dataset": r["dataset"], "model": m} for r in _pairs_runs(plan)
                                        for m in plan.models.members(r["model"])),
         inputs=pairs_split_inputs, resources=KIND_ROW)
    def pairs_experiment(self, dataset: str, model: str) -> PairsTrainOptions:
        """A discriminative run's whole options: ``experiments.clinifact.train`` < ``model_train[model]`` < a declared
        dataset's ``datasets.<name>.train`` < the smoke caps."""
        cx = self.config["experiments"]["clinifact"]
        ds = self.pairs_dataset(dataset)
        train = self.models.model_config(model, cx["train"], layered(cx["model_train"].get(model) or {}, ds.train),
                                         self.config["experiments"]["smoke"])
        options = {"data": ds.data, "train": train, "include_title": cx["include_title"],
                   "predict_splits": cx["predict_splits"],
                   "checkpoint_dir": self.models.checkpoint_dir(f"{dataset}/{model}")}
        return PairsTrainOptions.from_mapping(options, f"{ds.key}[{model}]")

    @job("light", lambda plan: unique(r for r in _pairs_runs(plan) if plan.models.is_ensemble(r["model"])), inputs=pairs_ensemble_inputs)
    def pairs_ensemble(self, model: str) -> EnsembleOptions:
        return self.ensemble_options(model)

    @job("compute", lambda plan: unique({"dataset": d, "model": m} for d in plan.experiments.pair_datasets()
                                        for m in plan.experiments.pairs_inner_models(d)),
         inputs=lambda self, dataset: {s: f for s, f in self.pairs_split_inputs(dataset).items() if s != "test"},
         resources=INNER_CV)
    def pairs_inner_cv(self, dataset: str, model: str) -> PairsInnerOptions:
        """A member's inner cross-validation over a pairs dataset's train + validation (no checkpoints)."""
        run = self.pairs_experiment(dataset, model).replace(checkpoint_dir=None)
        return PairsInnerOptions.from_mapping({"run": run, "inner": self.inner_folds_options()},
                                              f"experiments.stacking[{dataset}/{model}]")

    def pairs_run_dir(self, dataset: str, model: str) -> str:
        return f"{self.layout.experiments}/{dataset}/{model}"

    def _run(self, run_dir: str, model: str, system: str) -> CliniFactRun:
        self.models.model_name(model)
        return {"model": model, "system": system, "dir": run_dir,
                "benchmark": self.layout.experiment_timings + run_dir[len(self.layout.experiments):] + ".tsv"}

    def _declared_runs(self, dataset: str) -> list[CliniFactRun]:
        return [self._run(self.pairs_run_dir(dataset, m), m, ensembling_system().name) for m in self.config["datasets"][dataset]["models"]]

    def pairs_runs(self, dataset: str) -> list[CliniFactRun]:
        return self.pairs_dataset(dataset).runs()

    @staticmethod
    def run_entries(runs: Sequence[CliniFactRun]) -> list[dict[str, object]]:
        return [{"model": r["model"], "system": r["system"]} for r in runs]

    def pairs_score_options(self, system: str, dataset: str) -> dict[str, object]:
        bs = self.config["scoring"]["bootstrap"]
        return {"dataset": dataset, "classes": list(self.pairs_dataset(dataset).data.classes), "system": system,
                "n_resamples": bs["n_resamples"], "seed": bs["seed"]}

    @job("light", lambda plan: unique(_pairs_runs(plan)), options_class=PairsScoreOptions)
    def pairs_score(self, dataset: str) -> dict[str, object]:
        return self.pairs_score_options(ensembling_system().name, dataset)

    def _model_section(self, section: str, overrides: str, model: str) -> dict[str, object]:
        """``experiments.clinifact.<section>`` < ``experiments.clinifact.<overrides>[model]`` (keys of the section only)."""
        cx = self.config["experiments"]["clinifact"]
        over = cx[overrides].get(model) or {}
        if unknown := sorted(set(over) - set(cx[section])):
            raise ValueError(f"config: experiments.clinifact.{overrides}.{model}.{unknown[0]} is not a key of experiments.clinifact.{section} "
                             f"({', '.join(sorted(cx[section]))})")
        return layered(cx[section], over)

    def clinifact_zero_shot_inputs(self) -> dict[str, str]:
        splits = self.pairs_split_inputs("clinifact")
        return {s: splits[s] for s in self.config["experiments"]["clinifact"]["zero_shot"]["splits"]}

    @job(ZERO_SHOT.placement, _system_models(ZERO_SHOT.name), inputs=clinifact_zero_shot_inputs,
         resources=ModelRow(ZERO_SHOT), local_model=_local_model(ZERO_SHOT))
    def clinifact_zero_shot(self, model: str) -> ZeroShotOptions:
        zs = self._model_section("zero_shot", "model_zero_shot", model)
        options = {**zs, "model": self.models.model_name(model), "cache_dir": zs["cache_dir"] or f"{self.config['cache_dir']}/completions"}
        return ZeroShotOptions.from_mapping(options, f"experiments.clinifact.zero_shot[{model}]")

    @job("light", _system_models(ZERO_SHOT.name), options_class=PairsScoreOptions)
    def clinifact_zero_shot_score(self, model: str) -> dict[str, object]:
        return self.pairs_score_options(ZERO_SHOT.name, "clinifact")

    @job(FINE_TUNED.placement, _system_models(FINE_TUNED.name), inputs=lambda self: self.pairs_split_inputs("clinifact"),
         resources=ModelRow(FINE_TUNED), local_model=_local_model(FINE_TUNED))
    def clinifact_fine_tune(self, model: str) -> FineTuneOptions:
        """A fine-tuned generative run: fine_tune < model_fine_tune[model] < the smoke caps that fine_tune has."""
        ft = self._model_section("fine_tune", "model_fine_tune", model)
        smoke = {k: v for k, v in self.config["experiments"]["smoke"].items() if k in ft}
        options = {**layered(ft, smoke), "model": self.models.model_name(model),
                   "save_dir": f"{self.models.checkpoints}/clinifact/fine_tuned/{model}"}
        return FineTuneOptions.from_mapping(options, f"experiments.clinifact.fine_tune[{model}]")

    @job("light", _system_models(FINE_TUNED.name), options_class=PairsScoreOptions)
    def clinifact_fine_tune_score(self, model: str) -> dict[str, object]:
        return self.pairs_score_options(FINE_TUNED.name, "clinifact")

    def clinifact_runs(self) -> list[CliniFactRun]:
        """Every CliniFact run: each registered system's models, in the order of ``CLINIFACT_SYSTEMS``."""
        models = self.config["models"]["clinifact"]
        return [self._run(spec.run_dir(self.layout.experiments, m), m, spec.name) for spec in CLINIFACT_SYSTEMS.values() for m in models[spec.name]]

    def clinifact_table_entries(self) -> list[dict[str, object]]:
        return self.run_entries(self.clinifact_runs())

    def final_rows(self) -> list[dict[str, str]]:
        """``experiments.final``, each row with its defaults (HealthFC: oracle, en; others: discriminative, no lang)."""
        return [{"dataset": r["dataset"], "model": r["model"],
                 "system": r.get("system") or ("oracle" if r["dataset"] == "healthfc" else "discriminative"),
                 "lang": r.get("lang") or "en" if r["dataset"] == "healthfc" else ""}
                for r in self.config["experiments"]["final"]]

    def pairs_final_inputs(self, dataset: str, model: str) -> dict[str, object]:
        inputs: dict[str, object] = {**self.pairs_split_inputs(dataset), "scores": f"{self.pairs_run_dir(dataset, model)}/scores.json"}
        if self.models.is_stacked(model):
            inputs.update({f"oof_{m}": f"{self.inner_cv_dir}/{dataset}/{m}/predictions.jsonl"
                           for m in self.models.ensemble_members(model)})
        return inputs

    @job("compute", _final(("dataset", "model"), healthfc=False), inputs=pairs_final_inputs,
         resources=final_resources)
    def pairs_final(self, dataset: str, model: str) -> PairsFinalOptions:
        return self.final_options(PairsFinalOptions, model, model, f"{dataset}/{model}",
                                  lambda m: self.pairs_experiment(dataset, m).replace(checkpoint_dir=None))

