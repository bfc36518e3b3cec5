"""AVeriTeC scoring with the official evaluation script's definitions (docs/scoring.md, "Definitions").
AVeriTeC-JSON strings are scored ``verbatim``; the workflow's JSONL strings are whitespace-normalised and blank ones
dropped."""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from medfc.common.jsontypes import JSONObject, JSONValue
from medfc.scoring.classification import classification_scores

AVERITEC_LABELS: tuple[str, ...] = ("Supported", "Refuted", "Conflicting evidence/Cherrypicking", "Not enough evidence")
LAMBDAS: tuple[float, ...] = (0.1, 0.2, 0.25, 0.3, 0.4, 0.5)
REPORTED_LAMBDA = 0.25
CLAIM_TYPE_LAMBDAS: tuple[float, ...] = (0.2, 0.3)
MAX_PRED_EVIDENCE = 10
NO_ANSWER = "No answer could be found."

PairMetric = Callable[[str, str], float]  # metric(prediction, gold): METEOR by default

_LABEL_BY_KEY = {lab.lower(): lab for lab in AVERITEC_LABELS}
# spellings seen in AVeriTeC files and scorers
_LABEL_BY_KEY.update({"conflicting evidence/cherry-picking": AVERITEC_LABELS[2], "nei": AVERITEC_LABELS[3]})


def normalise_label(label: object) -> str:
    """Map case/spelling variants ("Not Enough Evidence") to the canonical AVeriTeC label; anything else is
    returned stripped (and counts as a wrong prediction)."""
    text = "" if label is None else str(label).strip()
    return _LABEL_BY_KEY.get(text.lower(), text)


def _prepare(strings: Iterable[object], clean: bool = True) -> list[str]:
    """Whitespace-normalised non-blank strings (``clean``), or the strings exactly as given."""
    if clean:
        return [" ".join(str(s).split()) for s in strings if s is not None and str(s).strip()]
    return ["" if s is None else str(s) for s in strings]


def _default_metric() -> PairMetric:
    from medfc.scoring.meteor import default_meteor

    return default_meteor()


def evidence_score(pred: Sequence[str], gold: Sequence[str], metric: PairMetric | None = None, max_pred: int | None = MAX_PRED_EVIDENCE,
                   clean: bool = True) -> float:
    """Hungarian-matched score of one claim's predicted strings against its gold strings (no gold and no prediction:
    1.0; either missing: 0.0). ``clean=False`` scores the strings exactly as given."""
    from scipy.optimize import linear_sum_assignment  # here: a score job without evidence never loads scipy.optimize (1.5 s)

    pred = _prepare(pred, clean)[:max_pred]  # max_pred None: every one
    gold = _prepare(gold, clean)
    if not gold:
        return 1.0 if not pred else 0.0
    if not pred:
        return 0.0
    metric = metric or _default_metric()
    mat = np.array([[metric(p, g) for g in gold] for p in pred], dtype=float)
    rows, cols = linear_sum_assignment(mat, maximize=True)
    return float(mat[rows, cols].sum()) / len(gold)


@dataclass
class ClaimPrediction:
    """One claim with its gold and predicted label, evidence, questions and justification (None: the prediction has
    none; ``gold_questions`` None: no question-only score). ``verbatim``: the strings as given (AVeriTeC JSON)."""

    id: str
    label: str
    pred_label: str
    gold_evidence: list[str] = field(default_factory=list)
    evidence: list[str] = field(default_factory=list)
    gold_justification: str | None = None
    justification: str | None = None
    gold_questions: list[str] | None = None
    questions: list[str] | None = None
    claim_types: list[str] = field(default_factory=list)
    verbatim: bool = False


def question_only_score(claim: ClaimPrediction, metric: PairMetric | None = None, max_pred: int | None = MAX_PRED_EVIDENCE) -> float | None:
    """The score of the questions (without questions: the evidence strings); None without gold questions."""
    if claim.gold_questions is None:
        return None
    pred = claim.questions if claim.questions is not None else claim.evidence
    return evidence_score(pred, claim.gold_questions, metric, max_pred, clean=not claim.verbatim)


def _justification_meteor(claim: ClaimPrediction, metric: PairMetric, fallback: bool, max_pred: int | None) -> float:
    """METEOR of the predicted justification; without one, and with ``fallback``, of the first ``max_pred`` evidence
    strings joined with spaces (official); 0 when it or the gold one is blank."""
    pred = None if claim.justification is None else str(claim.justification)
    if pred is None and fallback:
        pred = " ".join(_prepare(claim.evidence, clean=not claim.verbatim)[:max_pred])
    gold = claim.gold_justification
    if not (pred and pred.strip() and gold and gold.strip()):
        return 0.0
    if claim.verbatim:
        return metric(pred, gold)
    return metric(" ".join(pred.split()), " ".join(gold.split()))


