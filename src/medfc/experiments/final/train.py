"""Final models (``experiments.final``): a table's row trained once more on all the data its recipe allows and
kept (:mod:`medfc.experiments.final.kept`) for ``medfc predict``, with ``final`` added to its card (row, data, scores,
options, provenance) and a ``README.md`` model card. HealthFC trains every claim, each encoder for the mean epoch its
cross-validation kept; a pairs dataset's row trains as it does now (docs/experiments.md).
"""

from __future__ import annotations

import os
import shutil
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from medfc.common.io import read_json, write_json
from medfc.common.options import Options
from medfc.common.pinning import sha256_of
from medfc.common.report import SkipReport
from medfc.experiments.ensembles.ensemble import EnsembleOptions
from medfc.experiments.final.kept import CARD, ENSEMBLE_MEMBERS, keep_ensemble
from medfc.experiments.models.options import PairsTrainOptions
from medfc.experiments.healthfc.systems import HealthFCFoldOptions

WORK = ".training"  # the runs' checkpoint folders while the job trains (removed when it is done)
README = "README.md"


@dataclass(frozen=True)
class HealthFCFinalOptions(Options):
    """``healthfc_final``: the row, each member's run and the ensemble (None: one model)."""

    row: str
    members: tuple[str, ...]
    runs: tuple[HealthFCFoldOptions, ...]
    ensemble: EnsembleOptions | None


@dataclass(frozen=True)
class PairsFinalOptions(Options):
    """``pairs_final``: the row's name, each member's run as the row trains it, and the ensemble (None: one model)."""

    row: str
    members: tuple[str, ...]
    runs: tuple[PairsTrainOptions, ...]
    ensemble: EnsembleOptions | None


def kept_epoch(train: Mapping[str, object]) -> int | None:
    """The epoch a training run kept: its best epoch with early stopping, else the epochs it ran (None: no epochs)."""
    best, ran = train.get("best_epoch"), train.get("epochs_run")
    value = best if isinstance(best, int) and best > 0 else ran
    return int(value) if isinstance(value, int) and value > 0 else None


def cv_epochs(infos: Sequence[Mapping[str, object]], part: str) -> int | None:
    """The mean over a row's folds of the epoch each kept for ``part``, at least 1 (None: no epochs)."""
    kept = [e for e in (kept_epoch(info[part]["train"]) for info in infos) if e is not None]
    return max(1, round(statistics.fmean(kept))) if kept else None


def with_cv_epochs(run: HealthFCFoldOptions, infos: Sequence[Mapping[str, object]]) -> HealthFCFoldOptions:
    """A member's run for its final model: its encoders trained for the epochs its cross-validation kept."""
    def epochs_of(config: Options, part: str) -> Options:
        epochs = cv_epochs(infos, part) if hasattr(config, "epochs") else None
        return config.replace(epochs=float(epochs)) if epochs is not None else config

    options = run.replace(train=epochs_of(run.train, "veracity_model" if "evidence_train" in run.system_options.as_dict() else "model"))
    evidence = getattr(options.system_options, "evidence_train", None)
    if evidence is not None:
        options = options.replace(system_options=options.system_options.replace(evidence_train=epochs_of(evidence, "evidence_model")))
    return options


def train_healthfc(dataset: str | os.PathLike, options: HealthFCFinalOptions, directory: str | os.PathLike, *,
                   infos: Mapping[str, Sequence[Mapping[str, object]]], predictions: Mapping[str, Sequence[str]],
                   evidence: str | os.PathLike | None = None, threads: int | None = None) -> dict[str, object]:
    """Train each member of a HealthFC row on every claim and keep it under ``directory`` (a member: in
    ``members/<alias>``), for the epochs of its cross-validation ``infos``; a stack is fitted on their
    cross-validation ``predictions``. Returns what the card records."""
    from medfc.experiments.healthfc.runs import run_fold

    directory = Path(directory)
    trained: dict[str, object] = {}
    for alias, run in zip(options.members, options.runs):
        run = with_cv_epochs(run, infos[alias])
        work = directory / WORK / alias
        _, info = run_fold(dataset, None, run.replace(checkpoint_dir=str(work)), threads=threads, evidence=evidence)
        target = directory / ENSEMBLE_MEMBERS / alias if options.ensemble else directory
        target.mkdir(parents=True, exist_ok=True)
        for item in (work / run.system).iterdir():  # the run's kept model: its card and files
            shutil.move(str(item), str(target / item.name))
        trained[alias] = {"epochs": getattr(run.train, "epochs", None), "n_train": info["n_train"]}
    shutil.rmtree(directory / WORK, ignore_errors=True)
    if options.ensemble is not None:
        _keep_ensemble(directory, options.members, options.ensemble, [list(predictions[m]) for m in options.members])
    return {"trained": trained}


def train_pairs(splits: Mapping[str, str | os.PathLike], options: PairsFinalOptions, directory: str | os.PathLike, *,
                inner: Mapping[str, str], threads: int | None = None) -> dict[str, object]:
    """Train each member of a pairs dataset's row as the row does and keep it (a stack: on ``inner``)."""
    from medfc.experiments.pairs import run_discriminative

    directory = Path(directory)
    trained: dict[str, object] = {}
    for alias, run in zip(options.members, options.runs):
        target = directory / ENSEMBLE_MEMBERS / alias if options.ensemble else directory
        _, info = run_discriminative(splits, run.replace(checkpoint_dir=str(target)), threads=threads)
        trained[alias] = {"sizes": info["sizes"]}
    if options.ensemble is not None:
        _keep_ensemble(directory, options.members, options.ensemble, [[inner[m]] for m in options.members])
    return {"trained": trained}


