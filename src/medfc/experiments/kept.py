"""A kept model: what a training run leaves in its checkpoint directory so that ``medfc predict``
(:mod:`medfc.experiments.predict`) can apply it to new claims.

With ``experiments.keep_checkpoints`` a run's model directory holds, beside its weights, a small
``medfc_model.json`` (:data:`CARD`): the dataset and system, the labels in the order of the model's
outputs, the model's kind and config (its model name as the config wrote it, e.g. ``offline:minilm``,
resolved again where it is loaded), the system's options (which fields of a claim it reads, how an
evidence text is cut) and the input fields a new claim needs. What else the directory holds depends on
the kind:

``encoder``
    ``best/model.pt`` (or ``final/model.pt`` without validation), written by the training loop, and
    ``transformers/`` (the model's config and tokenizer, kilobytes): the classifier is rebuilt from these
    alone, without the pretrained base.
``tfidf``, ``gbm``, ``frozen``
    ``model.pkl``: the fitted scikit-learn objects (a pickle: load only a directory you trust, as with any
    pickled model). A frozen encoder's embeddings, and gbm's with an ``embedding_model``, are computed
    again at prediction time from the encoder named in the config (no store is read or written).
``lora``
    The LoRA adapters (``adapter_model.safetensors`` + ``adapter_config.json``, peft's format) of the
    fine-tuned CliniFact system; the base model is the one ``adapter_config.json`` names.
``joint``
    The joint HealthFC system (:mod:`medfc.experiments.joint`): its checkpoint (the encoder, the token
    attention and both heads) and ``transformers/`` (the encoder's config and tokenizer), its evidence
    options (``threshold``, ``max_evidence``, ``evidence_weight``, ``joint_pool``) in the card.
``pipeline``
    The HealthFC pipeline: two kept models of the kinds above, each with its own card, in ``evidence/`` (the
    evidence selector, labels ``other`` / ``evidence`` over ``[sentence; SEP; claim]``) and
    ``veracity/`` (the classifier of ``[claim; SEP; selected sentences]``); the pipeline's card names them
    (``parts``) and holds its ``threshold`` and ``max_evidence``. A part's card says ``part``: it is loaded
    through the pipeline's (:func:`find_model_dir` finds the outer card).

A light module (no torch, no scikit-learn at import): the training code imports it.
"""

from __future__ import annotations

import logging
import os
import pickle
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from medfc.common.io import atomic_write, read_json, write_json
from medfc.experiments.records import ModelCard

if TYPE_CHECKING:  # each kind's module loads torch or scikit-learn: imported where a model of it is loaded
    from medfc.experiments.classifier import FittedClassifier
    from medfc.experiments.frozen import FittedFrozen
    from medfc.experiments.gbm import FittedGbm
    from medfc.experiments.joint import FittedJoint
    from medfc.experiments.tfidf import FittedTfidf

    SklearnModel = FittedTfidf | FittedGbm | FittedFrozen
    # a fitted model of a kind that is kept whole (a pipeline is two of them; LoRA adapters are written by peft)
    KeptModel = FittedClassifier | FittedJoint | SklearnModel

log = logging.getLogger(__name__)

CARD = "medfc_model.json"
CARD_FORMAT = 1
SKLEARN_STATE = "model.pkl"
TRANSFORMERS_DIR = "transformers"
ADAPTER_CONFIG = "adapter_config.json"
SKLEARN_KINDS = ("tfidf", "gbm", "frozen")
PIPELINE_PARTS = ("evidence", "veracity")  # a kept pipeline's models, each in the folder of its name
JOINT_KIND = "joint"  # a kept joint encoder (both heads): the card's kind, beside the model kinds


