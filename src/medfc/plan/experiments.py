"""The experiments' plan: the run matrix of every table (dataset × lang × model × system × fold), the
models behind the aliases, and each job's whole options, built and typed here: a model's config is
chosen by its kind (:func:`medfc.experiments.options.model_config_class`) and an encoder's training config
is layered here, once, as ``train`` < ``model_train[model]`` < ``system_train[system]`` < ``smoke`` (and,
for the pipeline's evidence selector, that < ``evidence_train`` < ``smoke``). Each ``*_options`` method
builds one job's options, typed by its rule's record (its ``options_class``) where the method gives the config's
mapping, so a missing or wrong key stops the plan (:meth:`medfc.plan.Plan.build_jobs`) before any job runs or
reads data; the job receives that object serialised (:meth:`medfc.plan.Plan.options`). :func:`experiment_jobs` declares the stage's rules as records of the job table
(:mod:`medfc.plan.jobs`): which method builds each rule's options and inputs, and which jobs are planned."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, TypeVar

from medfc.common.offline_models import offline_model_problem
from medfc.common.options import Options
from medfc.common.search_sources import search_source, wildcard_pattern
from medfc.experiments.aliases import ALIAS_HINT, model_aliases
from medfc.experiments.clinifact_systems import (
    CLINIFACT_SYSTEMS,
    SYSTEM_RULE,
    SYSTEM_SCORE_RULE,
    CliniFactSystem,
    CliniFactSystemOptions,
    clinifact_system,
    ensembling_system,
    runner_systems,
)
from medfc.experiments.clinifact_systems import wildcard_pattern as clinifact_wildcard_pattern
from medfc.experiments.ensemble import EnsembleOptions
from medfc.experiments.stacking import CliniFactInnerOptions, HealthFCInnerOptions
from medfc.experiments.options import CliniFactTrainOptions, FineTuneOptions, ZeroShotOptions, base_model, model_config_class
from medfc.experiments.systems import (
    EVIDENCE_SYSTEMS,
    OPEN_DOMAIN_SYSTEMS,
    SYSTEMS,
    TABLE3_SYSTEMS,
    TABLE5_SYSTEMS,
    HealthFCFoldOptions,
    evidence_source,
    system_option_keys,
)
from medfc.experiments.systems import system as system_spec
from medfc.figures.options import Fig3Options
from medfc.healthfc.options import RetrieveOptions
from medfc.plan import resources
from medfc.plan.hints import did_you_mean
from medfc.plan.jobs import JobSpec, call, model_resources, one_job, unique
from medfc.plan.layout import PAPERS, Layout, workflow_file
from medfc.scoring.options import CliniFactScoreOptions, HealthFCScoreOptions
from medfc.tables.options import TABLE_OPTIONS

O = TypeVar("O", bound=Options)

HFC_TABLES = {"healthfc_table3": TABLE3_SYSTEMS, "healthfc_table5": TABLE5_SYSTEMS, "healthfc_open_domain": OPEN_DOMAIN_SYSTEMS}
HEALTHFC_WILDCARDS = {"source": wildcard_pattern()}  # healthfc_retrieve's {source}: the registered search sources
CLINIFACT_WILDCARDS = {"system": clinifact_wildcard_pattern()}  # clinifact_system's {system}: the systems with a runner of their own
TIME_TABLES = ("healthfc_times", "clinifact_times")  # each row's wall and CPU seconds (experiments.time_tables)
INNER_CV_ROW = " inner CV"  # a time table's row of a stacked member's inner cross-validation: "<member> inner CV"
TABLES = (*HFC_TABLES, "healthfc_significance", "clinifact_table8", "clinifact_significance", *TIME_TABLES)


def typed(cls: type[O], options: Mapping[str, Any], where: str) -> O:
    """The ``cls`` that :meth:`~medfc.common.options.Options.from_mapping` builds from ``options``: a missing,
    unknown or mistyped key stops the plan naming it (``where``: the config key it comes from). The job gets this
    object, serialised (:meth:`medfc.plan.Plan.options`)."""
    return cls.from_mapping(options, where=where)


def layered(*layers: dict[str, Any] | None) -> dict[str, Any]:
    """Config sections merged left to right (later layers override earlier keys)."""
    out: dict[str, Any] = {}
    for layer in layers:
        out.update(layer or {})
    return out


def named_models(config: dict[str, Any]) -> list[str]:
    """Every model name the config's model lists use (``models.healthfc.<lang>``, ``models.clinifact.<system>``,
    the ensembles' members) and the names its per-model sections are keyed by (``experiments.<dataset>.model_train``
    and ``model_zero_shot`` / ``model_fine_tune``): where a Hugging Face model id may stand for itself
    (:func:`medfc.experiments.aliases.model_aliases`). Reads the config as written or filled in."""
    def mapping(node: Any, key: str) -> dict[str, Any]:
        value = node.get(key) if isinstance(node, dict) else None
        return value if isinstance(value, dict) else {}

    def names(value: Any) -> list[str]:
        return [v for v in value if isinstance(v, str)] if isinstance(value, list) else []

    models = mapping(config, "models")
    out = [n for group in ("healthfc", "clinifact") for lst in mapping(models, group).values() for n in names(lst)]
    out += [n for ens in mapping(models, "ensembles").values() if isinstance(ens, dict) for n in names(ens.get("members"))]
    experiments = mapping(config, "experiments")
    for dataset in ("healthfc", "clinifact"):
        section = mapping(experiments, dataset)
        out += list(mapping(section, "model_train"))
        out += [n for sub in ("zero_shot", "fine_tune") for n in mapping(section, f"model_{sub}")]
    return list(dict.fromkeys(out))


def misplaced_model_train(config: dict[str, Any]) -> str | None:
    """An ``experiments.<dataset>.model_train`` entry that no job would read, as one line naming it: one for
    an ensemble, for a name that is no model alias, or for an alias whose kind is not fine-tuned (TF-IDF,
    GBM, frozen: their keys go in ``models.options``). Reads the config as written (the schema's defaults
    need not be filled in), so the workflow's validation can say this before the schema rejects a TF-IDF
    key as an unknown training key."""
    def mapping(node: Any, key: str) -> dict[str, Any]:  # a wrongly typed section is the schema's to name
        value = node.get(key) if isinstance(node, dict) else None
        return value if isinstance(value, dict) else {}

    models = mapping(config, "models")
    aliases = model_aliases({k: v for k, v in mapping(models, "aliases").items() if isinstance(v, str)}, named_models(config))
    ensembles = mapping(models, "ensembles")
    for dataset in ("healthfc", "clinifact"):
        for alias in mapping(mapping(mapping(config, "experiments"), dataset), "model_train"):
            where = f"config: experiments.{dataset}.model_train.{alias}"
            if alias in ensembles:
                return f"{where}: {alias!r} is an ensemble, which trains nothing; set its members' keys"
            if alias not in aliases:
                return (f"{where}: {alias!r} is not in models.aliases{did_you_mean(alias, aliases)} (models.aliases: {', '.join(sorted(aliases))})"
                        f"{ALIAS_HINT}")
            try:
                cls = model_config_class(aliases[alias])
            except ValueError:
                continue  # the plan names a model name that is no model
            if cls.section is not None:
                return (f"{where}: {alias} ({aliases[alias]}) is not fine-tuned, so training keys do not apply; "
                        f"its own keys of experiments.{cls.section} go in models.options.{alias}")
    return None


class ExperimentsPlan:
    config: dict[str, Any]

    def __init__(self, config: dict[str, Any], base_dir: str | None = None):
        """``base_dir``: the workflow's checkout, where its shipped files are when the run's directory lacks them."""
        self.config = config
        self.aliases = model_aliases(config["models"]["aliases"], named_models(config))  # a hub id (org/name) stands for itself
        self.layout = Layout(config["results_dir"])
        self.papers = workflow_file(PAPERS, base_dir)

    # ------------------------------------------------------------------------------------ models
    @property
    def ensembles(self) -> dict[str, Any]:
        return self.config["models"]["ensembles"]

    def is_ensemble(self, name: str) -> bool:
        return name in self.ensembles

    def ensemble_members(self, name: str) -> list[str]:
        return list(self.ensembles[name]["members"])

    def ensemble_weights(self, name: str) -> list[float]:
        weights = self.ensembles[name]["weights"]
        members = self.ensemble_members(name)
        if weights is not None and len(weights) != len(members):
            raise ValueError(f"config: models.ensembles.{name}.weights has {len(weights)} values for {len(members)} members")
        return list(weights) if weights is not None else [1.0] * len(members)

    def ensemble_method(self, name: str) -> str:
        """``stack`` (learned stacking on inner-CV predictions) or ``average``."""
        return self.ensembles[name]["method"]

    def is_stacked(self, name: str) -> bool:
        return self.is_ensemble(name) and self.ensemble_method(name) == "stack"

    def ensemble_options(self, model: str) -> EnsembleOptions:
        """An ensemble job's options: its members (the order of its prediction inputs), its method, the
        weights of an average, ``experiments.stacking`` for a stack's meta-model."""
        options = {"members": self.ensemble_members(model), "method": self.ensemble_method(model), "weights": self.ensemble_weights(model),
                   "stacking": dict(self.config["experiments"]["stacking"])}
        return typed(EnsembleOptions, options, f"models.ensembles.{model}")

    def inner_folds_options(self) -> dict[str, Any]:
        """The keys of ``experiments.stacking`` an inner cross-validation depends on (the meta-model's rerun no member)."""
        st = self.config["experiments"]["stacking"]
        return {"inner_folds": st["inner_folds"], "seed": st["seed"]}

    @property
    def inner_cv_dir(self) -> str:
        """Where the stacked ensembles' members write their out-of-fold predictions (rules ``*_inner_cv``)."""
        return f"{self.layout.experiments}/inner_cv"

    def healthfc_inner_cv_dir(self, lang: str, model: str, system: str, fold: int | str) -> str:
        return f"{self.inner_cv_dir}/healthfc/{lang}/{model}/{system}/fold{fold}"

    def clinifact_inner_cv_dir(self, model: str) -> str:
        return f"{self.inner_cv_dir}/clinifact/{model}"

    def healthfc_ensemble_inputs(self, lang: str, model: str, system: str, fold: int | str) -> dict[str, list[str]]:
        """An ensemble run's inputs: its members' predictions of the run's fold and, for a stack, their
        out-of-fold predictions over its training claims (each in member order)."""
        members = self.ensemble_members(model)
        inputs = {"predictions": [f"{self.layout.experiments}/healthfc/{lang}/{m}/{system}/fold{fold}/predictions.jsonl" for m in members]}
        if self.is_stacked(model):
            inputs["inner"] = [f"{self.healthfc_inner_cv_dir(lang, m, system, fold)}/predictions.jsonl" for m in members]
        return inputs

    def clinifact_ensemble_inputs(self, model: str) -> dict[str, list[str]]:
        """A CliniFact ensemble's inputs: its members' predictions and, for a stack, their out-of-fold ones."""
        members = self.ensemble_members(model)
        inputs = {"predictions": [f"{ensembling_system().run_dir(self.layout.experiments, m)}/predictions.jsonl" for m in members]}
        if self.is_stacked(model):
            inputs["inner"] = [f"{self.clinifact_inner_cv_dir(m)}/predictions.jsonl" for m in members]
        return inputs

    def healthfc_inner_cv_options(self, lang: str, model: str, system: str, fold: int | str) -> HealthFCInnerOptions:
        """A member's inner cross-validation in one HealthFC run: the run's options as ``healthfc_experiment``
        has them (no checkpoints: nothing of it is kept) and the inner folds."""
        run = self.healthfc_experiment_options(lang, model, system, fold).replace(checkpoint_dir=None)
        return typed(HealthFCInnerOptions, {"run": run, "inner": self.inner_folds_options()},
                     f"experiments.stacking[healthfc/{lang}/{model}/{system}/fold{fold}]")

    def clinifact_inner_cv_options(self, model: str) -> CliniFactInnerOptions:
        """A member's inner cross-validation over CliniFact's train + validation (no checkpoints)."""
        run = self.clinifact_experiment_options(model).replace(checkpoint_dir=None)
        return typed(CliniFactInnerOptions, {"run": run, "inner": self.inner_folds_options()}, f"experiments.stacking[clinifact/{model}]")

    def healthfc_inner_runs(self) -> list[dict[str, Any]]:
        """Every (lang, member, system, fold) whose inner cross-validation a planned stacked ensemble reads,
        once each however many ensembles share the member."""
        seen: dict[tuple, dict[str, Any]] = {}
        for r in self.healthfc_runs():
            if self.is_stacked(r["model"]):
                for m in self.ensemble_members(r["model"]):
                    seen.setdefault((r["lang"], m, r["system"], r["fold"]), {**r, "model": m})
        return list(seen.values())

    def clinifact_inner_models(self) -> list[str]:
        """Every member whose CliniFact inner cross-validation a planned stacked ensemble reads."""
        runs = self.clinifact_runs() if self.stage_enabled("experiments") else []
        return list(dict.fromkeys(m for r in runs if clinifact_system(r["system"]).ensemble_rule and self.is_stacked(r["model"])
                                  for m in self.ensemble_members(r["model"])))

    def model_name(self, alias: str) -> str:
        """A model alias (used in paths) → its hub name, local path, offline: or sklearn: name (resolved in
        the library); an ensemble → ensemble:<members>."""
        if self.is_ensemble(alias):
            return "ensemble:" + "+".join(self.model_name(m) for m in self.ensemble_members(alias))
        if alias not in self.aliases:
            raise ValueError(f"config: model {alias!r} is not defined in models.aliases ({sorted(self.aliases)}) nor models.ensembles"
                             f"{ALIAS_HINT}")
        return self.aliases[alias]

    def model_kinds(self, alias: str) -> set[str]:
        """The kinds of a model (:data:`medfc.experiments.options.MODEL_CONFIGS`): an ensemble's, every member's."""
        if self.is_ensemble(alias):
            return {k for m in self.ensemble_members(alias) for k in self.model_kinds(m)}
        return {self.model_class(alias).kind}

    def check_offline_models(self) -> None:
        """A planned ``offline:`` model that is unknown or not installed (offline:mpnet is opt-in) stops the
        run at once, naming the command that installs it; so does one a kind's options name (``model_keys``:
        gbm's ``embedding_model``), naming the key too (that such a key names an encoder, not a model alias, is
        :meth:`check_model_options`'s, for every alias)."""
        planned = [(f"models.healthfc.{r['lang']}", r["model"]) for r in self.healthfc_runs()]
        planned += [(f"models.clinifact.{r['system']}", r["model"]) for r in self.clinifact_runs()]
        for key, model in dict.fromkeys(planned):
            for alias in self.ensemble_members(model) if self.is_ensemble(model) else [model]:
                name = self.model_name(alias)
                self.model_class(alias)  # a model naming no kind stops here, naming it
                loads = [(base_model(name), "")]  # the pretrained model it loads (frozen:offline:mpnet loads offline:mpnet)
                for where, value in self.model_key_values(alias):  # and the ones its options name (gbm's embedding_model)
                    if value:
                        loads.append((value, f" (its {where})"))
                for loaded, via in loads:
                    problem = loaded.startswith("offline:") and offline_model_problem(loaded)
                    if problem:
                        raise ValueError(f"config: {key} plans {alias} ({name}{via}): {problem}")

    def check_model_options(self) -> None:
        """``models.options``: each entry names a model alias (not an ensemble) of a kind with a config
        section (tfidf, gbm, frozen). Its keys and values are checked against that section's schema by
        :func:`medfc.plan.config_errors.models_options_error`, which the workflow's validation runs before
        this; a plan checked without it finds a bad key when :meth:`model_config` is built into a job's
        options. ``experiments.<dataset>.model_train`` entries must name fine-tuned encoders
        (:func:`misplaced_model_train`): any other entry would never be read. A key naming the pretrained encoder
        a kind loads (``model_keys``: gbm's ``embedding_model``) must not name a model alias or an ensemble,
        for every alias of such a kind, planned or not."""
        for alias in self.config["models"]["options"]:
            if self.is_ensemble(alias):
                raise ValueError(f"config: models.options.{alias}: {alias!r} is an ensemble; set its members' options "
                                 f"({', '.join(self.ensemble_members(alias))})")
            if alias not in self.aliases:
                raise ValueError(f"config: models.options.{alias}: {alias!r} is not in models.aliases{did_you_mean(alias, self.aliases)} "
                                 f"(models.aliases: {', '.join(sorted(self.aliases))})")
            if self.model_class(alias).section is None:
                raise ValueError(f"config: models.options.{alias}: {alias} ({self.model_name(alias)}) is a fine-tuned encoder; "
                                 f"its training keys go in experiments.healthfc.model_train.{alias} or experiments.clinifact.model_train.{alias}")
        mistake = misplaced_model_train(self.config)
        if mistake:
            raise ValueError(mistake)
        resources.check_model_resources(self)
        for alias in self.aliases:
            for where, value in self.model_key_values(alias):
                if value in self.aliases or value in self.ensembles:
                    target = self.aliases.get(value, "")
                    hint = base_model(target) if target else ""
                    what = f"a model alias ({target})" if target else "an ensemble"
                    raise ValueError(f"config: {where}: {value!r} is {what}, not an encoder; "
                                     f"name the encoder itself{f', e.g. {hint}' if hint else ''}")

    def model_key_values(self, alias: str) -> list[tuple[str, Any]]:
        """(the key that sets it, its value) of each key naming a pretrained model the alias's kind loads
        (``model_keys``: gbm's ``embedding_model``), from the alias's ``models.options`` or else its kind's
        section; none for other kinds, or for an alias whose model names no kind (reported where it is planned)."""
        try:
            cls = self.model_class(alias)
        except ValueError:
            return []
        keys = getattr(cls, "model_keys", ())
        if not keys:
            return []
        own = self.config["models"]["options"].get(alias) or {}
        section = self.config["experiments"][cls.section]
        return [(f"models.options.{alias}.{k}", own[k]) if k in own else (f"experiments.{cls.section}.{k}", section.get(k)) for k in keys]

    def model_class(self, alias: str) -> type:
        """The options class of a model alias's kind (:func:`medfc.experiments.options.model_config_class`)."""
        try:
            return model_config_class(self.model_name(alias))
        except ValueError as exc:
            raise ValueError(f"config: model {alias!r} is {exc}") from None

    def model_alias_pattern(self, ensembles: bool) -> str:
        """A wildcard regex matching exactly the model aliases (ensembles=False) or the ensemble names."""
        names = sorted(self.ensembles if ensembles else self.aliases)
        return "|".join(re.escape(n) for n in names) or "(?!)"

    @property
    def checkpoints(self) -> str:
        """The folder of kept models: ``experiments.checkpoint_dir``, by default the run's own ``<results_dir>/checkpoints``."""
        return self.config["experiments"]["checkpoint_dir"] or self.layout.under("checkpoints")

    def checkpoint_dir(self, sub: str) -> str | None:
        """Where a run keeps its checkpoints; None (kept in memory, nothing written) unless keep_checkpoints."""
        return f"{self.checkpoints}/{sub}" if self.config["experiments"]["keep_checkpoints"] else None

    def model_config(self, alias: str, *train_layers: dict[str, Any] | None) -> dict[str, Any]:
        """A model's whole config, tagged with its kind: an encoder's training config (the layers merged), or
        the config section of a kind that has one (``experiments.tfidf``, ``experiments.gbm``,
        ``experiments.frozen``) under the alias's own ``models.options``, with the model's name; a kind's
        directories under the workflow's cache (``cache_dirs``: the embeddings of a frozen encoder, or of gbm's
        ``embedding_model``) resolved when null, for a model that loads an encoder."""
        name = self.model_name(alias)
        cls = self.model_class(alias)
        if cls.section:
            base = layered(self.config["experiments"][cls.section], self.config["models"]["options"].get(alias))
        else:
            base = layered(*train_layers)
        loads = base_model(name) or any(base[k] for k in getattr(cls, "model_keys", ()))  # only a kind that loads a model keeps its vectors
        for key, sub in getattr(cls, "cache_dirs", {}).items() if loads else ():
            if base[key] is None:
                base[key] = f"{self.config['cache_dir']}/{sub}"
        return {"kind": cls.kind, **base, "model": name}

    # ---------------------------------------------------------------------------------- HealthFC
    def healthfc_folds_run(self) -> list[int]:
        folds = self.config["experiments"]["healthfc"]["folds"]
        n = self.config["healthfc"]["folds"]["n_splits"]
        folds = list(range(n)) if folds is None else [int(f) for f in folds]
        bad = [f for f in folds if not 0 <= f < n]
        if bad:
            raise ValueError(f"config: experiments.healthfc.folds {bad} outside 0..{n - 1} (healthfc.folds.n_splits)")
        return folds

    def healthfc_runs(self, systems: tuple[str, ...] | list[str] | None = None) -> list[dict[str, Any]]:
        """Every HealthFC experiment as {lang, model, system, fold}."""
        hx = self.config["experiments"]["healthfc"]
        runs = []
        for lang in hx["langs"]:
            for model in self.config["models"]["healthfc"][lang]:
                self.model_name(model)
                for system in self.healthfc_systems(lang):
                    if systems is not None and system not in systems:
                        continue
                    if not all(system_spec(system).runs_with(kind) for kind in self.model_kinds(model)):
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

    def healthfc_run_dir(self, run: dict[str, Any]) -> str:
        return f"{self.layout.experiments}/healthfc/{run['lang']}/{run['model']}/{run['system']}/fold{run['fold']}"

    def healthfc_run_benchmark(self, run: dict[str, Any]) -> str:
        """The benchmark file (wall and CPU seconds) of one HealthFC run's job."""
        return f"{self.layout.experiment_timings}/healthfc/{run['lang']}/{run['model']}/{run['system']}/fold{run['fold']}.tsv"

    def healthfc_train(self, model: str, system: str) -> dict[str, Any]:
        """One HealthFC run's training config: train < model_train[model] < system_train[system] < smoke."""
        hx, smoke = self.config["experiments"]["healthfc"], self.config["experiments"]["smoke"]
        return self.model_config(model, hx["train"], hx["model_train"].get(model), hx["system_train"].get(system), smoke)

    def healthfc_experiment_options(self, lang: str, model: str, system: str, fold: int | str) -> HealthFCFoldOptions:
        """One HealthFC run's whole options (:class:`~medfc.experiments.systems.HealthFCFoldOptions`): its
        model's config and just the system options this system depends on; the pipeline's ``evidence_train``
        is the selector's whole model config (an encoder's: the run's < evidence_train < smoke; a baseline's:
        the run's own)."""
        hx, smoke = self.config["experiments"]["healthfc"], self.config["experiments"]["smoke"]
        train = self.healthfc_train(model, system)
        system_options = {k: hx[k] for k in system_option_keys(system)}
        if "evidence_train" in system_options:
            system_options["evidence_train"] = self.model_config(model, train, hx["evidence_train"], smoke)
        options = {
            "system": system,
            "lang": lang,
            "fold": int(fold),
            "train": train,
            "system_options": system_options,
            "checkpoint_dir": self.checkpoint_dir(f"healthfc/{lang}/{model}/{system}/fold{fold}"),
        }
        return typed(HealthFCFoldOptions, options, f"experiments.healthfc[{lang}/{model}/{system}/fold{fold}]")

    def healthfc_evidence_file(self, source: str) -> str:
        """The retrieved-evidence artifact of one source (rule healthfc_retrieve)."""
        return f"{self.layout.evidence}/{source}.jsonl"

    def healthfc_experiment_inputs(self, system: str) -> dict[str, str]:
        """A run's inputs beyond the dataset and the folds: the retrieved evidence of its source, if any."""
        source = evidence_source(system)
        return {"evidence": self.healthfc_evidence_file(source)} if source else {}

    def healthfc_retrieve_inputs(self, source: str) -> dict[str, str]:
        """A prepared evidence file of the source (its ``file``), when one replaces searching."""
        file = self.config["healthfc"]["retrieval"][source]["file"]
        return {"file": file} if file else {}

    def healthfc_retrieve_options(self, source: str) -> dict[str, Any]:
        """The options of one source's retrieval: ``healthfc.retrieval`` and the source's own section (its
        answer cache under ``cache_dir`` unless set; the section completed as its registry record says, e.g.
        PubMed's per-PMID records shared with CliniFact)."""
        r = self.config["healthfc"]["retrieval"]
        own = search_source(source).complete(dict(r[source]), self.config["cache_dir"])
        return {"source": source, "lang": r["lang"], "top_k": r["top_k"], "max_retries": r["max_retries"],
                "max_share_without_evidence": r["max_share_without_evidence"], "progress": r["progress"],
                "cache_dir": r["cache_dir"] or f"{self.config['cache_dir']}/healthfc/evidence", "source_options": own}

    def healthfc_score_options(self, lang: str, system: str) -> dict[str, Any]:
        """The scoring keys a run's scores depend on (the evidence keys only for the evidence-selecting systems) and
        the labels its system predicts (its record in :data:`~medfc.experiments.systems.REGISTRY`)."""
        sc = self.config["scoring"]
        evidence = {k: sc[k] for k in ("lambdas", "reported_lambda", "max_pred_evidence")} if system in EVIDENCE_SYSTEMS else None
        return {"system": system, "lang": lang, "labels": list(system_spec(system).labels), "abstain": sc["abstain"], "evidence": evidence}

    def healthfc_compared_systems(self) -> tuple[list[list[str]], list[str]]:
        run = set(self.healthfc_systems_run())
        pairs = [p for p in self.config["scoring"]["healthfc_comparisons"] if p[0] in run and p[1] in run]
        return pairs, sorted({s for p in pairs for s in p}, key=SYSTEMS.index)

    # --------------------------------------------------------------------------------- CliniFact
    @property
    def clinifact_pairs_dir(self) -> str:
        return self.layout.under("clinifact/release" if self.config["clinifact"]["pairs_source"] == "release" else "clinifact/pairs")

    def clinifact_experiment_options(self, model: str) -> CliniFactTrainOptions:
        """A discriminative CliniFact run's whole options (:class:`~medfc.experiments.options.CliniFactTrainOptions`)."""
        cx = self.config["experiments"]["clinifact"]
        options = {
            "train": self.model_config(model, cx["train"], cx["model_train"].get(model), self.config["experiments"]["smoke"]),
            "include_title": cx["include_title"],
            "predict_splits": cx["predict_splits"],
            "checkpoint_dir": self.checkpoint_dir(f"clinifact/{model}"),
        }
        return typed(CliniFactTrainOptions, options, f"experiments.clinifact[{model}]")

    def _model_section(self, section: str, overrides: str, model: str) -> dict[str, Any]:
        """``experiments.clinifact.<section>`` < ``experiments.clinifact.<overrides>[model]`` (keys of the section only)."""
        cx = self.config["experiments"]["clinifact"]
        over = cx[overrides].get(model) or {}
        unknown = sorted(set(over) - set(cx[section]))
        if unknown:
            raise ValueError(f"config: experiments.clinifact.{overrides}.{model}.{unknown[0]} is not a key of experiments.clinifact.{section} "
                             f"({', '.join(sorted(cx[section]))})")
        return layered(cx[section], over)

    def clinifact_zero_shot_options(self, model: str) -> ZeroShotOptions:
        """A zero-shot CliniFact run's options (:class:`~medfc.experiments.options.ZeroShotOptions`)."""
        zs = self._model_section("zero_shot", "model_zero_shot", model)
        options = {**zs, "model": self.model_name(model), "cache_dir": zs["cache_dir"] or f"{self.config['cache_dir']}/completions"}
        return typed(ZeroShotOptions, options, f"experiments.clinifact.zero_shot[{model}]")

    def clinifact_fine_tune_options(self, model: str) -> FineTuneOptions:
        """A fine-tuned generative run: fine_tune < model_fine_tune[model] < the smoke caps (the keys of
        experiments.smoke that fine_tune has); its adapters go under checkpoint_dir."""
        ft = self._model_section("fine_tune", "model_fine_tune", model)
        smoke = {k: v for k, v in self.config["experiments"]["smoke"].items() if k in ft}
        options = {**layered(ft, smoke), "model": self.model_name(model),
                   "save_dir": f"{self.checkpoints}/clinifact/fine_tuned/{model}"}
        return typed(FineTuneOptions, options, f"experiments.clinifact.fine_tune[{model}]")

    def clinifact_runner_options(self, system: str, model: str) -> Options:
        """One model's options in a run of a system with a runner of its own (its record's ``options_class``):
        ``experiments.clinifact.<section>`` < ``model_<section>[model]`` < the smoke caps it shares (the keys of
        experiments.smoke its section has), its model's name, and the paths its record asks for: a ``cache_dir``
        under the workflow's ``cache_dir`` where its section's is null or absent, a ``save_dir`` under
        ``experiments.checkpoint_dir``."""
        spec = clinifact_system(system)
        own = self._model_section(spec.section, spec.overrides, model)
        smoke = {k: v for k, v in self.config["experiments"]["smoke"].items() if k in own}
        options = {**layered(own, smoke), "model": self.model_name(model)}
        if spec.cache:
            options["cache_dir"] = own.get("cache_dir") or f"{self.config['cache_dir']}/{spec.cache}"
        if spec.save_dir:
            options["save_dir"] = f"{self.checkpoints}/clinifact/{spec.name}/{model}"
        return typed(spec.options_type(), options, f"experiments.clinifact.{spec.section}[{model}]")

    def clinifact_system_options(self, system: str, model: str) -> CliniFactSystemOptions:
        """A job of the generic rule (:data:`~medfc.experiments.clinifact_systems.SYSTEM_RULE`): its system and
        its runner's options (:class:`~medfc.experiments.clinifact_systems.CliniFactSystemOptions`)."""
        options = {"system": system, "options": self.clinifact_runner_options(system, model)}
        return typed(CliniFactSystemOptions, options, f"{SYSTEM_RULE}[{system}, {model}]")

    def clinifact_system_inputs(self, system: str) -> dict[str, str]:
        """A job of the generic rule: the input files its system's record names (its ``inputs`` method)."""
        return getattr(self, clinifact_system(system).inputs)()

    def clinifact_split_inputs(self) -> dict[str, str]:
        return {s: f"{self.clinifact_pairs_dir}/{s}_set.csv" for s in ("train", "validation", "test")}

    def clinifact_inner_cv_inputs(self) -> dict[str, str]:
        """A member's inner cross-validation reads train and validation only: the test split is never its input."""
        return {s: f"{self.clinifact_pairs_dir}/{s}_set.csv" for s in ("train", "validation")}

    def clinifact_zero_shot_inputs(self) -> dict[str, str]:
        return {s: f"{self.clinifact_pairs_dir}/{s}_set.csv" for s in self.config["experiments"]["clinifact"]["zero_shot"]["splits"]}

    def clinifact_runs(self) -> list[dict[str, Any]]:
        """Every CliniFact run as {model, system, dir}: each registered system's models
        (:data:`~medfc.experiments.clinifact_systems.CLINIFACT_SYSTEMS`, in its order), in its run folder."""
        models = self.config["models"]["clinifact"]
        runs = [{"model": m, "system": spec.name, "dir": spec.run_dir(self.layout.experiments, m)}
                for spec in CLINIFACT_SYSTEMS.values() for m in models[spec.name]]
        for r in runs:
            self.model_name(r["model"])
            r["benchmark"] = self.layout.experiment_timings + r["dir"][len(self.layout.experiments):] + ".tsv"  # the job's benchmark file, beside its results' path
        return runs

    def clinifact_options(self, system: str, model: str) -> Options:
        """One model's options in a run of ``system``: the plan method its record names, or for a system with a
        runner of its own its runner's (:meth:`clinifact_runner_options`)."""
        spec = clinifact_system(system)
        return getattr(self, spec.options)(model) if spec.options else self.clinifact_runner_options(system, model)

    def clinifact_members(self, system: str, model: str) -> list[str]:
        """The models a run of ``system`` trains or runs: an ensemble's members where the system averages
        ensembles (its record has an ``ensemble_rule``), else the model itself."""
        if clinifact_system(system).ensemble_rule and self.is_ensemble(model):
            return self.ensemble_members(model)
        return [model]

    def clinifact_table_entries(self) -> list[dict[str, Any]]:
        return [{"model": r["model"], "system": r["system"]} for r in self.clinifact_runs()]

    def clinifact_score_options(self, system: str) -> dict[str, Any]:
        """The CliniFact scoring options: the system and the bootstrap behind its intervals."""
        bs = self.config["scoring"]["bootstrap"]
        return {"system": system, "n_resamples": bs["n_resamples"], "seed": bs["seed"]}

    def clinifact_fig3_runs(self) -> tuple[list[dict[str, Any]], list[str]]:
        """The two runs Fig. 3 compares (``experiments.clinifact.fig3_pair``) and notes on any substitute: a
        named run not in the plan gives way to the first planned run of its system, else of another system."""
        runs = self.clinifact_runs()
        chosen: list[dict[str, Any]] = []
        notes: list[str] = []
        for want in self.config["experiments"]["clinifact"]["fig3_pair"]:
            free = [r for r in runs if r not in chosen]
            exact = [r for r in free if r["model"] == want["model"] and r["system"] == want["system"]]
            pick = (exact or [r for r in free if r["system"] == want["system"]] or free or [None])[0]
            if pick is None:
                notes.append(f"Fig. 3: {want['model']} ({want['system']}) is not run and no other run is left to show")
                continue
            if not exact:
                notes.append(f"Fig. 3: {want['model']} ({want['system']}) is not run; {pick['model']} ({pick['system']}) is shown instead")
            chosen.append(pick)
        return chosen, notes

    def clinifact_fig3_inputs(self) -> dict[str, Any]:
        inputs: dict[str, Any] = {"predictions": [f"{r['dir']}/predictions.jsonl" for r in self.clinifact_fig3_runs()[0]],
                                  "test": f"{self.clinifact_pairs_dir}/test_set.csv", "papers": self.papers}
        if self.config["experiments"]["clinifact"]["disease_panel"]:
            inputs["studies"] = self.layout.under("clinifact/studies/studies.jsonl.gz")
        return inputs

    def clinifact_fig3_options(self) -> dict[str, Any]:
        runs, notes = self.clinifact_fig3_runs()
        return {"entries": [{"model": r["model"], "system": r["system"]} for r in runs],
                "excluded_branches": self.config["clinifact"]["stats"]["excluded_branches"], "notes": notes}

    # ------------------------------------------------------------------------------------ tables
    def table_runs(self, table: str) -> tuple[str, list[str], list[dict[str, Any]]]:
        """(input name, the runs' files, the runs' entries) of one table."""
        if table == "healthfc_times":  # with a row per stacked member's inner cross-validation ("<member> inner CV")
            runs = self.healthfc_runs()
            inner = self.healthfc_inner_runs()
            files = [self.healthfc_run_benchmark(r) for r in runs]
            files += [f"{self.layout.experiment_timings}/inner_cv/healthfc/{r['lang']}/{r['model']}/{r['system']}/fold{r['fold']}.tsv" for r in inner]
            return "benchmarks", files, runs + [{**r, "model": f"{r['model']}{INNER_CV_ROW}"} for r in inner]
        if table == "clinifact_times":
            inner = self.clinifact_inner_models()
            files = [r["benchmark"] for r in self.clinifact_runs()] + [f"{self.layout.experiment_timings}/inner_cv/clinifact/{m}.tsv" for m in inner]
            return "benchmarks", files, self.clinifact_table_entries() + [{"model": f"{m}{INNER_CV_ROW}", "system": "discriminative"} for m in inner]
        if table in HFC_TABLES or table == "healthfc_significance":
            systems = HFC_TABLES[table] if table in HFC_TABLES else self.healthfc_compared_systems()[1]
            name, file = ("scores", "scores.json") if table in HFC_TABLES else ("predictions", "predictions.jsonl")
            runs = self.healthfc_runs(systems)
            return name, [f"{self.healthfc_run_dir(r)}/{file}" for r in runs], runs
        name, file = ("scores", "scores.json") if table == "clinifact_table8" else ("predictions", "predictions.jsonl")
        return name, [f"{r['dir']}/{file}" for r in self.clinifact_runs()], self.clinifact_table_entries()

    def table_inputs(self, table: str) -> dict[str, Any]:
        name, files, _ = self.table_runs(table)
        return {name: files, **({"papers": self.papers} if name == "scores" else {})}

    def table_options(self, table: str) -> dict[str, Any]:
        options: dict[str, Any] = {"entries": self.table_runs(table)[2], "scale": self.config["experiments"]["scale"]}
        if table in TIME_TABLES:  # an ensemble's row counts its members' jobs too, a stack's their inner cross-validation
            options["ensembles"] = {m: self.ensemble_members(m) + [f"{x}{INNER_CV_ROW}" for x in self.ensemble_members(m) if self.is_stacked(m)]
                                    for m in dict.fromkeys(e["model"] for e in options["entries"]) if self.is_ensemble(m)}
        if table == "healthfc_significance":
            sc = self.config["scoring"]
            options.update(comparisons=self.healthfc_compared_systems()[0], abstain=sc["abstain"], **sc["bootstrap"])
        return options


    def experiment_targets(self) -> list[str]:
        targets = []
        hfc = self.healthfc_runs()
        for r in hfc:
            targets += [f"{self.healthfc_run_dir(r)}/predictions.jsonl", f"{self.healthfc_run_dir(r)}/scores.json"]
        systems = {r["system"] for r in hfc}
        targets += [f"{self.layout.tables}/{t}.csv" for t, table_systems in HFC_TABLES.items() if systems & set(table_systems)]
        if hfc and self.healthfc_compared_systems()[0]:
            targets.append(f"{self.layout.tables}/healthfc_significance.csv")
        cf = self.clinifact_runs()
        for r in cf:
            targets += [f"{r['dir']}/predictions.jsonl", f"{r['dir']}/scores.json"]
        if cf:
            targets += [f"{self.layout.tables}/clinifact_table8.csv", f"{self.layout.figures}/clinifact_fig3.png"]
        if len(cf) > 1:
            targets.append(f"{self.layout.tables}/clinifact_significance.csv")
        if self.config["experiments"]["time_tables"]:
            targets += [f"{self.layout.tables}/{t}.csv" for t, runs in zip(TIME_TABLES, (hfc, cf)) if runs]
        return targets


