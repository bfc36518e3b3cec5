"""A kept model: what a training run leaves beside its weights for ``medfc predict`` (``medfc_model.json`` and the
files of its kind's :class:`~medfc.experiments.models.keeper.Keeper`; docs/experiments.md, "Final models" and
"Predicting new claims"). A light module (no torch, no scikit-learn at import).
"""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from medfc.common.io import read_json, write_json
from medfc.common.registry import lazy
from medfc.experiments.models.keeper import CARD, CARD_FORMAT, Keeper, dump_estimators, refuse_pickles
from medfc.experiments.models.kinds import MODEL_KINDS
from medfc.experiments.records import CardFields, ModelCard

if TYPE_CHECKING:  # each kind's module loads torch or scikit-learn: imported where a model of it is kept or loaded
    from medfc.experiments.models.encoder import FittedClassifier
    from medfc.experiments.models.frozen import FittedFrozen
    from medfc.experiments.models.gbm import FittedGbm
    from medfc.experiments.healthfc.joint import FittedJoint
    from medfc.experiments.ensembles.stack_selection import Fitted
    from medfc.experiments.models.tfidf import FittedTfidf

    # a fitted model of a kind that is kept whole (a pipeline is two of them; LoRA adapters are written by peft)
    KeptModel = FittedClassifier | FittedJoint | FittedTfidf | FittedGbm | FittedFrozen


log = logging.getLogger(__name__)

ADAPTER_CONFIG = "adapter_config.json"
CARD_KEYS = ("dataset", "kind")  # what every card names: how its model is applied depends on them
PIPELINE_PARTS = ("evidence", "veracity")  # a kept pipeline's models, each in the folder of its name
JOINT_KIND = "joint"  # a kept joint encoder (both heads): the card's kind, beside the model kinds
ENSEMBLE_KIND = "ensemble"  # a kept ensemble: its members' kept models below it
ENSEMBLE_MEMBERS = "members"  # the folder of an ensemble's members, each in the folder of its alias
STACK_STATE = "stack.json"  # a stacked ensemble's choice (stack_selection.Fitted): its kind, members, features, meta-model
STACK_ESTIMATORS = "stack.skops"  # the meta-model's logistic regression (skops.io)


def keepers() -> dict[str, Keeper]:
    """Every kind of kept model by its card's ``kind``: the model kinds' keepers, then :data:`SYSTEM_KEEPERS`."""
    return {**{kind: entry.kept for kind, entry in MODEL_KINDS.items() if entry.kept is not None}, **SYSTEM_KEEPERS}


def keeper_of(kind: object) -> Keeper:
    """The keeper of a card's ``kind``; an unknown one is an error naming the kinds that are kept."""
    known = keepers()
    found = known.get(kind) if isinstance(kind, str) else None
    if found is None:
        raise ValueError(f"no keeper for a model of kind {kind!r} (an unknown kind, or one not kept for medfc predict); "
                         f"the kinds kept are {', '.join(known)}")
    return found


def keep_fitted(fitted: KeptModel | Fitted | None, directory: str | os.PathLike, card: Mapping[str, object]) -> Path:
    """Write ``card`` and what the model of ``card["kind"]`` needs beside its weights; returns the card's path."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    kind = card["kind"]
    card = {"format": CARD_FORMAT, **card, **keeper_of(kind).keep(fitted, directory)}
    path = directory / CARD
    write_json(path, card)
    log.info("kept the %s model in %s (%s)", kind, directory, CARD)
    return path


def keep_pipeline(selector: KeptModel, veracity: KeptModel, directory: str | os.PathLike, card: Mapping[str, object],
                  part_cards: Mapping[str, Mapping[str, object]]) -> Path:
    """Keep a pipeline: each part in its folder with its card (``part_cards``), then the pipeline's card naming them."""
    directory = Path(directory)
    for part, fitted in zip(PIPELINE_PARTS, (selector, veracity)):
        keep_fitted(fitted, directory / part, {**part_cards[part], "part": part})
    return keep_fitted(None, directory, {**card, "kind": "pipeline", "parts": {part: part for part in PIPELINE_PARTS}})


