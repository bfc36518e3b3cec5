"""``medfc predict``: a kept model (:mod:`medfc.experiments.final.kept`) applied to new claims, each built by the
training code so that it is read as the run read its test claims (its rows, output and exit status: docs/experiments.md).
"""

from __future__ import annotations

import logging
import os
import sys
import time
from collections import defaultdict, deque
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from medfc.common.io import read_json, write_json, write_jsonl
from medfc.common.jsontypes import JSONValue
from medfc.common.labels import EVIDENCE_LABELS
from medfc.common.redact import redact
from medfc.common.report import SkipReport
from medfc.experiments.ensembles.ensemble import weighted_mean
from medfc.experiments.ensembles.stack_selection import Fitted
from medfc.experiments.healthfc.runs import pipeline_predict, select_evidence
from medfc.experiments.healthfc.systems import evidence_source, input_fields, system
from medfc.experiments.pairs import Pair, pair_example
from medfc.experiments.models.keeper import load_estimators
from medfc.experiments.final.kept import (CARD, ENSEMBLE_KIND, ENSEMBLE_MEMBERS, STACK_ESTIMATORS, find_model_dir,
                                          load_fitted, read_card)
from medfc.experiments.final.predict_inputs import (PAIRS, InputSpec, Row, accepted_names, describe_names, fields_of,
                                                    id_names, input_spec, read_rows, sentence_list, text, texts)
from medfc.experiments.records import Claim, Example, ModelCard, PredictedRow

if TYPE_CHECKING:  # the models load with the kept model's kind
    import argparse

    from medfc.experiments.healthfc.joint import FittedJoint
    from medfc.experiments.models.kinds import FittedModel

log = logging.getLogger(__name__)

PAIR_FIELDS = ("claim", "evidence")  # what a kept model of the one pairs path reads (and a title when there is one)
DEFAULT_MAX_PROMPT_TOKENS = 2048  # experiments.clinifact.fine_tune.max_prompt_tokens' default, for adapters without a card


def required_fields(card: ModelCard) -> tuple[str, ...]:
    """The fields every input row needs for the kept model of ``card``."""
    if fields_of(str(card["dataset"])) == PAIRS:
        return PAIR_FIELDS
    if card.get("part"):
        raise ValueError(f"this is the {card['part']} model of a kept {card['system']}; point --model-dir at the folder "
                         "above it, which holds the whole system")
    spec = system(card["system"])
    return input_fields(spec, spec.options.from_mapping(card["system_options"], where="system_options"))


def healthfc_example(card: ModelCard, rid: str, row: Mapping[str, JSONValue]) -> Example:
    """The example the system's ``reads`` makes of a new claim (as of a test claim in training)."""
    spec = system(card["system"])
    opts = spec.options.from_mapping(card["system_options"], where="system_options")
    evidence, document = texts(row.get("evidence")), texts(row.get("document"))
    claim = Claim(rid, text(row.get("claim")), "", "", text(row.get("explanation")), document or evidence,
                  [] if document else list(range(len(evidence))))
    return Example(*spec.reads(claim, opts, evidence))


def row_pair(rid: str, row: Mapping[str, JSONValue]) -> Pair:
    """A row of a pairs dataset as the pair it is (no gold label)."""
    return Pair(rid, text(row.get("claim")), text(row.get("title")), text(row.get("evidence")), None)


def _record(rid: str, labels: Sequence[str], probs: Sequence[float], evidence_ids: Sequence[int] | None = None) -> PredictedRow:
    best = max(range(len(labels)), key=lambda i: probs[i])
    out: PredictedRow = {"id": rid, "label": labels[best], "probabilities": {lab: round(float(p), 6) for lab, p in zip(labels, probs)}}
    if evidence_ids is not None:
        out["evidence_ids"] = [int(i) for i in evidence_ids]
    return out


def article_claims(rows: Sequence[tuple[str, Mapping[str, JSONValue]]]) -> list[Claim]:
    """A new claim with its article's sentences, for a system that selects evidence (no label, no gold evidence)."""
    return [Claim(rid, text(row.get("claim")), "", "", "", sentence_list(row.get("sentences")), []) for rid, row in rows]