# ---------------------------------------------------------------------------------- the job table

def _healthfc_runs(plan: Any) -> list[dict[str, Any]]:
    return plan.healthfc_runs() if plan.stage_enabled("experiments") else []


def _clinifact_runs(plan: Any, system: str) -> list[dict[str, Any]]:
    return [r for r in plan.clinifact_runs() if r["system"] == system] if plan.stage_enabled("experiments") else []


def _members(plan: Any, model: str) -> list[str]:
    return plan.ensemble_members(model) if plan.is_ensemble(model) else [model]


HFC_RUN = ("lang", "model", "system", "fold")


def _healthfc_run(run: Mapping[str, Any], **changes: Any) -> dict[str, Any]:
    return {**{k: run[k] for k in HFC_RUN}, **changes}


def _fig3_planned(plan: Any) -> bool:
    return plan.stage_enabled("experiments") and bool(plan.clinifact_runs())


def _own_rules_jobs(spec: CliniFactSystem, options: str) -> list[JobSpec]:
    """The rules of a CliniFact system with rules of its own (its record's; ``options``, its options method): its
    runs, their scores, its ensembles and its members' inner cross-validations."""
    model = ("model",)
    specs = [
        JobSpec(spec.rule, model, options=call(options, "model"), inputs=call(spec.inputs), resources=model_resources(spec.rule),
                planned=lambda plan: unique({"model": m} for r in _clinifact_runs(plan, spec.name)
                                            for m in plan.clinifact_members(spec.name, r["model"]))),
        JobSpec(spec.score_rule, model, options=call("clinifact_score_options", args=(spec.name,)), options_class=CliniFactScoreOptions,
                planned=lambda plan: unique({"model": r["model"]} for r in _clinifact_runs(plan, spec.name))),
    ]
    if spec.ensemble_rule:
        specs.append(JobSpec(spec.ensemble_rule, model, options=call("ensemble_options", "model"), inputs=call("clinifact_ensemble_inputs", "model"),
                             planned=lambda plan: unique({"model": r["model"]} for r in _clinifact_runs(plan, spec.name)
                                                         if plan.is_ensemble(r["model"]))))
    if spec.inner_cv_rule:
        specs.append(JobSpec(spec.inner_cv_rule, model, options=call("clinifact_inner_cv_options", "model"), inputs=call("clinifact_inner_cv_inputs"),
                             resources=model_resources(spec.inner_cv_rule),
                             planned=lambda plan: unique({"model": m} for m in plan.clinifact_inner_models())))
    return specs