def _keep_stack(stacked: Fitted | None, directory: Path) -> CardFields:
    """A stack's choice in :data:`STACK_STATE` and its learned meta-model in :data:`STACK_ESTIMATORS`."""
    for name in (STACK_STATE, STACK_ESTIMATORS, "stack.pkl"):
        (directory / name).unlink(missing_ok=True)
    if stacked is None:
        return {}
    plain, clf = stacked.state()
    write_json(directory / STACK_STATE, plain)
    if clf is not None:
        dump_estimators(directory / STACK_ESTIMATORS, {"clf": clf})
    return {"stack": STACK_STATE, "stack_members": list(stacked.members), "stack_choice": stacked.kind,
            "stack_meta_model": stacked.meta is not None, "stack_features": stacked.features}


def _agreed(cards: Mapping[str, ModelCard], key: str, directory: Path) -> object:
    """The value of ``key`` every member's card has; members that differ are an error naming each one's."""
    values = {alias: card.get(key) for alias, card in cards.items()}
    if len({repr(v) for v in values.values()}) > 1:
        raise ValueError(f"{directory}: the ensemble's members differ in {key}: "
                         + "; ".join(f"{alias}: {value!r}" for alias, value in values.items()))
    return next(iter(values.values()))


def _member_dir(directory: Path, alias: str) -> Path:
    """Where the ensemble's member ``alias`` is kept (:func:`find_model_dir` below its folder)."""
    try:
        return find_model_dir(directory / ENSEMBLE_MEMBERS / alias)
    except FileNotFoundError as exc:
        raise FileNotFoundError(f"the ensemble's member {alias} is not kept: {exc}") from exc


def keep_ensemble(directory: str | os.PathLike, *, members: Sequence[str], method: str, weights: Sequence[float] = (),
                  stacked: Fitted | None = None) -> Path:
    """Keep an ensemble of members already kept in ``directory/members/<alias>/``: its card (kind ``ensemble``) and,
    for a stack, ``stacked``; returns the card's path. ``method``: ``average`` (``weights`` in member order) or
    ``stack``. The members must agree on dataset, labels and language. Each member's card gets ``member``."""
    directory = Path(directory)
    members = [str(m) for m in members]
    if not members or len(set(members)) != len(members):
        raise ValueError(f"{directory}: an ensemble needs distinct members, got {members}")
    if method not in ("average", "stack"):  # EnsembleOptions.method
        raise ValueError(f"{directory}: unknown ensemble method {method!r}; the methods are average, stack")
    found = {alias: _member_dir(directory, alias) for alias in members}
    cards = {alias: read_card(path) for alias, path in found.items()}
    dataset = _agreed(cards, "dataset", directory)
    labels = _agreed(cards, "labels", directory)
    if not labels:
        raise ValueError(f"{directory}: the ensemble's members name no labels")
    fields: dict[str, object] = {
        "format": CARD_FORMAT, "dataset": dataset, "labels": labels, "kind": ENSEMBLE_KIND, "members": members, "method": method,
        "member_dirs": {alias: path.relative_to(directory).as_posix() for alias, path in found.items()},
        "input_fields": list(dict.fromkeys(f for c in cards.values() for f in c.get("input_fields") or [])),
    }
    if any("lang" in c for c in cards.values()):
        fields["lang"] = _agreed(cards, "lang", directory)
    if method == "average":
        if stacked is not None:
            raise ValueError(f"{directory}: an averaged ensemble has no stack")
        weights = [float(w) for w in weights]
        if len(weights) != len(members) or sum(weights) <= 0:
            raise ValueError(f"{directory}: {len(weights)} weights (summing to {sum(weights)}) for {len(members)} members")
        fields["weights"] = weights
    else:
        if stacked is None:
            raise ValueError(f"{directory}: a stacked ensemble needs its stack (stack_selection.Fitted)")
        outside = [m for m in stacked.members if m not in members]
        if not stacked.members or outside:
            raise ValueError(f"{directory}: the stack combines {stacked.members}, not a subset of the members {members}")
        fields["weights"] = None
    systems = {str(c.get("system")) for c in cards.values()}
    fields.update(system=systems.pop() if len(systems) == 1 else ENSEMBLE_KIND, model="+".join(members))
    for alias, member_card in cards.items():
        if member_card.get("member") != alias and (found[alias] / CARD).is_file():
            write_json(found[alias] / CARD, {**member_card, "member": alias})
    return keep_fitted(stacked, directory, fields)


