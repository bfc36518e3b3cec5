"""How one kind of kept model is written beside its weights and read back (:class:`Keeper`), and what the
keepers share: the card's name and format, the file names of a kept directory, a scikit-learn kind's pickled
state (:func:`keep_state`, :func:`read_state`) and an encoder's config, tokenizer and checkpoint
(:func:`keep_checkpoint`). :mod:`medfc.experiments.kept` looks the keepers up by a card's kind; the kinds'
modules write theirs with these pieces, and import this module rather than that one, which imports the
registry of model kinds (:mod:`medfc.experiments.models`).

A light module (no torch, no scikit-learn at import).
"""

from __future__ import annotations

import os
import pickle
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from medfc.common.io import atomic_write
from medfc.experiments.records import CardFields, ModelCard

CARD = "medfc_model.json"
CARD_FORMAT = 1
SKLEARN_STATE = "model.pkl"
TRANSFORMERS_DIR = "transformers"


@dataclass(frozen=True)
class Keeper:
    """How one kind of kept model is written beside its weights and read back.

    ``keep(fitted, directory)`` writes into ``directory`` what the fitted model needs beside the weights its
    training wrote there, and returns what it adds to the card (``{}``: nothing); ``load(directory, card,
    device, batch_size)`` is the fitted model again (``probs(examples)``, ``labels``), on ``device``, predicting
    in batches of ``batch_size`` (None: the config's). ``load`` is None for a kind that ``medfc predict`` applies
    without loading it through :func:`medfc.experiments.kept.load_fitted` (LoRA adapters, with their base
    model). Each side imports its kind's module when called, so a keeper costs nothing at import. The fitted
    model and the loaded one are the kind's own class (typed where each keeper is written), as a model kind's
    config is its own class in ``MODEL_KINDS``."""

    keep: Callable[[Any, Path], CardFields]
    load: Callable[[Path, ModelCard, str, int | None], Any] | None


class Pretrained(Protocol):
    """A transformers config or tokenizer: what a kept encoder writes of them."""

    def save_pretrained(self, save_directory: str | os.PathLike, /) -> object: ...


def keep_checkpoint(result: object, config: Pretrained, tokenizer: Pretrained, directory: Path, what: str) -> CardFields:
    """An encoder's keep: its model's ``config`` and ``tokenizer`` in ``transformers/``, and for the card the
    checkpoint the training loop wrote (``result.checkpoint``), relative to ``directory``; ``what`` names the
    model in the error when there is none."""
    checkpoint = getattr(result, "checkpoint", None)
    if not checkpoint:
        raise ValueError(f"{directory}: {what} wrote no checkpoint to keep")
    relative = os.path.relpath(checkpoint, directory)
    config.save_pretrained(directory / TRANSFORMERS_DIR)
    tokenizer.save_pretrained(directory / TRANSFORMERS_DIR)
    return {"checkpoint": relative}


def keep_state(directory: Path, state: dict[str, object]) -> CardFields:
    """A scikit-learn kind's keep: ``state`` (what it needs to predict again, never its embeddings' encoder or
    store) pickled into :data:`SKLEARN_STATE`; nothing added to the card."""
    atomic_write(directory / SKLEARN_STATE, pickle.dumps(state, protocol=pickle.HIGHEST_PROTOCOL))
    return {}


def read_state(directory: Path) -> dict[str, Any]:
    """What :func:`keep_state` pickled (each kind reads its own keys back)."""
    with open(directory / SKLEARN_STATE, "rb") as fh:
        return pickle.load(fh)  # noqa: S301 (a model directory the user kept: module docstring)
