"""Every check of a plan, in the one order they run (:data:`CHECKS`): what the schema allows key by key but not
together, and what only the plan knows (the models behind the aliases, the installed offline models, the files the
config names). Each raises a ValueError whose message names the key; the last builds every planned job."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from medfc.common.offline_models import offline_model_problem
from medfc.common.pinning import COMMIT
from medfc.common.registry import did_you_mean
from medfc.experiments.models.aliases import ALIAS_HINT, model_aliases
from medfc.experiments.clinifact.systems import CLINIFACT_SYSTEMS, ensembling_system
from medfc.experiments.models.kinds import MODEL_KINDS
from medfc.experiments.models.options import base_model, model_config_class
from medfc.experiments.healthfc.systems import EVIDENCE_SYSTEMS
from medfc.medsnip.options import (ANSWER_SOURCES, HUMAN_MODES, LLMOptions, RetrievalOptions, answer_source,
                                   verifier_kind)
from medfc.plan.models import mapping_at, named_models

if TYPE_CHECKING:
    from medfc.plan import Plan


# ---------------------------------------------------- before the schema: the config as written

def misplaced_model_train(config: dict[str, Any]) -> str | None:
    """An ``experiments.<dataset>.model_train`` entry that no job would read (an ensemble, no model alias, a kind
    that is not fine-tuned), as one line naming it. Reads the config as written, before the schema."""
    models = mapping_at(config, "models")
    given = {k: v for k, v in mapping_at(models, "aliases").items() if isinstance(v, str)}
    aliases = model_aliases(given, named_models(config))
    ensembles = mapping_at(models, "ensembles")
    for dataset in ("healthfc", "clinifact"):
        for alias in mapping_at(mapping_at(mapping_at(config, "experiments"), dataset), "model_train"):
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


# ------------------------------------------------------------------ the plan's checks

def check_release_mode_systems(plan: Plan) -> None:
    """The evidence-selecting systems need the crawled articles, not only the release's gold sentences."""
    if plan.datasets.healthfc_mode != "release" or not plan.stage_enabled("experiments"):
        return
    if chosen := [s for s in EVIDENCE_SYSTEMS if s in plan.healthfc.healthfc_systems_run()]:
        selecting = " and ".join(EVIDENCE_SYSTEMS)
        raise ValueError(
            f"config: healthfc.dataset.mode is 'release', so the evidence-selection systems {selecting} "
            "would only have the gold sentences to choose from and their evidence scores would be meaningless; "
            f"experiments.healthfc.systems (or .lang_systems) includes {' and '.join(chosen)}. Remove {selecting} "
            "from experiments.healthfc.systems (e.g. [oracle, claims_only, gold_explanations, level_of_evidence]) "
            "or use healthfc.dataset.mode crawl+release.")


def check_languages_have_models(plan: Plan) -> None:
    """A language of ``experiments.healthfc.langs`` with an empty model list would run nothing, silently."""
    if not plan.stage_enabled("experiments"):
        return
    for lang in plan.config["experiments"]["healthfc"]["langs"]:
        if not plan.config["models"]["healthfc"][lang]:
            raise ValueError(
                f"config: models.healthfc.{lang} is empty but experiments.healthfc.langs includes {lang}, so its HealthFC "
                f"experiments would silently vanish: name its models, or leave {lang} out of experiments.healthfc.langs "
                "(langs: [] runs no HealthFC experiments)")


PAIRS = "pairs"  # a model list of the one discriminative path (medfc.experiments.pairs): CliniFact's and every declared dataset's


def _model_lists(plan: Plan) -> Iterator[tuple[tuple[str, ...], str, list[str]]]:
    """(what reads it, config key, names) of every model list: HealthFC's per language, each CliniFact system's (the
    one path's: also ``pairs``), each declared dataset's (``pairs``)."""
    models = plan.config["models"]
    for lang in ("en", "de"):
        yield ("healthfc",), f"models.healthfc.{lang}", models["healthfc"][lang]
    for name, spec in CLINIFACT_SYSTEMS.items():
        yield ("clinifact", PAIRS) if spec.pairs else ("clinifact",), spec.models_key, models["clinifact"][name]
    for name, entry in plan.config["datasets"].items():
        yield (PAIRS,), f"datasets.{name}.models", entry["models"]


