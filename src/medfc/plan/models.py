"""The models of a plan: the aliases behind the names the model lists use, the ensembles, each model's kind and its
whole config (an encoder's training config layered here, once; a kind with a config section, such as tfidf, takes
that section under the alias's own ``models.options``)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from medfc.common.options import Options
from medfc.experiments.models.aliases import ALIAS_HINT, model_aliases
from medfc.experiments.models.options import base_model, model_config_class
from medfc.plan.jobs import Config, JobPlan, Part
from medfc.plan.layout import PAPERS, workflow_file


def layered(*layers: Mapping[str, object] | None) -> dict[str, object]:
    """Config sections merged left to right (later layers override earlier keys)."""
    return {key: value for layer in layers for key, value in (layer or {}).items()}


def mapping_at(node: Any, key: str) -> dict[str, object]:
    """``node[key]`` when both are mappings, else {} (a wrongly typed section is the schema's to name)."""
    value = node.get(key) if isinstance(node, dict) else None
    return value if isinstance(value, dict) else {}


def named_models(config: Config) -> list[str]:
    """Every model name the config's model lists use and the names its per-model sections are keyed by: where a
    Hugging Face model id may stand for itself. Reads the config as written or filled in."""
    def names(value: Any) -> list[str]:
        return [v for v in value if isinstance(v, str)] if isinstance(value, list) else []

    models = mapping_at(config, "models")
    out = [n for group in ("healthfc", "clinifact") for lst in mapping_at(models, group).values() for n in names(lst)]
    for group, key in ((mapping_at(models, "ensembles"), "members"), (mapping_at(config, "datasets"), "models")):
        out += [n for entry in group.values() if isinstance(entry, dict) for n in names(entry.get(key))]
    experiments = mapping_at(config, "experiments")
    for dataset in ("healthfc", "clinifact"):
        section = mapping_at(experiments, dataset)
        out += list(mapping_at(section, "model_train"))
        out += [n for sub in ("zero_shot", "fine_tune") for n in mapping_at(section, f"model_{sub}")]
    return list(dict.fromkeys(out))


class ModelsPlan(Part):
    def __init__(self, plan: JobPlan, base_dir: str | None = None):
        super().__init__(plan)
        self.aliases = model_aliases(self.config["models"]["aliases"], named_models(self.config))  # a hub id (org/name) stands for itself
        self.papers = workflow_file(PAPERS, base_dir)

    @property
    def ensembles(self) -> dict[str, object]:
        return self.config["models"]["ensembles"]

    def is_ensemble(self, name: str) -> bool:
        return name in self.ensembles

    def ensemble_members(self, name: str) -> list[str]:
        return list(self.ensembles[name]["members"])

    def members(self, name: str) -> list[str]:
        """An ensemble's members; a model alone: itself."""
        return self.ensemble_members(name) if self.is_ensemble(name) else [name]

    def is_stacked(self, name: str) -> bool:
        """Whether an ensemble's ``method`` is ``stack`` (learned stacking on inner-CV predictions), not ``average``."""
        return self.is_ensemble(name) and self.ensembles[name]["method"] == "stack"

    def model_name(self, alias: str) -> str:
        """A model alias → its hub name, local path, offline: or sklearn: name; an ensemble → ensemble:<members>."""
        if self.is_ensemble(alias):
            return "ensemble:" + "+".join(self.model_name(m) for m in self.ensemble_members(alias))
        if alias not in self.aliases:
            raise ValueError(f"config: model {alias!r} is not defined in models.aliases ({sorted(self.aliases)}) nor models.ensembles"
                             f"{ALIAS_HINT}")
        return self.aliases[alias]

    def model_kinds(self, alias: str) -> set[str]:
        """The kinds of a model: an ensemble's, every member's."""
        if self.is_ensemble(alias):
            return {k for m in self.ensemble_members(alias) for k in self.model_kinds(m)}
        return {self.model_class(alias).kind}

    def model_key_values(self, alias: str) -> list[tuple[str, Any]]:
        """(the key that sets it, its value) of each key naming a pretrained model the alias's kind loads
        (``model_keys``: gbm's ``embedding_model``), from the alias's ``models.options`` or else its kind's section."""
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

    def model_class(self, alias: str) -> type[Options]:
        try:
            return model_config_class(self.model_name(alias))
        except ValueError as exc:
            raise ValueError(f"config: model {alias!r} is {exc}") from None

    def model_alias_pattern(self, ensembles: bool) -> str:
        """A wildcard regex matching exactly the model aliases (ensembles=False) or the ensemble names."""
        return "|".join(re.escape(n) for n in sorted(self.ensembles if ensembles else self.aliases)) or "(?!)"

    @property
    def checkpoints(self) -> str:
        return self.config["experiments"]["checkpoint_dir"] or self.layout.under("checkpoints")

    def checkpoint_dir(self, sub: str) -> str | None:
        """Where a run keeps its checkpoints; None (kept in memory, nothing written) unless keep_checkpoints."""
        return f"{self.checkpoints}/{sub}" if self.config["experiments"]["keep_checkpoints"] else None

    def model_config(self, alias: str, *train_layers: Mapping[str, object] | None) -> dict[str, object]:
        """A model's whole config, tagged with its kind: an encoder's training config (the layers merged), or its kind's
        config section under the alias's own ``models.options``; a kind's ``cache_dirs`` resolved when null."""
        name = self.model_name(alias)
        cls = self.model_class(alias)
        own = self.config["models"]["options"].get(alias)
        base = layered(self.config["experiments"][cls.section], own) if cls.section else layered(*train_layers)
        loads = base_model(name) or any(base[k] for k in getattr(cls, "model_keys", ()))  # only a kind that loads a model keeps its vectors
        for key, sub in getattr(cls, "cache_dirs", {}).items() if loads else ():
            if base[key] is None:
                base[key] = f"{self.config['cache_dir']}/{sub}"
        return {"kind": cls.kind, **base, "model": name}

