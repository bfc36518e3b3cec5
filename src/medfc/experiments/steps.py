"""Workflow steps of the experiments stage, one per rule of workflow/rules/experiments.smk. The options are built
whole by the plan (:mod:`medfc.plan.experiments`); every ``info.json`` carries ``provenance``. This module imports
only options: each step imports the library it runs (a TF-IDF job never loads torch).
"""

from __future__ import annotations

from medfc.common.io import input_paths, read_json, write_json, write_jsonl
from medfc.common.options import Runtime
from medfc.common.provenance import job_record
from medfc.common.report import SkipReport
from medfc.common.stepfiles import StepFiles
from medfc.experiments.ensembles.ensemble import EnsembleOptions, average_predictions
from medfc.experiments.final.train import HealthFCFinalOptions, PairsFinalOptions, finish, train_healthfc, train_pairs
from medfc.experiments.models.options import SPLITS, FineTuneOptions, PairsTrainOptions, ZeroShotOptions
from medfc.experiments.records import RunInfo
from medfc.experiments.ensembles import stacking
from medfc.experiments.ensembles.stacking import HealthFCInnerOptions, PairsInnerOptions
from medfc.experiments.healthfc.systems import HealthFCFoldOptions


def _written(write, outputs: StepFiles, records: list, info: RunInfo, model_name: str) -> RunInfo:
    """``info`` with its provenance and the model's config name, written with the run's ``records`` by ``write``."""
    info["provenance"] = job_record()
    info["model_config_name"] = model_name
    write(outputs["predictions"], outputs["info"], records, info)
    return info


def healthfc_experiment(inputs: StepFiles, outputs: StepFiles, options: HealthFCFoldOptions, runtime: Runtime) -> RunInfo:
    """Train one HealthFC system on all folds but ``fold``, predict ``fold``."""
    from medfc.experiments.healthfc import runs as healthfc

    records, info = healthfc.run_fold(inputs["dataset"], inputs["folds"], options, threads=runtime.threads,
                                      evidence=inputs.get("evidence"))
    return _written(healthfc.write_fold, outputs, records, info, options.train.model)


def pairs_experiment(inputs: StepFiles, outputs: StepFiles, options: PairsTrainOptions, runtime: Runtime) -> RunInfo:
    """Fit a discriminative model on a pairs dataset's train split, predict ``predict_splits``."""
    from medfc.experiments.pairs import run_discriminative, write_predictions

    records, info = run_discriminative({s: inputs[s] for s in SPLITS}, options, threads=runtime.threads)
    return _written(write_predictions, outputs, records, info, options.train.model)


def clinifact_zero_shot(inputs: StepFiles, outputs: StepFiles, options: ZeroShotOptions, runtime: Runtime) -> RunInfo:
    """Zero-shot TRUE / FALSE / NONE scoring of a causal LM on the CliniFact splits."""
    from medfc.experiments.clinifact import zero_shot
    from medfc.experiments.pairs import write_predictions

    records, info = zero_shot.run_zero_shot({s: inputs[s] for s in options.splits}, options, threads=runtime.threads)
    return _written(write_predictions, outputs, records, info, options.model)


def clinifact_fine_tune(inputs: StepFiles, outputs: StepFiles, options: FineTuneOptions, runtime: Runtime) -> RunInfo:
    """LoRA fine-tuning of a causal LM on CliniFact train, its predictions scored as zero-shot."""
    from medfc.experiments.clinifact import fine_tune
    from medfc.experiments.pairs import write_predictions

    splits = dict.fromkeys(("train", "validation", *options.predict_splits))
    records, info = fine_tune.run_fine_tuned({s: inputs[s] for s in splits}, options, threads=runtime.threads)
    return _written(write_predictions, outputs, records, info, options.model)


def healthfc_inner_cv(inputs: StepFiles, outputs: StepFiles, options: HealthFCInnerOptions, runtime: Runtime) -> RunInfo:
    """A HealthFC member's out-of-fold predictions over the training claims of one run (a stacked ensemble's input)."""
    from medfc.experiments.healthfc import runs as healthfc

    records, info = stacking.healthfc_inner_cv(inputs["dataset"], inputs["folds"], options, threads=runtime.threads,
                                               evidence=inputs.get("evidence"))
    return _written(healthfc.write_fold, outputs, records, info, options.run.train.model)


def pairs_inner_cv(inputs: StepFiles, outputs: StepFiles, options: PairsInnerOptions, runtime: Runtime) -> RunInfo:
    """A pairs dataset's member's out-of-fold predictions over train + validation (a stacked ensemble's input)."""
    from medfc.experiments.pairs import write_predictions

    records, info = stacking.pairs_inner_cv(inputs["train"], inputs["validation"], options, threads=runtime.threads)
    return _written(write_predictions, outputs, records, info, options.run.train.model)


def ensemble(inputs: StepFiles, outputs: StepFiles, options: EnsembleOptions) -> RunInfo:
    """The members' ``predictions`` (a stack also their ``inner``) → the ensemble's ``predictions`` and ``info``."""
    report = SkipReport("ensemble")
    if options.method == "stack":
        from medfc.experiments.ensembles.stack_selection import stack_predictions

        records, method_info = stack_predictions(inputs["predictions"], inputs["inner"], options.members, options.stacking, report)
        method_info["stacking"] = options.stacking.as_dict()
    else:
        records = average_predictions(inputs["predictions"], options.weights, options.members, report)
        method_info = {"method": "average", "weights": dict(zip(options.members, options.weights))}
    write_jsonl(outputs["predictions"], records)
    info: RunInfo = {"system": "ensemble", "members": list(options.members), **method_info, "skips": report.as_dict(), "provenance": job_record()}
    write_json(outputs["info"], info)
    return info


def healthfc_final(inputs: StepFiles, outputs: StepFiles, options: HealthFCFinalOptions, runtime: Runtime) -> RunInfo:
    """A HealthFC row trained on every claim and kept, with its model card."""
    infos = {m: [read_json(f) for f in input_paths(inputs, f"info_{m}")] for m in options.members}
    trained = train_healthfc(inputs["dataset"], options, outputs["model"], infos=infos,
                             predictions={m: input_paths(inputs, f"oof_{m}") for m in options.members},
                             evidence=inputs.get("evidence"), threads=runtime.threads)
    data = {"dataset": inputs["dataset"], **({"evidence": inputs["evidence"]} if inputs.get("evidence") else {})}
    return finish(outputs["model"], dataset="healthfc", row=options.row, data=data, scores=list(inputs["scores"]),
                  options=options, trained=trained, provenance=job_record())


def pairs_final(inputs: StepFiles, outputs: StepFiles, options: PairsFinalOptions, runtime: Runtime) -> RunInfo:
    """A pairs dataset's row trained as the row trains and kept, with its model card."""
    splits = {s: inputs[s] for s in SPLITS}
    inner = {m: input_paths(inputs, f"oof_{m}")[0] for m in options.members if inputs.get(f"oof_{m}")}
    trained = train_pairs(splits, options, outputs["model"], inner=inner, threads=runtime.threads)
    return finish(outputs["model"], dataset=options.runs[0].data.dataset, row=options.row, data=splits,
                  scores=[inputs["scores"]], options=options, trained=trained, provenance=job_record())
