"""Workflow steps of the experiments stage (rules in workflow/rules/experiments.smk): training and
inference, one job per HealthFC (lang, model, system, fold) and per CliniFact model. Scoring is
:mod:`medfc.scoring.steps`, tables :mod:`medfc.tables.steps`, figures :mod:`medfc.figures.steps`.

``healthfc_experiment``
    inputs ``dataset`` (HealthFC JSONL), ``folds`` (``id,fold`` CSV); outputs ``predictions`` (JSONL),
    ``info`` (JSON).
``clinifact_experiment``
    inputs ``train``, ``validation``, ``test`` (release-format CSVs); outputs ``predictions``, ``info``.
``clinifact_zero_shot``
    inputs one CSV per split named in ``options.splits``; outputs ``predictions``, ``info``.
``clinifact_fine_tune``
    inputs ``train``, ``validation``, ``test``; outputs ``predictions``, ``info``; the LoRA adapters go
    to ``options.save_dir``/adapters (not a workflow output).

``train`` is an encoder's training config (a model may be ``offline:minilm``, the packaged
all-MiniLM-L6-v2) or, for a model ``sklearn:tfidf``, the TF-IDF baseline's (``experiments.tfidf``). With a
``checkpoint_dir`` an encoder's checkpoints are written there; ``null`` keeps the best weights in memory
and writes nothing (``experiments.keep_checkpoints: false``, the default).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any, Literal

from medfc.common.options import Options, Runtime, set_torch_threads
from medfc.common.report import SkipReport
from medfc.experiments.clinifact import ZeroShotOptions
from medfc.experiments.clinifact_finetune import FineTuneOptions
from medfc.experiments.gbm import GbmOptions
from medfc.experiments.models import resolve_model, resolved
from medfc.experiments.systems import SYSTEM_OPTIONS
from medfc.experiments.tfidf import TfidfOptions
from medfc.experiments.training import TrainConfig

log = logging.getLogger(__name__)

@dataclass(frozen=True)
class HealthFCFoldOptions(Options):
    """One HealthFC run: its wildcards, the merged training config, the system's own options
    (:data:`medfc.experiments.systems.SYSTEM_OPTIONS`) and where checkpoints go (null: nowhere)."""

    system: Literal["pipeline", "joint", "oracle", "claims_only", "gold_explanations", "level_of_evidence",
                    "retrieved_web", "retrieved_pubmed", "retrieved_wikipedia",
                    "open_domain_web", "open_domain_pubmed", "open_domain_wikipedia"]
    lang: Literal["en", "de"]
    fold: int
    train: TrainConfig | TfidfOptions
    system_options: dict[str, Any]
    checkpoint_dir: str | None


@dataclass(frozen=True)
class CliniFactTrainOptions(Options):
    """``experiments.clinifact`` (fine-tuning) with the merged training config."""

    train: TrainConfig | TfidfOptions | GbmOptions
    include_title: bool
    predict_splits: tuple[str, ...]
    checkpoint_dir: str | None


def healthfc_experiment(inputs: dict[str, Any], outputs: dict[str, Any], options: HealthFCFoldOptions, runtime: Runtime) -> dict[str, Any]:
    """Train one HealthFC system on all folds but ``fold``, predict ``fold``."""
    from medfc.experiments import healthfc

    set_torch_threads(runtime.threads)
    system_options = SYSTEM_OPTIONS[options.system].from_mapping(options.system_options, where=f"experiments.healthfc[{options.system}]")
    report = SkipReport(f"healthfc-{options.system}-fold{options.fold}")
    records, info = healthfc.run_fold(inputs["dataset"], inputs["folds"], options.fold, options.system, resolved(options.train),
                                      system_options, options.lang, options.checkpoint_dir, report=report,
                                      evidence=inputs.get("evidence"))
    info["model_config_name"] = options.train.model
    healthfc.write_fold(outputs["predictions"], outputs["info"], records, info)
    return info


def clinifact_experiment(inputs: dict[str, Any], outputs: dict[str, Any], options: CliniFactTrainOptions, runtime: Runtime) -> dict[str, Any]:
    """Fine-tune a discriminative model on CliniFact train, best validation macro-F1, predict test."""
    from medfc.experiments import clinifact

    set_torch_threads(runtime.threads)
    records, info = clinifact.run_discriminative(
        inputs["train"], inputs["validation"], inputs["test"], resolved(options.train),
        checkpoint_dir=options.checkpoint_dir, include_title=options.include_title, predict_splits=options.predict_splits,
    )
    info["model_config_name"] = options.train.model
    clinifact.write_predictions(outputs["predictions"], outputs["info"], records, info)
    return info


def clinifact_zero_shot(inputs: dict[str, Any], outputs: dict[str, Any], options: ZeroShotOptions, runtime: Runtime) -> dict[str, Any]:
    """Zero-shot TRUE / FALSE / NONE scoring of a causal LM on the CliniFact splits."""
    from medfc.experiments import clinifact

    set_torch_threads(runtime.threads)
    opts = options
    if opts.backend == "transformers":
        opts = opts.replace(model=resolve_model(opts.model))
    if opts.tokenizer:
        opts = opts.replace(tokenizer=resolve_model(opts.tokenizer))
    records, info = clinifact.run_zero_shot({s: inputs[s] for s in opts.splits}, opts)
    info["model_config_name"] = options.model
    clinifact.write_predictions(outputs["predictions"], outputs["info"], records, info)
    return info


def clinifact_fine_tune(inputs: dict[str, Any], outputs: dict[str, Any], options: FineTuneOptions, runtime: Runtime) -> dict[str, Any]:
    """LoRA fine-tuning of a causal LM on CliniFact train (the lowest validation cross-entropy kept), its
    predictions scored as zero-shot (system ``fine_tuned``)."""
    from medfc.experiments import clinifact, clinifact_finetune

    set_torch_threads(runtime.threads)
    opts = options.replace(model=resolve_model(options.model))
    splits = dict.fromkeys(("train", "validation", *opts.predict_splits))
    records, info = clinifact_finetune.run_fine_tuned({s: inputs[s] for s in splits}, opts)
    info["model_config_name"] = options.model
    clinifact.write_predictions(outputs["predictions"], outputs["info"], records, info)
    return info


@dataclass(frozen=True)
class EnsembleOptions(Options):
    """An ensemble of ``models.ensembles``: its member aliases (the order of the ``predictions`` inputs)
    and their weights."""

    members: tuple[str, ...]
    weights: tuple[float, ...]


def ensemble(inputs: dict[str, Any], outputs: dict[str, Any], options: EnsembleOptions) -> dict[str, Any]:
    """The members' ``predictions`` (a list, in member order) → their weighted average ``predictions``
    and ``info`` (members, weights, the items left out and why)."""
    from medfc.common.io import write_json, write_jsonl
    from medfc.experiments.ensemble import average_predictions

    report = SkipReport("ensemble")
    records = average_predictions(inputs["predictions"], options.weights, options.members, report)
    write_jsonl(outputs["predictions"], records)
    info = {"system": "ensemble", "members": list(options.members), "weights": list(options.weights), "skips": report.as_dict()}
    write_json(outputs["info"], info)
    return info
