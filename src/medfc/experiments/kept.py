"""A kept model: what a training run leaves in its checkpoint directory so that ``medfc predict``
(:mod:`medfc.experiments.predict`) can apply it to new claims.

With ``experiments.keep_checkpoints`` a run's model directory holds, beside its weights, a small
``medfc_model.json`` (:data:`CARD`): the dataset and system, the labels in the order of the model's
outputs, the model's kind and config (its model name as the config wrote it, e.g. ``offline:minilm``,
resolved again where it is loaded), the system's options (which fields of a claim it reads, how an
evidence text is cut) and the input fields a new claim needs. What else the directory holds depends on
the kind, and each kind says it once, in its :class:`~medfc.experiments.keeper.Keeper`: what it writes
beside its weights (and adds to the card) and how it is loaded back. A model kind's keeper is on its entry
in :data:`medfc.experiments.models.MODEL_KINDS`, written in the kind's own module; the kinds of kept
directory that are no model kind's (a HealthFC system's own models, LoRA adapters) are in
:data:`SYSTEM_KEEPERS`. :func:`keepers` is the one lookup of both, by the card's ``kind``:

``encoder`` (:mod:`medfc.experiments.classifier`)
    ``best/model.pt`` (or ``final/model.pt`` without validation), written by the training loop, and
    ``transformers/`` (the model's config and tokenizer, kilobytes): the classifier is rebuilt from these
    alone, without the pretrained base.
``tfidf``, ``gbm``, ``frozen`` (:mod:`medfc.experiments.tfidf`, ``gbm``, ``frozen``)
    ``model.pkl``: the fitted scikit-learn objects (a pickle: load only a directory you trust, as with any
    pickled model). A frozen encoder's embeddings, and gbm's with an ``embedding_model``, are computed
    again at prediction time from the encoder named in the config (no store is read or written).
``lora``
    The LoRA adapters (``adapter_model.safetensors`` + ``adapter_config.json``, peft's format) of the
    fine-tuned CliniFact system; the base model is the one ``adapter_config.json`` names. Nothing is
    loaded here: ``medfc predict`` applies them with their base model.
``joint`` (:mod:`medfc.experiments.joint`)
    The joint HealthFC system: its checkpoint (the encoder, the token attention and both heads) and
    ``transformers/`` (the encoder's config and tokenizer), its evidence options (``threshold``,
    ``max_evidence``, ``evidence_weight``, ``joint_pool``) in the card.
``pipeline``
    The HealthFC pipeline: two kept models of the kinds above, each with its own card, in ``evidence/`` (the
    evidence selector, labels ``other`` / ``evidence`` over ``[sentence; SEP; claim]``) and
    ``veracity/`` (the classifier of ``[claim; SEP; selected sentences]``); the pipeline's card names them
    (``parts``) and holds its ``threshold`` and ``max_evidence``. A part's card says ``part``: it is loaded
    through the pipeline's (:func:`find_model_dir` finds the outer card).

A light module (no torch, no scikit-learn at import): the training code imports it, and each kind's
module is imported by its keeper when a model of it is kept or loaded. The file names and the card's
format are :mod:`medfc.experiments.keeper`'s.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from medfc.common.io import read_json, write_json
from medfc.common.registry import lazy
from medfc.experiments.keeper import CARD, CARD_FORMAT, Keeper
from medfc.experiments.models import MODEL_KINDS
from medfc.experiments.records import CardFields, ModelCard

if TYPE_CHECKING:  # each kind's module loads torch or scikit-learn: imported where a model of it is kept or loaded
    from medfc.experiments.classifier import FittedClassifier
    from medfc.experiments.frozen import FittedFrozen
    from medfc.experiments.gbm import FittedGbm
    from medfc.experiments.joint import FittedJoint
    from medfc.experiments.tfidf import FittedTfidf

    SklearnModel = FittedTfidf | FittedGbm | FittedFrozen
    # a fitted model of a kind that is kept whole (a pipeline is two of them; LoRA adapters are written by peft)
    KeptModel = FittedClassifier | FittedJoint | SklearnModel

log = logging.getLogger(__name__)

ADAPTER_CONFIG = "adapter_config.json"
CARD_KEYS = ("dataset", "kind")  # what every card names: how its model is applied depends on them
PIPELINE_PARTS = ("evidence", "veracity")  # a kept pipeline's models, each in the folder of its name
JOINT_KIND = "joint"  # a kept joint encoder (both heads): the card's kind, beside the model kinds


def _keep_nothing(fitted: None, directory: Path) -> CardFields:
    """A pipeline's parts are kept models of their own (:func:`keep_pipeline`); peft wrote a LoRA run's adapters."""
    return {}


def keepers() -> dict[str, Keeper]:
    """Every kind of kept model by its card's ``kind``: each model kind with a keeper on its entry in
    :data:`~medfc.experiments.models.MODEL_KINDS` (read at each call: a kind registered later too), then
    :data:`SYSTEM_KEEPERS`."""
    return {**{kind: entry.kept for kind, entry in MODEL_KINDS.items() if entry.kept is not None}, **SYSTEM_KEEPERS}


def keeper_of(kind: object) -> Keeper:
    """The keeper of a card's ``kind``; an unknown one is an error naming the kinds that are kept."""
    known = keepers()
    found = known.get(kind) if isinstance(kind, str) else None
    if found is None:
        raise ValueError(f"no keeper for a model of kind {kind!r} (an unknown kind, or one not kept for medfc predict); "
                         f"the kinds kept are {', '.join(known)}")
    return found