def _check_labels(fitted: FittedModel | FittedJoint, labels: Sequence[str], what: str) -> list[str]:
    """``labels``, which must be the kept model's."""
    if list(fitted.labels) != list(labels):
        raise ValueError(f"the kept {what}'s labels {fitted.labels} are not its card's {list(labels)}")
    return list(labels)


def predict_pipeline(directory: Path, card: ModelCard, rows: Sequence[tuple[str, Row]], report: SkipReport,
                     settings: Settings) -> list[PredictedRow]:
    """The pipeline as its run predicts (:func:`medfc.experiments.healthfc.runs.run_pipeline`)."""
    parts = load_fitted(directory, card, settings.device, settings.batch_size)
    selector, veracity = parts["evidence"], parts["veracity"]
    _check_labels(selector, EVIDENCE_LABELS, "evidence selector")
    labels = _check_labels(veracity, card["labels"], "veracity model")
    spec = system(card["system"])
    opts = spec.options.from_mapping(card["system_options"], where="system_options")
    selected, probs = pipeline_predict(selector, veracity, spec, opts, article_claims(rows))
    return [_record(rid, labels, p, sel) for (rid, _), p, sel in zip(rows, probs, selected)]


def predict_joint(directory: Path, card: ModelCard, rows: Sequence[tuple[str, Row]], report: SkipReport,
                  settings: Settings) -> list[PredictedRow]:
    """The joint encoder as its run predicts (:func:`medfc.experiments.healthfc.runs.run_joint`)."""
    fitted = load_fitted(directory, card, settings.device, settings.batch_size)
    labels = _check_labels(fitted, card["labels"], "joint model")
    return [_record(rid, labels, lp, select_evidence(ep.tolist(), float(card["threshold"]), int(card["max_evidence"])))
            for (rid, _), (lp, ep) in zip(rows, fitted.predict(article_claims(rows), desc="joint/predict"))]


def predict_fitted(directory: Path, card: ModelCard, rows: Sequence[tuple[str, Row]], report: SkipReport,
                   settings: Settings) -> list[PredictedRow]:
    """The records of a kept discriminative model (any kind) on the rows."""
    fitted = load_fitted(directory, card, settings.device, settings.batch_size)
    labels = _check_labels(fitted, card["labels"], "model")  # before predicting every row
    if fields_of(str(card["dataset"])) == PAIRS:
        examples = [pair_example(row_pair(rid, row), bool(card.get("include_title", True))) for rid, row in rows]
    else:
        examples = [healthfc_example(card, rid, row) for rid, row in rows]
    return [_record(rid, labels, p) for (rid, _), p in zip(rows, fitted.probs(examples, desc="predict"))]


def predict_adapters(directory: Path, card: ModelCard, rows: Sequence[tuple[str, Row]], report: SkipReport,
                     settings: Settings) -> list[PredictedRow]:
    """The fine-tuned CliniFact system: the base causal LM (``--base-model``, else the card's) with the kept LoRA
    adapters, scored as the system's own predictions are (:func:`~medfc.experiments.clinifact.prompts.score_pairs`)."""
    from peft import PeftModel
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from medfc.common.device import resolve_device
    from medfc.experiments.models.aliases import resolve_model
    from medfc.experiments.clinifact.prompts import score_pairs
    from medfc.llm.local import TransformersLM, load_dtype

    device, batch_size = settings.device, settings.batch_size
    name = settings.base_model or card.get("model")
    if not name:
        raise ValueError(f"{directory}: the adapters name no base model; pass --base-model")
    base = resolve_model(name)
    dev = resolve_device(device)
    tokenizer = AutoTokenizer.from_pretrained(base)
    model = AutoModelForCausalLM.from_pretrained(base, dtype=load_dtype("auto", dev)).to(dev)
    model = PeftModel.from_pretrained(model, str(directory)).eval()
    scorer = TransformersLM.from_loaded(base, model, tokenizer, batch_size=batch_size)
    options = card.get("options") or {}
    limit = settings.max_prompt_tokens or int(options.get("max_prompt_tokens") or DEFAULT_MAX_PROMPT_TOKENS)
    pairs = [row_pair(rid, row) for rid, row in rows]
    records, trimmed, _ = score_pairs(scorer, tokenizer, {"predict": pairs}, "fine_tuned", limit, batch_size, report)
    if trimmed:
        report.count("prompts_trimmed", trimmed)
    # a record without a label (no option scored) is left out: a local model always scores them
    return [{"id": r["id"], "label": r["pred_label"], "probabilities": r["probs"]}
            for r in records if r["pred_label"] is not None]


