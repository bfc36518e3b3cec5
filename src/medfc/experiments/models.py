"""Which model a run trains: a fine-tuned encoder (:class:`TrainConfig`), the TF-IDF baseline
(:class:`TfidfOptions`) or gradient boosting over CliniFact features (:class:`GbmOptions`), behind one
``fit_model`` with the same ``probs`` interface."""

from __future__ import annotations

import os
from collections.abc import Sequence

from medfc.common.offline_models import resolve_offline
from medfc.experiments.classifier import Example, FittedClassifier, fit_classifier
from medfc.experiments.gbm import FittedGbm, GbmOptions, fit_gbm
from medfc.experiments.tfidf import FittedTfidf, TfidfOptions, fit_tfidf
from medfc.experiments.training import TrainConfig

ModelConfig = TrainConfig | TfidfOptions | GbmOptions


def resolve_model(name: str) -> str:
    """A config model name → a path or hub name: ``offline:minilm`` / ``offline:mpnet`` are the local
    all-MiniLM-L6-v2 / all-mpnet-base-v2 (``medfc.common.offline_models``)."""
    return resolve_offline(name) if name.startswith("offline:") else name


def resolved(cfg: ModelConfig) -> ModelConfig:
    """The config with its model resolved (an encoder's ``offline:`` name; the TF-IDF baseline as it is)."""
    return cfg.replace(model=resolve_model(cfg.model)) if isinstance(cfg, TrainConfig) else cfg


def fit_model(cfg: ModelConfig, labels: Sequence[str], train_examples: Sequence[Example], val_examples: Sequence[Example] | None = None,
              *, checkpoint_dir: str | os.PathLike | None = None, trim: str = "right", desc: str = "train") -> FittedClassifier | FittedTfidf | FittedGbm:
    """Fit the model ``cfg`` describes; with validation examples the best epoch (encoder) or ``C`` (TF-IDF)
    is chosen on them."""
    if isinstance(cfg, TfidfOptions):
        return fit_tfidf(cfg, labels, train_examples, val_examples, desc=desc)
    if isinstance(cfg, GbmOptions):
        return fit_gbm(cfg, labels, train_examples, val_examples, desc=desc)
    return fit_classifier(cfg, labels, train_examples, val_examples, checkpoint_dir=checkpoint_dir, trim=trim, desc=desc)