def _sklearn_state(kind: str, fitted: SklearnModel) -> dict[str, object]:
    """What a fitted scikit-learn kind needs to predict again (never its embeddings' encoder or store)."""
    if kind == "tfidf":
        return {"options": fitted.options, "labels": fitted.labels, "space": fitted.space, "clf": fitted.clf}
    if kind == "gbm":
        return {"options": fitted.options, "labels": fitted.labels, "idf": fitted.idf, "keys": fitted.keys, "models": fitted.models,
                "side": fitted.side}
    if kind == "frozen":
        return {"options": fitted.options, "labels": fitted.labels, "scaler": fitted.scaler, "clf": fitted.clf, "pairs": fitted.pairs,
                "side": fitted.side}
    raise ValueError(f"model kind {kind!r} keeps no scikit-learn state")


def keep_fitted(fitted: KeptModel | None, directory: str | os.PathLike, card: Mapping[str, object]) -> Path:
    """Write ``card`` (:data:`CARD`) and what the fitted model of ``card["kind"]`` needs beside its weights into
    ``directory`` (an encoder's checkpoint is already there: the training loop wrote it); returns the card's path."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    kind = card["kind"]
    card = {"format": CARD_FORMAT, **card}
    if kind == "encoder":
        checkpoint = getattr(fitted.result, "checkpoint", None)
        if not checkpoint:
            raise ValueError(f"{directory}: the encoder wrote no checkpoint to keep")
        card["checkpoint"] = os.path.relpath(checkpoint, directory)
        fitted.model.config.save_pretrained(directory / TRANSFORMERS_DIR)
        fitted.tokenizer.save_pretrained(directory / TRANSFORMERS_DIR)
    elif kind == JOINT_KIND:
        checkpoint = getattr(fitted.result, "checkpoint", None)
        if not checkpoint:
            raise ValueError(f"{directory}: the joint encoder wrote no checkpoint to keep")
        card["checkpoint"] = os.path.relpath(checkpoint, directory)
        fitted.model.encoder.config.save_pretrained(directory / TRANSFORMERS_DIR)
        fitted.tokenizer.save_pretrained(directory / TRANSFORMERS_DIR)
    elif kind in SKLEARN_KINDS:
        atomic_write(directory / SKLEARN_STATE, pickle.dumps(_sklearn_state(kind, fitted), protocol=pickle.HIGHEST_PROTOCOL))
    elif kind not in ("lora", "pipeline"):  # lora: peft wrote the adapters; pipeline: its parts are kept models of their own
        raise ValueError(f"unknown model kind {kind!r}")
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


def load_sklearn(directory: Path, card: ModelCard, device: str, batch_size: int | None) -> SklearnModel:
    """The fitted TF-IDF, GBM or frozen model of a kept directory (a frozen encoder's on ``device``)."""
    with open(directory / SKLEARN_STATE, "rb") as fh:
        state = pickle.load(fh)  # noqa: S301 (a model directory the user kept: module docstring)
    kind = card["kind"]
    if kind == "tfidf":
        from medfc.experiments.tfidf import FittedTfidf

        fitted = FittedTfidf(state["options"], state["labels"])
        fitted.space, fitted.clf = state["space"], state["clf"]
        return fitted
    if kind == "gbm":
        from medfc.experiments.gbm import FittedGbm, embedding_encoder

        options = state["options"]
        options = options.replace(cache_dir=None, device=device, progress=False,
                                  embedding_batch_size=batch_size or options.embedding_batch_size)
        return FittedGbm(options, state["labels"], state["idf"], state["keys"], state["models"], embedding_encoder(options), state["side"])
    if kind == "frozen":
        from medfc.experiments.embeddings import FrozenEncoder
        from medfc.experiments.frozen import FittedFrozen

        options = state["options"]
        encoder = FrozenEncoder(options.encoder, cache_dir=None, batch_size=batch_size or options.batch_size, device=device, progress=False)
        fitted = FittedFrozen(options, encoder, state["labels"], state["pairs"], state["side"])
        fitted.scaler, fitted.clf = state["scaler"], state["clf"]
        return fitted
    raise ValueError(f"model kind {kind!r} keeps no scikit-learn state")


def load_encoder(directory: Path, card: ModelCard, device: str, batch_size: int | None) -> FittedClassifier:
    """The fine-tuned encoder of a kept directory: its architecture and tokenizer from ``transformers/``, its
    weights from the kept checkpoint, on ``device`` (``auto``: CUDA when there is one)."""
    from transformers import AutoConfig, AutoModelForSequenceClassification

    from medfc.common.device import Placement
    from medfc.experiments.classifier import FittedClassifier, load_tokenizer
    from medfc.experiments.options import TrainConfig
    from medfc.experiments.training import TrainResult, load_checkpoint

    cfg = TrainConfig.from_mapping(card["config"], where=str(directory / CARD))
    cfg = cfg.replace(device=device, progress=False, eval_batch_size=batch_size or cfg.eval_batch_size)
    hf = directory / TRANSFORMERS_DIR
    config = AutoConfig.from_pretrained(hf)
    labels = list(card["labels"])
    if config.num_labels != len(labels):
        raise ValueError(f"{directory}: the classifier has {config.num_labels} outputs but the card names {len(labels)} labels")
    model = AutoModelForSequenceClassification.from_config(config)
    load_checkpoint(model, directory / card["checkpoint"])
    placement = Placement.resolve(device, "auto", None)
    return FittedClassifier(model.eval(), load_tokenizer(hf), labels, cfg, placement, TrainResult(), card.get("trim", "right"))


def load_joint(directory: Path, card: ModelCard, device: str, batch_size: int | None) -> FittedJoint:
    """The joint HealthFC model of a kept directory (:class:`~medfc.experiments.joint.FittedJoint`: per claim its
    label probabilities and its sentences' evidence probabilities): the encoder's architecture and tokenizer
    from ``transformers/``, every weight (encoder, token attention, heads) from the kept checkpoint."""
    from transformers import AutoConfig, AutoModel

    from medfc.common.device import Placement
    from medfc.experiments.classifier import load_tokenizer
    from medfc.experiments.joint import FittedJoint, JointModel, WindowStats, uses_token_types
    from medfc.experiments.options import TrainConfig
    from medfc.experiments.training import TrainResult, load_checkpoint

    cfg = TrainConfig.from_mapping(card["config"], where=str(directory / CARD))
    cfg = cfg.replace(device=device, progress=False, eval_batch_size=batch_size or cfg.eval_batch_size)
    opts = card["system_options"]
    hf = directory / TRANSFORMERS_DIR
    labels = list(card["labels"])
    model = JointModel(AutoModel.from_config(AutoConfig.from_pretrained(hf)), len(labels), evidence_weight=float(opts["evidence_weight"]),
                       threshold=float(opts["threshold"]), pool=opts["joint_pool"])
    load_checkpoint(model, directory / card["checkpoint"])
    tok = load_tokenizer(hf)
    return FittedJoint(model.eval(), tok, labels, cfg, Placement.resolve(device, "auto", None), uses_token_types(tok, model.encoder),
                       TrainResult(), WindowStats())


def load_pipeline(directory: Path, card: ModelCard, device: str = "auto", batch_size: int | None = None) -> dict[str, KeptModel]:
    """A kept pipeline's fitted models by part (``evidence``, ``veracity``), each loaded by its own card."""
    parts = card.get("parts") or {}
    missing = [part for part in PIPELINE_PARTS if part not in parts]
    if missing:
        raise ValueError(f"{directory / CARD}: the pipeline names no {' and no '.join(missing)} model")
    return {part: load_fitted(directory / parts[part], read_card(directory / parts[part]), device, batch_size) for part in PIPELINE_PARTS}


def load_fitted(directory: Path, card: ModelCard, device: str = "auto", batch_size: int | None = None) -> KeptModel | dict[str, KeptModel]:
    """The fitted model (``probs(examples)``, ``labels``) of a kept directory of any kind but ``lora``
    (``pipeline``: its parts by name, :func:`load_pipeline`)."""
    if card["kind"] == "encoder":
        return load_encoder(directory, card, device, batch_size)
    if card["kind"] == JOINT_KIND:
        return load_joint(directory, card, device, batch_size)
    if card["kind"] == "pipeline":
        return load_pipeline(directory, card, device, batch_size)
    return load_sklearn(directory, card, device, batch_size)