@dataclass(frozen=True)
class Settings:
    """How ``medfc predict`` applies the model (for LoRA adapters: base model and prompt budget; None: the card's)."""

    device: str
    batch_size: int
    base_model: str | None
    max_prompt_tokens: int | None


# (model directory, card, usable rows, report, settings) → the output records
Predictor = Callable[[Path, ModelCard, Sequence[tuple[str, Row]], SkipReport, Settings], list[PredictedRow]]
# the kinds whose prediction is not one classifier's; every other kind is predicted by predict_fitted
KEPT_PREDICTORS: dict[str, Predictor] = {"pipeline": predict_pipeline, "joint": predict_joint, "lora": predict_adapters}


@dataclass(frozen=True)
class Applied:
    """A kept model as applied to the rows: its name (an ensemble member's alias, else ``""``), folder, card, fields."""

    name: str
    directory: Path
    card: ModelCard
    spec: InputSpec


def applied(name: str, directory: Path, card: ModelCard) -> Applied:
    """The kept model of ``card`` with the fields it reads under its dataset's names (:func:`input_spec`)."""
    gold_evidence = fields_of(str(card["dataset"])) == PAIRS or evidence_source(str(card["system"])) is None
    spec = input_spec(str(card["dataset"]), required_fields(card), str(card.get("lang") or "en"), gold_evidence)
    return Applied(name, directory, card, spec)


def read_stack(directory: Path, card: ModelCard) -> Fitted | None:
    """A kept ensemble's stack (its JSON and, where it learned one, its meta-model's regression); None for an average."""
    name = card.get("stack")
    if not name:
        return None
    plain = read_json(directory / str(name))
    if not isinstance(plain, dict):
        raise ValueError(f"{directory / str(name)}: not a kept stack (a JSON object)")
    meta = plain.get("meta")
    learned = isinstance(meta, dict) and meta.get("constant") is None
    return Fitted.from_state(plain, load_estimators(directory / STACK_ESTIMATORS)["clf"] if learned else None)


def ensemble_members(directory: Path, card: ModelCard) -> list[Applied]:
    """The members a kept ensemble applies, in order: all of an average's, those its stack combines."""
    members, weights = card.get("members"), card.get("weights")
    if not isinstance(members, list) or not members or not card.get("labels"):
        raise ValueError(f"{directory / CARD}: the ensemble's card names no members or no labels")
    stack = read_stack(directory, card)
    if stack is None and not (isinstance(weights, list) and len(weights) == len(members)):
        raise ValueError(f"{directory / CARD}: the averaged ensemble's card has no weight for each of its {len(members)} members")
    dirs = card.get("member_dirs") or {}
    found = {alias: directory / str(dirs.get(alias, f"{ENSEMBLE_MEMBERS}/{alias}"))
             for alias in (stack.members if stack is not None else [str(m) for m in members])}
    return [applied(alias, member_dir, read_card(member_dir)) for alias, member_dir in found.items()]


def combine_ensemble(directory: Path, card: ModelCard, outputs: Mapping[str, Sequence[PredictedRow]], ids: Sequence[str],
                     report: SkipReport) -> list[PredictedRow]:
    """The ensemble's record of each row from its members' ``outputs``, as the ensemble step combines them."""
    # the labels in the order a written prediction record gives them (sorted keys): the ensemble step's order
    labels = sorted(str(lab) for lab in card["labels"]) if isinstance(card["labels"], list) else []
    stack = read_stack(directory, card)
    weights = dict(zip(card["members"], card.get("weights") or []))
    names = list(outputs)
    queues: dict[str, dict[str, deque[PredictedRow]]] = {name: defaultdict(deque) for name in names}
    for name, records in outputs.items():
        for r in records:
            queues[name][r["id"]].append(r)
    out: list[PredictedRow] = []
    for rid in ids:
        recs = [queues[name][rid].popleft() if queues[name][rid] else None for name in names]
        missing = [name for name, r in zip(names, recs) if r is None]
        if missing:
            report.skip(rid, "member_without_prediction", ", ".join(missing))
            continue
        given = {name: r["probabilities"] for name, r in zip(names, recs) if r is not None}
        if stack is None:
            probs, label = weighted_mean(list(given.values()), [float(weights[name]) for name in names], labels)
        else:
            probs, label = stack.record(given, labels)
        out.append({"id": rid, "label": label, "probabilities": probs})
    return out