def _runner_runs(plan: Any) -> list[dict[str, str]]:
    """The generic rules' jobs: every run of a system with a runner of its own, as {system, model}."""
    return unique({"system": r["system"], "model": r["model"]} for spec in runner_systems() for r in _clinifact_runs(plan, spec.name))


def _runner_resources(plan: Any, w: Mapping[str, str]) -> dict[str, int]:
    return resources.model_job_resources(plan, SYSTEM_RULE, w["model"], system=w["system"])


def clinifact_jobs() -> list[JobSpec]:
    """Every CliniFact system's rules, from the registry: those of each system with rules of its own, then
    the generic pair that runs and scores the systems with a runner of their own, one job per system and model
    (there whether or not any such system is registered)."""
    runs = ("system", "model")
    return [
        *(s for spec in CLINIFACT_SYSTEMS.values() if spec.options is not None for s in _own_rules_jobs(spec, spec.options)),
        JobSpec(SYSTEM_RULE, runs, options=call("clinifact_system_options", *runs), inputs=call("clinifact_system_inputs", "system"),
                resources=_runner_resources, planned=_runner_runs),
        JobSpec(SYSTEM_SCORE_RULE, runs, options=call("clinifact_score_options", "system"), options_class=CliniFactScoreOptions, planned=_runner_runs),
    ]