def _keep_ensemble(directory: Path, members: Sequence[str], ensemble: EnsembleOptions, out_of_fold: Sequence[Sequence[str]]) -> None:
    """The ensemble's card over its kept members: an average's weights, or the stack chosen on ``out_of_fold``."""
    if ensemble.method != "stack":
        keep_ensemble(directory, members=members, method="average", weights=list(ensemble.weights))
        return
    from medfc.experiments.ensembles.stack_selection import fit_stack

    choice = fit_stack(out_of_fold, members, ensemble.stacking, SkipReport("final-stack"))
    keep_ensemble(directory, members=members, method="stack", stacked=choice.fitted)


def _metrics(scores: object) -> Mapping[str, object]:
    """A scores file's headline metrics: a HealthFC run's veracity scores, a CliniFact run's own."""
    if not isinstance(scores, Mapping):
        return {}
    veracity = scores.get("veracity")
    return veracity if isinstance(veracity, Mapping) else scores


def row_scores(files: Sequence[str | os.PathLike]) -> dict[str, object]:
    """The row's scores as its table reads them: one file's, or each fold's with their mean macro-F1 and accuracy."""
    scores = [read_json(f) for f in files]
    if len(scores) == 1:
        return {"scores": scores[0]}
    values = {key: [m[key] for m in map(_metrics, scores) if isinstance(m.get(key), int | float)]
              for key in ("macro_f1", "accuracy")}
    return {"folds": scores, "mean": {key: round(statistics.fmean(v), 4) for key, v in values.items() if v}}


def finish(directory: str | os.PathLike, *, dataset: str, row: str, data: Mapping[str, str | os.PathLike], scores: Sequence[str | os.PathLike],
           options: Options, trained: Mapping[str, object], provenance: Mapping[str, object]) -> dict[str, object]:
    """Add ``final`` to the kept model's card and write its README (the model card for people); returns ``final``."""
    directory = Path(directory)
    card_path = directory / CARD
    card = read_json(card_path)
    final: dict[str, object] = {
        "row": row, "dataset": dataset,
        "data": {name: {"path": str(path), "sha256": sha256_of(path)} for name, path in data.items()},
        "table_scores": row_scores(scores), "options": options.to_mapping(sort_keys=True), **trained, "provenance": dict(provenance),
    }
    card = {k: v for k, v in card.items() if k != "fold"}  # trained on every fold
    write_json(card_path, {**card, "final": final})
    write_readme(directory / README, card, final)
    return final


def write_readme(path: Path, card: Mapping[str, object], final: Mapping[str, object]) -> None:
    """The model card (Hugging Face's format: YAML metadata, then prose), written by huggingface_hub."""
    import json

    from huggingface_hub import ModelCard, ModelCardData

    scores = final["table_scores"]  # the headline: the mean macro-F1 over the folds, else the test macro-F1
    metric, value = (("cross-validation macro-F1", scores["mean"].get("macro_f1")) if "mean" in scores
                     else ("test macro-F1", _metrics(scores["scores"]).get("macro_f1")))
    dataset = str(final["dataset"])
    data = ModelCardData(library_name="medfc", tags=["fact-checking", "medical", dataset], datasets=[dataset],
                         metrics=["f1"], model_name=str(final["row"]))
    provenance = final.get("provenance") or {}
    software = provenance.get("software") if isinstance(provenance, Mapping) else None
    lines = [
        f"# {final['row']} ({dataset}, final)", "",
        f"The row `{final['row']}` of the {dataset} table, trained on all the data its recipe allows and kept for `medfc predict`.", "",
        f"- system: `{card.get('system')}`, kind: `{card.get('kind')}`" + (f", members: {', '.join(card.get('members') or [])}" if card.get("members") else ""),
        f"- labels: {', '.join(map(str, card.get('labels') or []))}",
        f"- input fields: {', '.join(map(str, card.get('input_fields') or []))}",
        f"- {metric} of the row in its table: {value if value is not None else 'n/a'}", "",
        "## Data", "",
        *[f"- `{name}`: `{d['path']}` (sha256 `{d['sha256']}`)" for name, d in final["data"].items()], "",
        "## Training", "", "```json", json.dumps(final.get("trained"), indent=1, sort_keys=True, default=str), "```", "",
        "## Scores in the table", "", "```json", json.dumps(final["table_scores"], indent=1, sort_keys=True, default=str), "```", "",
        "## Provenance", "", "```json", json.dumps({"software": software, "device": provenance.get("device") if isinstance(provenance, Mapping) else None},
                                                   indent=1, sort_keys=True, default=str), "```", "",
        "The whole run options are in `medfc_model.json` (`final.options`).", "",
        "Apply it: `medfc predict --model-dir <this folder> --input claims.jsonl --output predictions.jsonl`.",
    ]
    content = f"---\n{data.to_yaml()}\n---\n\n" + "\n".join(lines) + "\n"
    ModelCard(content).save(path)