def score_claims(claims: Sequence[ClaimPrediction], lambdas: Sequence[float] = LAMBDAS, metric: PairMetric | None = None,
                 max_pred: int | None = MAX_PRED_EVIDENCE, per_claim: bool = False, justification_fallback: bool = True,
                 claim_type_lambdas: Sequence[float] = CLAIM_TYPE_LAMBDAS) -> dict[str, object]:
    """Score claims into a JSON-able dict (keys in docs/scoring.md); the justification scores are gated at λ
    (scores ≤ λ count 0) and by claim type at ``claim_type_lambdas``, the label playing no part."""
    metric = metric or (_default_metric() if claims else None)
    gold_labels = [normalise_label(c.label) for c in claims]
    pred_labels = [normalise_label(c.pred_label) for c in claims]
    for c, g in zip(claims, gold_labels):
        if g not in AVERITEC_LABELS:
            raise ValueError(f"claim {c.id}: gold label {c.label!r} is not an AVeriTeC label")
    label_scores = classification_scores(gold_labels, pred_labels, AVERITEC_LABELS)

    ev = np.array([evidence_score(c.evidence, c.gold_evidence, metric, max_pred, clean=not c.verbatim) for c in claims], dtype=float)
    right = np.array([g == p for g, p in zip(gold_labels, pred_labels)], dtype=bool)
    averitec = _averitec_at(right, ev, lambdas)

    q_only = [question_only_score(c, metric, max_pred) for c in claims]
    q_scored = [q for q in q_only if q is not None]

    has_just = np.array([bool(c.gold_justification and c.gold_justification.strip()) for c in claims], dtype=bool)
    just = np.array([_justification_meteor(c, metric, justification_fallback, max_pred) if h else 0.0
                     for c, h in zip(claims, has_just)], dtype=float)  # type: ignore[arg-type]
    justification = None
    if has_just.any():
        justification = {"n": int(has_just.sum()), "meteor": float(just[has_just].mean()),
                         "gated": {lambda_key(lam): float(np.where(ev > lam, just, 0.0)[has_just].mean()) for lam in lambdas},
                         "fallback": bool(justification_fallback),
                         "n_from_evidence": sum(bool(justification_fallback and h and c.justification is None) for c, h in zip(claims, has_just))}

    by_type: dict[str, list[float]] = {}
    for c, e in zip(claims, ev):
        for t in c.claim_types:
            by_type.setdefault(str(t), []).append(float(e))
    type_scores = None
    if by_type:
        type_scores = {lambda_key(lam): {t: float(np.mean([e if e > lam else 0.0 for e in v])) for t, v in by_type.items()}
                       for lam in claim_type_lambdas}

    out: dict[str, object] = {
        "n": len(claims), "label": label_scores, "question_only_score": float(np.mean(q_scored)) if q_scored else None,
        "n_question_only": len(q_scored), "n_questions_from_evidence": sum(c.gold_questions is not None and c.questions is None for c in claims),
        "evidence_score": float(ev.mean()) if len(claims) else 0.0, "averitec": averitec, "reported_lambda": lambda_key(REPORTED_LAMBDA),
        "justification": justification, "evidence_score_by_claim_type": type_scores, "n_by_claim_type": {t: len(v) for t, v in by_type.items()},
        "n_no_gold_evidence": sum(not _prepare(c.gold_evidence, not c.verbatim) for c in claims),
        "n_no_pred_evidence": sum(not _prepare(c.evidence, not c.verbatim) for c in claims),
        "n_pred_evidence_truncated": sum(max_pred is not None and len(_prepare(c.evidence, not c.verbatim)) > max_pred for c in claims)}
    if per_claim:
        out["claims"] = [{"id": c.id, "label": g, "pred_label": p, "correct": bool(r), "evidence_score": float(e),
                          **({"question_only_score": q} if q is not None else {}), **({"justification_meteor": float(j)} if h else {}),
                          **({"claim_types": list(c.claim_types)} if c.claim_types else {})}
                         for c, g, p, r, e, q, j, h in zip(claims, gold_labels, pred_labels, right, ev, q_only, just, has_just)]
    return out


def lambda_key(lam: float) -> str:
    return f"{lam:g}"


def _text(value: object) -> str:
    return "" if value is None else str(value)


def averitec_evidence_strings(example: Mapping[str, JSONValue]) -> list[str]:
    """Evidence strings of one example in the AVeriTeC shape, exactly as the official script builds them (nothing
    stripped or dropped). Also accepted (not by the official script): an answer as a plain string, ``answers`` as
    one answer or null, and ``evidence`` (``{question, answer}`` or strings), placed before ``string_evidence``."""
    strings: list[str] = []
    for qa in example.get("questions") or []:
        question = _text(qa.get("question"))
        answers = qa.get("answers")
        if answers is None:
            answers = []
        elif not isinstance(answers, list):
            answers = [answers]
        for ans in answers:
            if isinstance(ans, Mapping):
                text = question + " " + _text(ans.get("answer"))
                if ans.get("answer_type") == "Boolean":
                    text += ". " + _text(ans.get("boolean_explanation"))
            else:
                text = question + " " + _text(ans)
            strings.append(text)
        if not answers:
            strings.append(question + " " + NO_ANSWER)
    for ev in example.get("evidence") or []:
        pair = isinstance(ev, Mapping)
        strings.append(_text(ev.get("question")) + " " + _text(ev.get("answer")) if pair else _text(ev))
    strings.extend(_text(s) for s in example.get("string_evidence") or [])
    return strings