def check_model_lists(plan: Plan) -> None:
    """Every name in a model list is a model alias or an ensemble."""
    for _, key, names in _model_lists(plan):
        for name in names:
            if name not in plan.models.aliases and not plan.models.is_ensemble(name):
                hint = did_you_mean(name, [*plan.models.aliases, *plan.models.ensembles])
                raise ValueError(f"config: {key}: {name!r} names no model{hint} (models.aliases: {', '.join(sorted(plan.models.aliases))}; "
                                 f"models.ensembles: {', '.join(sorted(plan.models.ensembles)) or 'none'}){ALIAS_HINT}")


def check_ensembles(plan: Plan) -> None:
    """An ensemble has a name of its own, and its members are model aliases."""
    if both := sorted(set(plan.models.aliases) & set(plan.models.ensembles)):
        raise ValueError(f"config: {both} are both models.aliases and models.ensembles: an ensemble needs a name of its own")
    for name, ens in plan.models.ensembles.items():
        if unknown := [m for m in ens["members"] if m not in plan.models.aliases]:
            raise ValueError(f"config: models.ensembles.{name}.members {unknown} are not in models.aliases")


def check_kinds_serve_datasets(plan: Plan) -> None:
    """Each model kind serves the datasets its options class declares, and a kept model's kind has a keeper."""
    lists: dict[tuple[tuple[str, ...], str], list[str]] = {}
    for readers, key, names in _model_lists(plan):  # HealthFC's two languages are one list here
        lists.setdefault((readers, "models.healthfc" if key.startswith("models.healthfc.") else key), []).extend(names)
    for (readers, key), names in lists.items():
        refused: dict[type, set[str]] = {}
        for m in names:
            for cls in {plan.models.model_class(x) for x in plan.models.ensembles.get(m, {}).get("members", [m])}:
                if not set(readers) & set(cls.datasets):
                    refused.setdefault(cls, set()).add(m)
                if plan.config["experiments"]["keep_checkpoints"] and cls.kind in MODEL_KINDS and MODEL_KINDS[cls.kind].kept is None:
                    raise ValueError(f"config: experiments.keep_checkpoints is true but {key} uses {m!r}, of the model kind {cls.kind}, "
                                     "which has no keeper (medfc.experiments.models.kinds.MODEL_KINDS): its runs would train and then fail "
                                     "to keep it; set experiments.keep_checkpoints: false or leave it out")
        for cls, used in refused.items():
            raise ValueError(f"config: {key} uses {sorted(used)}, {cls.limits}")


def _per_alias(plan: Plan, key: str, ensemble_note: str) -> list[str]:
    """The entries of ``models.<key>``, each a model alias and not an ensemble (``ensemble_note``: why not)."""
    for alias in plan.config["models"][key]:
        if plan.models.is_ensemble(alias):
            raise ValueError(f"config: models.{key}.{alias}: {alias!r} is an ensemble{ensemble_note}; set its members' {key} "
                             f"({', '.join(plan.models.ensemble_members(alias))})")
        if alias not in plan.models.aliases:
            raise ValueError(f"config: models.{key}.{alias}: {alias!r} is not in models.aliases{did_you_mean(alias, plan.models.aliases)} "
                             f"(models.aliases: {', '.join(sorted(plan.models.aliases))})")
    return list(plan.config["models"][key])


def check_models_options(plan: Plan) -> None:
    """``models.options``: each entry names a model alias (not an ensemble) of a kind with a config section (its values
    are checked against that section's schema before, :func:`medfc.config.validate.models_options_error`)."""
    for alias in _per_alias(plan, "options", ""):
        if plan.models.model_class(alias).section is None:
            raise ValueError(f"config: models.options.{alias}: {alias} ({plan.models.model_name(alias)}) is a fine-tuned encoder; "
                             f"its training keys go in experiments.healthfc.model_train.{alias} or experiments.clinifact.model_train.{alias}")