# the kinds of kept model that combine other kept models: the models they apply and how their records combine
COMBINED = {ENSEMBLE_KIND: (ensemble_members, combine_ensemble)}


def applied_models(directory: Path, card: ModelCard) -> list[Applied]:
    """The kept models ``medfc predict`` applies for the card: an ensemble's members, else the model itself."""
    combined = COMBINED.get(str(card["kind"]))
    return combined[0](directory, card) if combined is not None else [applied("", directory, card)]


def predict_rows(directory: Path, card: ModelCard, models: Sequence[Applied], rows: Sequence[tuple[str, Sequence[Row]]],
                 report: SkipReport, settings: Settings) -> list[PredictedRow]:
    """The output records of ``rows`` (a view per model): each model's predictor, then a combining kind's combination."""
    outputs = {}
    for k, model in enumerate(models):
        predictor = KEPT_PREDICTORS.get(str(model.card["kind"]), predict_fitted)
        outputs[model.name] = predictor(model.directory, model.card, [(rid, views[k]) for rid, views in rows], report, settings)
    combined = COMBINED.get(str(card["kind"]))
    if combined is None:
        return outputs[""]
    return combined[1](directory, card, outputs, [rid for rid, _ in rows], report)


def predict_file(model_dir: str | os.PathLike, input_path: str | os.PathLike, output: str | os.PathLike, *, device: str = "auto",
                 batch_size: int = 16, base_model: str | None = None, max_prompt_tokens: int | None = None,
                 report_path: str | os.PathLike | None = None) -> dict[str, Any]:
    """Predict every usable row of ``input_path`` into ``output``; returns the summary (also to ``report_path``)."""
    start = time.perf_counter()
    directory = find_model_dir(model_dir)
    card = read_card(directory)
    models = applied_models(directory, card)
    report = SkipReport("predict")
    dataset = str(card["dataset"])
    rows = read_rows(input_path, report, id_names(dataset))
    fields = list(dict.fromkeys(f for m in models for f in m.spec.needs))
    names = accepted_names([m.spec for m in models], dataset)
    usable: list[tuple[str, list[Row]]] = []
    for rid, row in rows:
        views = [m.spec.view(row) for m in models]
        lacking = next(((m, m.spec.missing(v)) for m, v in zip(models, views) if m.spec.missing(v)), None)
        if lacking is None:
            usable.append((rid, views))
            continue
        model, missing = lacking
        report.skip(rid, f"missing_{missing[0]}", f"{model.name + ': ' if model.name else ''}no {', '.join(missing)} "
                    f"(read from {describe_names({f: names[f] for f in missing})})")
    log.info("%s: %d rows, %d usable; model %s (%s %s, kind %s)", input_path, len(rows), len(usable), directory, card["dataset"],
             card["system"], card["kind"])
    if rows and not usable and all(s["reason"].startswith("missing_") for s in report.skipped):
        # no row has what the model reads: a file of another kind, said once (the rows' reasons in the report)
        where = Path(report_path) if report_path is not None else Path(f"{output}.report.json")
        write_json(where, {"model_dir": str(directory), "dataset": card["dataset"], "input": str(input_path), "input_fields": fields,
                           "field_names": names, "file_fields": file_fields(rows), "predicted": 0, "skipped": len(report.skipped),
                           "skipped_by_reason": report.reasons(), "skipped_rows": report.skipped})
        raise ValueError(f"{input_path} is not a file this {card['dataset']} model reads: it needs "
                         f"{', '.join(fields)} ({describe_names({f: names[f] for f in fields})}), the file has "
                         f"{', '.join(file_fields(rows)) or 'no field'}; each row's reason is in {where}")
    settings = Settings(device, batch_size, base_model, max_prompt_tokens)
    records = predict_rows(directory, card, models, usable, report, settings) if usable else []
    write_jsonl(output, records)
    summary = {"model_dir": str(directory), "dataset": card["dataset"], "system": card.get("system"),
               "kind": card["kind"], "model": card.get("model"), "labels": card.get("labels"), "input_fields": fields,
               "field_names": names, "members": [m.name for m in models if m.name], "input": str(input_path),
               "rows": len(rows) + len([s for s in report.skipped if s["reason"] in ("not_json", "not_an_object")]),
               "predicted": len(records), "skipped": len(report.skipped), "skipped_by_reason": report.reasons(),
               "skipped_rows": [s["id"] for s in report.skipped], "counts": dict(report.counts),
               "seconds": round(time.perf_counter() - start, 3)}
    if report_path is not None:
        write_json(report_path, summary)
    return summary