def averitec_questions(example: Mapping[str, JSONValue]) -> list[str] | None:
    """The question texts of an AVeriTeC example, or None when it has no ``questions`` key."""
    if example.get("questions") is None:
        return None
    return [_text(qa.get("question")) for qa in example["questions"]]


def read_averitec_json(path: str | os.PathLike) -> list[JSONObject]:
    """A JSON list of AVeriTeC examples (a JSONL file is accepted too)."""
    text = Path(path).read_text(encoding="utf-8")
    is_list = text.lstrip().startswith("[")
    data = json.loads(text) if is_list else [json.loads(line) for line in text.splitlines() if line.strip()]
    if not isinstance(data, list):
        raise ValueError(f"{path}: expected a JSON list of claims")
    return data


def claims_from_averitec(gold: Sequence[Mapping[str, JSONValue]], pred: Sequence[Mapping[str, JSONValue]]) -> list[ClaimPrediction]:
    """Gold and predicted AVeriTeC examples paired by position (as the official scorer); the predicted label is
    ``pred_label`` (or ``label``)."""
    if len(gold) != len(pred):
        raise ValueError(f"{len(pred)} predictions for {len(gold)} gold claims; they are paired by position")
    return [ClaimPrediction(id=str(g.get("claim_id", g.get("id", i))), label=str(g.get("label", "")),
                            pred_label=str(p.get("pred_label", p.get("label", ""))), gold_evidence=averitec_evidence_strings(g),
                            evidence=averitec_evidence_strings(p), gold_justification=g.get("justification"),
                            justification=p.get("justification"), gold_questions=averitec_questions(g), questions=averitec_questions(p),
                            claim_types=_string_list(g.get("claim_types"), "claim_types"), verbatim=True)
            for i, (g, p) in enumerate(zip(gold, pred))]


def _string_list(value: object, field_name: str) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str):
        return [value]
    if not isinstance(value, list):
        raise ValueError(f"{field_name} must be a list of strings")
    return [str(v) for v in value]


def claim_from_record(rec: Mapping[str, object]) -> ClaimPrediction:
    """One line of the workflow's prediction JSONL (docs/scoring.md); ``ValueError`` without ``id``, ``label`` or
    ``pred_label``."""
    for key in ("id", "label", "pred_label"):
        if key not in rec or rec[key] is None:
            raise ValueError(f"missing {key!r}")
    return ClaimPrediction(id=str(rec["id"]), label=str(rec["label"]), pred_label=str(rec["pred_label"]),
                           gold_evidence=_string_list(rec.get("gold_evidence"), "gold_evidence"),
                           evidence=_string_list(rec.get("evidence"), "evidence"), gold_justification=rec.get("gold_justification"),
                           justification=rec.get("justification"), gold_questions=_optional_list(rec, "gold_questions"),
                           questions=_optional_list(rec, "questions"), claim_types=_string_list(rec.get("claim_types"), "claim_types"))


def _optional_list(rec: Mapping[str, object], key: str) -> list[str] | None:
    return None if rec.get(key) is None else _string_list(rec[key], key)


def _averitec_at(right: np.ndarray, ev: np.ndarray, lambdas: Sequence[float]) -> dict[str, float]:
    """The AVeriTeC score at each λ: the share of claims with the label right and an evidence score > λ."""
    return {lambda_key(lam): (float(np.mean(right & (ev > lam))) if len(ev) else 0.0) for lam in lambdas}


def selection_scores(records: Sequence[Mapping[str, object]], lambdas: Sequence[float], max_pred: int | None,
                     metric: PairMetric | None = None) -> dict[str, float | int | dict[str, float]]:
    """The evidence score of selected evidence *sentences* against ``gold_evidence`` and the AVeriTeC score at each
    λ, averaged over the records (HealthFC's evidence-selecting systems)."""
    if metric is None and records:
        metric = _default_metric()
    ev = np.array([evidence_score(r.get("evidence") or [], r.get("gold_evidence") or [], metric, max_pred) for r in records], dtype=float)
    right = np.array([r.get("label") == r.get("pred_label") for r in records], dtype=bool)
    return {"evidence_score": float(ev.mean()) if len(ev) else 0.0, "score": _averitec_at(right, ev, lambdas), "n": len(ev),
            "n_no_gold_evidence": sum(not _prepare(r.get("gold_evidence") or []) for r in records),
            "n_no_pred_evidence": sum(not _prepare(r.get("evidence") or []) for r in records)}