def read_card(directory: str | os.PathLike) -> ModelCard:
    """The card of a kept model; LoRA adapters without one get a card from ``adapter_config.json``."""
    directory = Path(directory)
    refuse_pickles(directory)
    if (directory / CARD).is_file():
        card = read_json(directory / CARD)
        if not isinstance(card, dict) or card.get("format") != CARD_FORMAT:
            raise ValueError(f"{directory / CARD}: not a medfc model card of format {CARD_FORMAT}")
        missing = [key for key in CARD_KEYS if not card.get(key)]
        if missing:
            raise ValueError(f"{directory / CARD}: the model card names no {' and no '.join(missing)}")
        return card
    if (directory / ADAPTER_CONFIG).is_file():
        adapter = read_json(directory / ADAPTER_CONFIG)
        return {"format": CARD_FORMAT, "dataset": "clinifact", "system": "fine_tuned", "kind": "lora",
                "model": adapter.get("base_model_name_or_path"), "options": {}}
    raise FileNotFoundError(f"{directory}: no {CARD} (a model kept by a training run with experiments.keep_checkpoints) "
                            f"and no {ADAPTER_CONFIG} (LoRA adapters)")


def find_model_dir(directory: str | os.PathLike) -> Path:
    """``directory`` when it holds a kept model, else its one subdirectory (any depth) that does (several: an error)."""
    directory = Path(directory)
    if not directory.is_dir():
        raise FileNotFoundError(f"{directory}: no such directory")
    if (directory / CARD).is_file() or (directory / ADAPTER_CONFIG).is_file():
        return directory
    found = sorted({p.parent for name in (CARD, ADAPTER_CONFIG) for p in directory.rglob(name)})
    found = [p for p in found if not any(q in p.parents for q in found)]  # a pipeline's parts are inside it
    if len(found) == 1:
        return found[0]
    if not found:
        raise FileNotFoundError(f"{directory}: holds no kept model ({CARD} or {ADAPTER_CONFIG}); train with "
                                "experiments.keep_checkpoints: true and point --model-dir at experiments.checkpoint_dir's run folder")
    raise ValueError(f"{directory}: holds {len(found)} kept models; name one: {', '.join(str(p) for p in found)}")


def load_pipeline(directory: Path, card: ModelCard, device: str = "auto", batch_size: int | None = None) -> dict[str, KeptModel]:
    """A kept pipeline's fitted models by part (``evidence``, ``veracity``), each loaded by its own card."""
    parts = card.get("parts") or {}
    missing = [part for part in PIPELINE_PARTS if part not in parts]
    if missing:
        raise ValueError(f"{directory / CARD}: the pipeline names no {' and no '.join(missing)} model")
    return {part: load_fitted(directory / parts[part], read_card(directory / parts[part]), device, batch_size) for part in PIPELINE_PARTS}


def load_fitted(directory: Path, card: ModelCard, device: str = "auto", batch_size: int | None = None) -> KeptModel | dict[str, KeptModel]:
    """The fitted model of a kept directory, loaded by its card's kind's keeper (a pipeline: its parts by name)."""
    kind = card["kind"]
    load = keeper_of(kind).load
    if load is None:
        raise ValueError(f"{directory}: a kept {kind} model is not loaded whole; medfc predict applies it (medfc.experiments.final.predict)")
    return load(directory, card, device, batch_size)


# the kinds of kept directory that are no model kind's (joint, pipeline, LoRA adapters)
SYSTEM_KEEPERS: dict[str, Keeper] = {
    JOINT_KIND: Keeper(lazy("medfc.experiments.healthfc.joint:keep_joint"), lazy("medfc.experiments.healthfc.joint:load_joint")),
    "pipeline": Keeper(lambda fitted, directory: {}, load_pipeline),  # its parts are kept models of their own
    "lora": Keeper(lambda fitted, directory: {}, None),  # peft wrote the adapters
    ENSEMBLE_KIND: Keeper(_keep_stack, None),
}
