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
:data:`medfc.experiments.options.MODEL_CONFIGS` and one entry in :data:`MODEL_KINDS`.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol

from medfc.common.options import Options
from medfc.experiments.examples import Example
from medfc.experiments.options import FrozenOptions, GbmOptions, ModelConfig, TfidfOptions, TrainConfig

if TYPE_CHECKING:
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
    from medfc.experiments.classifier import EncoderModel

    return EncoderModel(config, threads)


def _tfidf(config: TfidfOptions, threads: int | None) -> Model:
    from medfc.experiments.tfidf import TfidfModel

    return TfidfModel(config, threads)


def _gbm(config: GbmOptions, threads: int | None) -> Model:
    from medfc.experiments.gbm import GbmModel

    return GbmModel(config, threads)


def _frozen(config: FrozenOptions, threads: int | None) -> Model:
    from medfc.experiments.frozen import FrozenModel

    return FrozenModel(config, threads)


# kind → its model, made from the config (an instance of the kind's own config class) and the job's threads
MODEL_KINDS: dict[str, Callable[[Any, int | None], Model]] = {"encoder": _encoder, "tfidf": _tfidf, "gbm": _gbm, "frozen": _frozen}


def build_model(config: ModelConfig, threads: int | None = None) -> Model:
    """The model of ``config``'s kind (``threads``: the cores a job was granted, for torch and the BLAS / OpenMP libraries)."""
    return MODEL_KINDS[config.kind](config, threads)
