"""One model interface for every kind the experiments train: ``build_model(config, threads)`` →
``model.fit(examples, labels, validation)`` → ``fitted.probs(examples)`` in the order of ``labels``. Each kind's module
is imported when its model is made (a TF-IDF job never loads torch)."""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from medfc.common.options import Options
from medfc.common.registry import lazy
from medfc.experiments.records import Example
from medfc.experiments.models.keeper import Keeper
from medfc.experiments.models.options import ModelConfig

if TYPE_CHECKING:  # each kind's module loads torch or scikit-learn: imported where a model of it is made, kept or loaded
    import numpy as np


class FittedModel(Protocol):
    """A fitted model: its ``labels``, what the fit did (``result``) and the inputs it cut (``encode_stats``), both
    with ``as_dict()`` for the info files, and ``probs``."""

    labels: list[str]
    result: Any
    encode_stats: Any

    def probs(self, examples: Sequence[Example], desc: str = "predict") -> np.ndarray: ...


class Model(Protocol):
    config: Options  # the config as run: its kind's options class (MODEL_CONFIGS)
    def fit(self, examples: Sequence[Example], labels: Sequence[str], validation: Sequence[Example] | None = None, *,
            checkpoint_dir: str | os.PathLike | None = None, trim: str = "right", desc: str = "train") -> FittedModel: ...


@dataclass(frozen=True)
class ModelKind:
    """A kind's ``build`` (config, threads → model) and ``kept`` (how ``medfc predict`` keeps and loads it; None: not kept)."""

    build: Callable[[Any, int | None], Model]
    kept: Keeper | None = None


def _kind(name: str, model: str) -> ModelKind:
    """A kind of ``medfc.experiments.models.<name>``: its ``model`` class, ``keep_<name>`` and ``load_<name>``."""
    where = f"medfc.experiments.models.{name}"
    return ModelKind(lazy(f"{where}:{model}"), Keeper(lazy(f"{where}:keep_{name}"), lazy(f"{where}:load_{name}")))


# kind → its implementation: its model and its keeper
MODEL_KINDS: dict[str, ModelKind] = {"encoder": _kind("encoder", "EncoderModel"), "tfidf": _kind("tfidf", "TfidfModel"),
                                     "gbm": _kind("gbm", "GbmModel"), "frozen": _kind("frozen", "FrozenModel")}


def build_model(config: ModelConfig, threads: int | None = None) -> Model:
    """The model of ``config``'s kind (``threads``: the cores a job was granted, for torch and the BLAS / OpenMP libraries)."""
    return MODEL_KINDS[config.kind].build(config, threads)