def check_models_resources(plan: Plan) -> None:
    """``models.resources``: each entry names a model alias, not an ensemble (whose job has small fixed resources)."""
    _per_alias(plan, "resources", ", whose job only averages its members' predictions")


def check_encoder_keys(plan: Plan) -> None:
    """A key naming the pretrained encoder a kind loads (gbm's ``embedding_model``) names an encoder, not a model alias
    or an ensemble, for every alias of such a kind, planned or not."""
    for alias in plan.models.aliases:
        for where, value in plan.models.model_key_values(alias):
            if value in plan.models.aliases or value in plan.models.ensembles:
                target = plan.models.aliases.get(value, "")
                hint = base_model(target) if target else ""
                what = f"a model alias ({target})" if target else "an ensemble"
                raise ValueError(f"config: {where}: {value!r} is {what}, not an encoder; "
                                 f"name the encoder itself{f', e.g. {hint}' if hint else ''}")


def check_offline_models(plan: Plan) -> None:
    """A planned ``offline:`` model (or one a kind's options name) that is unknown or not installed stops the run,
    naming the command that installs it."""
    if not plan.stage_enabled("experiments"):
        return
    planned = [(f"models.healthfc.{r['lang']}", r["model"]) for r in plan.healthfc.healthfc_runs()]
    planned += [(f"models.clinifact.{r['system']}", r["model"]) for r in plan.experiments.clinifact_runs()]
    for key, model in dict.fromkeys(planned):
        for alias in plan.models.members(model):
            name = plan.models.model_name(alias)
            plan.models.model_class(alias)  # a model naming no kind stops here, naming it
            # the pretrained model it loads (frozen:offline:mpnet loads offline:mpnet), and those its options name
            # (gbm's embedding_model)
            loads = [(base_model(name), ""), *((v, f" (its {w})") for w, v in plan.models.model_key_values(alias) if v)]
            for loaded, via in loads:
                if problem := loaded.startswith("offline:") and offline_model_problem(loaded):
                    raise ValueError(f"config: {key} plans {alias} ({name}{via}): {problem}")


def check_final_rows(plan: Plan) -> None:
    """Each row of ``experiments.final`` is a row of this run, of the system that keeps its models, and every model of
    it has a keeper."""
    if not plan.stage_enabled("experiments"):
        return
    keeping = ensembling_system()
    for i, row in enumerate(plan.experiments.final_rows()):
        where = f"config: experiments.final[{i}]"
        if row["dataset"] == "healthfc":
            ran = any((r["lang"], r["model"], r["system"]) == (row["lang"], row["model"], row["system"]) for r in plan.healthfc.healthfc_runs())
            name = f"{row['model']} {row['system']} ({row['lang']})"
        else:
            if row["dataset"] not in plan.experiments.pair_datasets():
                raise ValueError(f"{where}.dataset: {row['dataset']!r} is neither healthfc nor a dataset of this run "
                                 f"({', '.join(plan.experiments.pair_datasets())})")
            if row["system"] != keeping.name:
                raise ValueError(f"{where}: {row['system']!r}: final models are kept for the {keeping.name} system only")
            if plan.config["experiments"]["final"][i].get("lang"):
                raise ValueError(f"{where}.lang: a {row['dataset']} row has no language (only HealthFC's rows do); leave lang out")
            ran = any(r["model"] == row["model"] for r in plan.experiments.pairs_runs(row["dataset"]))
            name = row["model"]
        if not ran:
            raise ValueError(f"{where}: {name} is not a row of this run's {row['dataset']} table (its model lists, systems and langs)")
        for m in plan.models.members(row["model"]):
            kind = plan.models.model_class(m).kind
            if kind in MODEL_KINDS and MODEL_KINDS[kind].kept is None:
                raise ValueError(f"{where}: {m!r} is of the model kind {kind}, which has no keeper (medfc.experiments.models.kinds.MODEL_KINDS)")