def keep_fitted(fitted: KeptModel | None, directory: str | os.PathLike, card: Mapping[str, object]) -> Path:
    """Write ``card`` (:data:`CARD`) and what the fitted model of ``card["kind"]`` needs beside its weights into
    ``directory`` (its keeper's ``keep``: an encoder's checkpoint is already there, the training loop
    wrote it); returns the card's path."""
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
    """Keep a pipeline: the evidence selector and the veracity model each in its folder (:data:`PIPELINE_PARTS`)
    with its own card (``part_cards``; their weights are already there), then the pipeline's ``card`` (kind
    ``pipeline``, naming its parts)."""
    directory = Path(directory)
    for part, fitted in zip(PIPELINE_PARTS, (selector, veracity)):
        keep_fitted(fitted, directory / part, {**part_cards[part], "part": part})
    return keep_fitted(None, directory, {**card, "kind": "pipeline", "parts": {part: part for part in PIPELINE_PARTS}})


def read_card(directory: str | os.PathLike) -> ModelCard:
    """The card of a kept model; for LoRA adapters without one (e.g. adapters trained elsewhere), a card
    for the fine-tuned CliniFact system read from ``adapter_config.json``."""
    directory = Path(directory)
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
    """``directory`` when it holds a kept model, else its one subdirectory (at any depth) that does: a HealthFC
    run's checkpoint directory (``<checkpoint_dir>/healthfc/<lang>/<model>/<system>/fold<k>``) keeps its
    model under the system's name. Several kept models below it are an error naming them."""
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
    """The fitted model (``probs(examples)``, ``labels``) of a kept directory, by its card's kind (its
    keeper's ``load``; ``pipeline``: its parts by name, :func:`load_pipeline`)."""
    kind = card["kind"]
    load = keeper_of(kind).load
    if load is None:
        raise ValueError(f"{directory}: a kept {kind} model is not loaded whole; medfc predict applies it (medfc.experiments.predict)")
    return load(directory, card, device, batch_size)


# the kinds of kept directory that are no model kind's: the joint HealthFC system, the pipeline (two kept models), LoRA
# adapters (the fine-tuned CliniFact system, applied by medfc predict with their base model)
SYSTEM_KEEPERS: dict[str, Keeper] = {
    JOINT_KIND: Keeper(lazy("medfc.experiments.joint:keep_joint"), lazy("medfc.experiments.joint:load_joint")),
    "pipeline": Keeper(_keep_nothing, load_pipeline),
    "lora": Keeper(_keep_nothing, None),
}