def file_fields(rows: Sequence[tuple[str, Row]], limit: int = 1000) -> list[str]:
    """The fields the first ``limit`` rows of a file give, in their order of first appearance."""
    return list(dict.fromkeys(str(k) for _, row in rows[:limit] for k in row))


def format_summary(summary: Mapping[str, Any]) -> str:
    """The report printed at the end of ``medfc predict``."""
    members = f"; members {', '.join(summary['members'])}" if summary["members"] else ""
    lines = [f"medfc predict: {summary['predicted']} of {summary['rows']} rows predicted with {summary['dataset']} "
             f"{summary['system']} ({summary['kind']}: {summary['model']}{members}) in {summary['seconds']:.1f} s"]
    if summary["skipped"]:
        reasons = ", ".join(f"{k}: {v}" for k, v in summary["skipped_by_reason"].items())
        shown = summary["skipped_rows"][:10]
        more = f" and {len(summary['skipped_rows']) - len(shown)} more" if len(summary["skipped_rows"]) > len(shown) else ""
        lines.append(f"skipped {summary['skipped']} rows ({reasons}): {', '.join(shown)}{more}")
    if not summary["predicted"] or any(k.startswith("missing_") for k in summary["skipped_by_reason"]):
        lines.append(f"a row needs {', '.join(summary['input_fields'])}; each field is read from the first of its names a row "
                     f"gives ({describe_names(summary['field_names'])})")
    if not summary["rows"]:
        lines.append(f"{summary['input']} holds no rows")
    for key, n in sorted(summary["counts"].items()):
        lines.append(f"{key}: {n}")
    return "\n".join(lines)


def main(args: argparse.Namespace) -> int:
    """The ``predict`` subcommand: 0 when it predicted a row, else 1 (an error: one line on stderr)."""
    logging.basicConfig(level=logging.WARNING if not args.verbose else logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    skips = logging.getLogger(SkipReport.__module__)
    level = skips.level
    if not args.verbose:  # a skipped row's reason goes to the summary and the report, not a line each on the terminal
        skips.setLevel(logging.ERROR)
    try:
        summary = predict_file(args.model_dir, args.input, args.output, device=args.device, batch_size=args.batch_size,
                               base_model=args.base_model, max_prompt_tokens=args.max_prompt_tokens, report_path=args.report)
    except (OSError, ValueError, ImportError) as exc:
        if args.verbose:
            log.exception("medfc predict failed")
        print(f"medfc predict: {error_line(exc)}", file=sys.stderr)
        return 1
    finally:
        skips.setLevel(level)
    print(format_summary(summary), file=sys.stderr)
    return 0 if summary["predicted"] else 1


def error_line(exc: BaseException) -> str:
    """An error as one line (whitespace collapsed, credentials redacted); an OSError names its file."""
    message = str(exc)
    if isinstance(exc, OSError) and exc.filename is not None and exc.strerror:
        message = f"{exc.filename}: {exc.strerror}"
    return redact(" ".join(message.split())) or type(exc).__name__
