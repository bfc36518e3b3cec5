"""One model interface for every kind of model the experiments train, chosen once from the config's kind.

    model = build_model(config, threads)          # the kind's model: MODEL_KINDS[config.kind]
    fitted = model.fit(examples, labels, validation, desc="veracity")
    fitted.probs(examples)                         # [n, len(labels)] in the order of ``labels``

``examples`` are :class:`~medfc.experiments.examples.Example` text pairs with their gold labels,
``labels`` the classes, ``validation`` examples (or None) for whatever the kind chooses on them (an
encoder's best epoch, TF-IDF's variant and ``C``). A model is made once per job and config: it carries
what the job resolved (an encoder's model directory, device, precision and torch threads; a scikit-learn
kind's BLAS / OpenMP threads; a frozen encoder's embeddings of the job), and so does every model it fits. ``model.config`` is the config as run, ``fitted.result`` and ``fitted.encode_stats`` what
the fit did (``as_dict()`` for the info files).

A light module: each kind's implementation is imported when a model of that kind is made, so a TF-IDF
job never loads torch and an encoder's job never loads scikit-learn (a frozen encoder's job loads torch
only for texts its embedding store does not hold). A new kind is its config class in
:data:`medfc.experiments.models.options.MODEL_CONFIGS` and one entry in :data:`MODEL_KINDS`: its model, and to be kept
for ``medfc predict`` its :class:`~medfc.experiments.models.keeper.Keeper` (what a fitted model of it writes beside its
weights and how it is loaded back, written in the kind's module; :mod:`medfc.experiments.final.kept` looks it up here).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from medfc.common.options import Options
from medfc.common.registry import lazy
from medfc.experiments.examples import Example
from medfc.experiments.models.keeper import Keeper
from medfc.experiments.models.options import FrozenOptions, GbmOptions, ModelConfig, TfidfOptions, TrainConfig

if TYPE_CHECKING:  # each kind's module loads torch or scikit-learn: imported where a model of it is made, kept or loaded
    import numpy as np


class Reported(Protocol):
    """What a fit reports for the info files."""

    def as_dict(self) -> Mapping[str, object]: ...


class FittedModel(Protocol):
    labels: list[str]

    @property
    def result(self) -> Reported:  # what the fit did
        ...

    @property
    def encode_stats(self) -> Reported:  # inputs cut to fit (an encoder's tokens), or {"truncated": 0}
        ...

    def probs(self, examples: Sequence[Example], desc: str = "predict") -> np.ndarray: ...


class Model(Protocol):
    @property
    def config(self) -> Options:  # the config as run: its kind's options class (MODEL_CONFIGS)
        ...

    def fit(self, examples: Sequence[Example], labels: Sequence[str], validation: Sequence[Example] | None = None, *,
            checkpoint_dir: str | os.PathLike | None = None, trim: str = "right", desc: str = "train") -> FittedModel: ...


def _encoder(config: TrainConfig, threads: int | None) -> Model:
    from medfc.experiments.models.encoder import EncoderModel

    return EncoderModel(config, threads)


def _tfidf(config: TfidfOptions, threads: int | None) -> Model:
    from medfc.experiments.models.tfidf import TfidfModel

    return TfidfModel(config, threads)


def _gbm(config: GbmOptions, threads: int | None) -> Model:
    from medfc.experiments.models.gbm import GbmModel

    return GbmModel(config, threads)


def _frozen(config: FrozenOptions, threads: int | None) -> Model:
    from medfc.experiments.models.frozen import FrozenModel

    return FrozenModel(config, threads)


@dataclass(frozen=True)
class ModelKind:
    """A model kind's implementation: ``build``, its model made from the config (an instance of the kind's own
    config class) and the job's threads; ``kept``, how a fitted model of it is kept for ``medfc predict`` and
    loaded back (:mod:`medfc.experiments.final.kept`), None for a kind that is not kept."""

    build: Callable[[Any, int | None], Model]
    kept: Keeper | None = None


# kind → its implementation: its model and its keeper
MODEL_KINDS: dict[str, ModelKind] = {
    "encoder": ModelKind(_encoder, Keeper(lazy("medfc.experiments.models.encoder:keep_encoder"), lazy("medfc.experiments.models.encoder:load_encoder"))),
    "tfidf": ModelKind(_tfidf, Keeper(lazy("medfc.experiments.models.tfidf:keep_tfidf"), lazy("medfc.experiments.models.tfidf:load_tfidf"))),
    "gbm": ModelKind(_gbm, Keeper(lazy("medfc.experiments.models.gbm:keep_gbm"), lazy("medfc.experiments.models.gbm:load_gbm"))),
    "frozen": ModelKind(_frozen, Keeper(lazy("medfc.experiments.models.frozen:keep_frozen"), lazy("medfc.experiments.models.frozen:load_frozen"))),
}


def build_model(config: ModelConfig, threads: int | None = None) -> Model:
    """The model of ``config``'s kind (``threads``: the cores a job was granted, for torch and the BLAS / OpenMP libraries)."""
    return MODEL_KINDS[config.kind].build(config, threads)