def check_smoke_scale(plan: Plan) -> None:
    """Capped training (``experiments.smoke``) makes smoke-sized numbers: the tables must say so (``scale: smoke``)."""
    ex = plan.config["experiments"]
    smoke = {k: v for k, v in ex["smoke"].items() if v is not None}
    if plan.stage_enabled("experiments") and smoke and ex["scale"] != "smoke":
        raise ValueError(
            f"config: experiments.smoke caps training ({smoke}), so the tables' numbers are smoke-sized, but "
            f"experiments.scale is {ex['scale']!r}: set experiments.scale: smoke, or lift the caps "
            "(experiments.smoke: {max_steps: null, max_examples: null}).")


def check_medsnip(plan: Plan) -> None:
    """What the schema cannot say about ``medsnip``: an enabled dataset, its files and human units, the verifiers'
    names, and each role's LLM and the retrieval built whole."""
    if not plan.stage_enabled("medsnip"):
        return
    ms = plan.medsnip.ms
    datasets = plan.medsnip.medsnip_datasets()
    if not datasets:
        raise ValueError("config: stages.medsnip is on but none of " + ", ".join(f"medsnip.datasets.{d}.enabled" for d in ANSWER_SOURCES)
                         + " is true")
    for name in datasets:
        source, ds, key = answer_source(name), ms["datasets"][name], f"medsnip.datasets.{name}"
        if plan.medsnip.medsnip_fetched(name):
            if not COMMIT.match(str(ds["hf"]["revision"] or "")):
                raise ValueError(f"config: {key}.path is null (the dataset is read from the Hugging Face Hub) but {key}.hf.revision is not "
                                 f"set: pin the commit of {ds['hf']['repo']} to read (40 hex digits, from its history on the Hub), "
                                 f"or set {key}.path to a local copy of the dataset")
        elif not source.healthfc_dataset and not Path(ds["path"]).is_file():
            raise ValueError(f"config: {key}.path {ds['path']!r} is not a file")
        if source.own_level and ds["baseline_mode"] in HUMAN_MODES and not (source.human_units and ds["human_units"]):
            raise ValueError(f"config: {key}.baseline_mode is {ds['baseline_mode']} but {key}.human_units is false")
    names = [v["name"] for v in ms["verifiers"]]
    if len(set(names)) < len(names):
        raise ValueError(f"config: medsnip.verifiers has repeated names {sorted(n for n in set(names) if names.count(n) > 1)}")
    built: list[tuple[type[LLMOptions] | type[RetrievalOptions], dict[str, object], str]] = [
        (LLMOptions, plan.medsnip.medsnip_llm(overrides), where) for where, overrides in plan.medsnip.medsnip_roles()]
    if unnamed := [where for _, llm, where in built if not llm["model"]]:  # the one key to set is the shared LLM's
        raise ValueError(f"config: medsnip.llm.model is empty: name the LLM MedSNIP calls (a served model name, a model "
                         f"directory or hub name), e.g. --config 'medsnip={{\"llm\": {{\"model\": \"llama3.1:8b\"}}}}'; "
                         f"{' and '.join(unnamed)} use it")
    if any(verifier_kind(v["kind"]).retrieves for v in ms["verifiers"]):
        built.append((RetrievalOptions, plan.medsnip.medsnip_retrieval(), "medsnip.retrieval"))
    for cls, options, where in built:
        try:
            cls.from_mapping(options, where)  # its cross-field checks included
        except ValueError as exc:
            note = f" (the LLM of {where} is medsnip.llm updated with the keys {where} sets)" if cls is LLMOptions else ""
            raise ValueError(f"config: {exc}{note}") from None


# in this order: the cheap checks of the config first, then those that read files, then every planned job's build
# (a model alias naming no model, a fold outside the folds, a missing mirror or release)
CHECKS: tuple[Callable[[Plan], None], ...] = (
    check_release_mode_systems, check_languages_have_models, check_model_lists, check_ensembles, check_kinds_serve_datasets,
    check_models_options, check_models_resources, check_encoder_keys, check_offline_models,
    check_final_rows, check_smoke_scale, check_medsnip, lambda plan: plan.build_jobs(),
)


def check_plan(plan: Plan) -> None:
    """Run :data:`CHECKS` in order: the first mistake stops the plan, as a ValueError naming the key."""
    for check in CHECKS:
        check(plan)