def experiment_jobs() -> list[JobSpec]:
    """The experiments' rules' records: HealthFC's runs, retrieval, ensembles, inner cross-validations and
    scores, each CliniFact system's (:func:`clinifact_jobs`), the tables and Fig. 3."""
    return [
        JobSpec("healthfc_retrieve", ("source",), options=call("healthfc_retrieve_options", "source"), options_class=RetrieveOptions,
                inputs=call("healthfc_retrieve_inputs", "source"),
                planned=lambda plan: unique({"source": s} for r in _healthfc_runs(plan) if (s := evidence_source(r["system"])))),
        JobSpec("healthfc_experiment", HFC_RUN, options=call("healthfc_experiment_options", *HFC_RUN),
                inputs=call("healthfc_experiment_inputs", "system"),
                resources=model_resources("healthfc_experiment"),
                planned=lambda plan: unique(_healthfc_run(r, model=m) for r in _healthfc_runs(plan) for m in _members(plan, r["model"]))),
        JobSpec("healthfc_ensemble", HFC_RUN, options=call("ensemble_options", "model"), inputs=call("healthfc_ensemble_inputs", *HFC_RUN),
                planned=lambda plan: unique(_healthfc_run(r) for r in _healthfc_runs(plan) if plan.is_ensemble(r["model"]))),
        JobSpec("healthfc_inner_cv", HFC_RUN, options=call("healthfc_inner_cv_options", *HFC_RUN),
                inputs=call("healthfc_experiment_inputs", "system"),
                resources=model_resources("healthfc_inner_cv"),
                planned=lambda plan: unique(_healthfc_run(r) for r in (plan.healthfc_inner_runs() if _healthfc_runs(plan) else []))),
        JobSpec("healthfc_score", HFC_RUN, options=call("healthfc_score_options", "lang", "system"), options_class=HealthFCScoreOptions,
                planned=lambda plan: unique(_healthfc_run(r) for r in _healthfc_runs(plan))),
        *clinifact_jobs(),
        *report_jobs(),
    ]


def report_jobs() -> list[JobSpec]:
    """The tables' and Fig. 3's records."""
    def tables(plan: Any) -> list[dict[str, str]]:
        targets = set(plan.targets())
        return [{"table": t} for t in TABLES if f"{plan.layout.tables}/{t}.csv" in targets]

    return [
        JobSpec("table", ("table",), options=call("table_options", "table"), options_class=lambda w: TABLE_OPTIONS[w["table"]],
                inputs=call("table_inputs", "table"), planned=tables),
        JobSpec("clinifact_fig3", options=call("clinifact_fig3_options"), options_class=Fig3Options, inputs=call("clinifact_fig3_inputs"),
                planned=one_job(_fig3_planned)),
    ]
