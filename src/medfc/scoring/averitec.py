"""AVeriTeC scoring: 4-label macro-F1/accuracy, Hungarian-METEOR evidence score, AVeriTeC score at λ,
and gated justification METEOR. Definitions in docs/scoring.md (summary here).

* **Evidence score** of one claim: METEOR for every (predicted, gold) evidence string pair (gold is the
  reference), an optimal one-to-one assignment maximising the total
  (``scipy.optimize.linear_sum_assignment(maximize=True)``), the matched sum divided by the number of
  gold strings. Only the first :data:`MAX_PRED_EVIDENCE` (10) predicted strings count. Empty or
  whitespace-only strings are dropped first. Empty lists: no gold and no prediction → 1.0 (nothing to
  find, nothing claimed); no gold but some prediction → 0.0; gold but no prediction → 0.0.
* **AVeriTeC score at λ**: mean over all claims of 1 when the predicted label is right *and* the
  evidence score is strictly greater than λ, else 0.
* **Justification score**: METEOR of the predicted justification (hypothesis) against the gold one
  (reference); the gated version at λ keeps it only for claims whose label is right and whose evidence
  score is > λ (0 otherwise). Averaged over claims that have a gold justification; a missing predicted
  justification scores 0.
* **Evidence strings from the AVeriTeC JSON shape**: one string per answer, ``question + " " + answer``;
  for a Boolean answer with a non-empty ``boolean_explanation``, ``". " + boolean_explanation`` is
  appended; a question without answers gives ``question + " No answer could be found."``. These are the
  official scorer's conventions, so numbers stay comparable with published AVeriTeC results.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from scipy.optimize import linear_sum_assignment

from medfc.scoring.classification import classification_scores

AVERITEC_LABELS: tuple[str, ...] = (
    "Supported",
    "Refuted",
    "Conflicting evidence/Cherrypicking",
    "Not enough evidence",
)
LAMBDAS: tuple[float, ...] = (0.1, 0.2, 0.25, 0.3, 0.4, 0.5)
REPORTED_LAMBDA = 0.25
MAX_PRED_EVIDENCE = 10
NO_ANSWER = "No answer could be found."

PairMetric = Callable[[str, str], float]
"""``metric(prediction, gold) -> float`` (METEOR by default; tests use simple stand-ins)."""

_LABEL_BY_KEY = {lab.lower(): lab for lab in AVERITEC_LABELS}
# spellings seen in AVeriTeC files and scorers
_LABEL_BY_KEY.update({"conflicting evidence/cherry-picking": AVERITEC_LABELS[2], "nei": AVERITEC_LABELS[3]})


def normalise_label(label: Any) -> str:
    """Map case/spelling variants ("Not Enough Evidence") to the canonical AVeriTeC label.

    Anything unrecognised is returned unchanged (stripped) and then counts as a wrong prediction.
    """
    text = "" if label is None else str(label).strip()
    return _LABEL_BY_KEY.get(text.lower(), text)


def _clean(strings: Iterable[Any]) -> list[str]:
    return [" ".join(str(s).split()) for s in strings if s is not None and str(s).strip()]


def _default_metric() -> PairMetric:
    from medfc.scoring.meteor import default_meteor

    return default_meteor()


def pairwise_matrix(pred: Sequence[str], gold: Sequence[str], metric: PairMetric) -> np.ndarray:
    """``M[i, j] = metric(pred[i], gold[j])``."""
    mat = np.zeros((len(pred), len(gold)), dtype=float)
    for i, p in enumerate(pred):
        for j, g in enumerate(gold):
            mat[i, j] = metric(p, g)
    return mat


def evidence_score(
    pred: Sequence[str],
    gold: Sequence[str],
    metric: PairMetric | None = None,
    max_pred: int | None = MAX_PRED_EVIDENCE,
) -> float:
    """Hungarian-matched evidence score of one claim (see module docstring for the empty-list rule)."""
    pred = _clean(pred)
    gold = _clean(gold)
    if max_pred is not None:
        pred = pred[:max_pred]
    if not gold:
        return 1.0 if not pred else 0.0
    if not pred:
        return 0.0
    mat = pairwise_matrix(pred, gold, metric or _default_metric())
    rows, cols = linear_sum_assignment(mat, maximize=True)
    return float(mat[rows, cols].sum()) / len(gold)


@dataclass
class ClaimPrediction:
    """One claim with its gold and predicted label, evidence and (optional) justification."""

    id: str
    label: str
    pred_label: str
    gold_evidence: list[str] = field(default_factory=list)
    evidence: list[str] = field(default_factory=list)
    gold_justification: str | None = None
    justification: str | None = None


def score_claims(
    claims: Sequence[ClaimPrediction],
    lambdas: Sequence[float] = LAMBDAS,
    metric: PairMetric | None = None,
    max_pred: int | None = MAX_PRED_EVIDENCE,
    per_claim: bool = False,
) -> dict[str, Any]:
    """Score claims; returns a JSON-able dict.

    Keys: ``n``, ``label`` (:func:`~medfc.scoring.classification.classification_scores` over the four
    labels: ``accuracy``, ``macro_f1``, ``per_class``, ...), ``evidence_score`` (mean), ``averitec``
    (``{"0.25": score, ...}``), ``justification`` (``None`` when no claim has a gold justification, else
    ``{"meteor": ungated mean, "gated": {"0.25": ...}, "n": claims with gold justification}``),
    ``n_no_gold_evidence``, ``n_no_pred_evidence``, ``n_pred_evidence_truncated``, and ``claims`` (per-claim
    rows) when ``per_claim``.
    """
    metric = metric or (_default_metric() if claims else None)
    gold_labels = [normalise_label(c.label) for c in claims]
    pred_labels = [normalise_label(c.pred_label) for c in claims]
    for c, g in zip(claims, gold_labels):
        if g not in AVERITEC_LABELS:
            raise ValueError(f"claim {c.id}: gold label {c.label!r} is not an AVeriTeC label")
    label_scores = classification_scores(gold_labels, pred_labels, AVERITEC_LABELS)

    ev = np.array([evidence_score(c.evidence, c.gold_evidence, metric, max_pred) for c in claims], dtype=float)
    right = np.array([g == p for g, p in zip(gold_labels, pred_labels)], dtype=bool)
    averitec = {_lam_key(lam): (float(np.mean(right & (ev > lam))) if len(claims) else 0.0) for lam in lambdas}

    has_just = np.array([bool(c.gold_justification and c.gold_justification.strip()) for c in claims], dtype=bool)
    just = np.zeros(len(claims), dtype=float)
    for i, c in enumerate(claims):
        if has_just[i] and c.justification and c.justification.strip():
            just[i] = metric(" ".join(c.justification.split()), " ".join(c.gold_justification.split()))  # type: ignore[union-attr,misc]
    justification = None
    if has_just.any():
        justification = {
            "n": int(has_just.sum()),
            "meteor": float(just[has_just].mean()),
            "gated": {
                _lam_key(lam): float(np.where(right & (ev > lam), just, 0.0)[has_just].mean()) for lam in lambdas
            },
        }

    out: dict[str, Any] = {
        "n": len(claims),
        "label": label_scores,
        "evidence_score": float(ev.mean()) if len(claims) else 0.0,
        "averitec": averitec,
        "reported_lambda": _lam_key(REPORTED_LAMBDA),
        "justification": justification,
        "n_no_gold_evidence": sum(not _clean(c.gold_evidence) for c in claims),
        "n_no_pred_evidence": sum(not _clean(c.evidence) for c in claims),
        "n_pred_evidence_truncated": sum(max_pred is not None and len(_clean(c.evidence)) > max_pred for c in claims),
    }
    if per_claim:
        out["claims"] = [
            {
                "id": c.id,
                "label": g,
                "pred_label": p,
                "correct": bool(r),
                "evidence_score": float(e),
                **({"justification_meteor": float(j)} if h else {}),
            }
            for c, g, p, r, e, j, h in zip(claims, gold_labels, pred_labels, right, ev, just, has_just)
        ]
    return out


def _lam_key(lam: float) -> str:
    return f"{lam:g}"


# --------------------------------------------------------------------------------------------
# Readers
# --------------------------------------------------------------------------------------------


def averitec_evidence_strings(example: Mapping[str, Any]) -> list[str]:
    """Evidence strings of one example in the AVeriTeC shape (``questions`` → ``answers``).

    Also accepts predictions in the official submission shape (``evidence``: list of
    ``{question, answer}`` or plain strings) and ``string_evidence`` (list of strings).
    """
    strings: list[str] = []
    for qa in example.get("questions") or []:
        question = str(qa.get("question", "")).strip()
        answers = qa.get("answers")
        if answers is None:
            answers = []
        elif not isinstance(answers, list):
            answers = [answers]
        for ans in answers:
            if isinstance(ans, Mapping):
                text = f"{question} {str(ans.get('answer', '')).strip()}"
                expl = str(ans.get("boolean_explanation") or "").strip()
                if ans.get("answer_type") == "Boolean" and expl:
                    text += ". " + expl
            else:
                text = f"{question} {str(ans).strip()}"
            strings.append(text)
        if not answers:
            strings.append(f"{question} {NO_ANSWER}")
    for ev in example.get("evidence") or []:
        if isinstance(ev, Mapping):
            strings.append(f"{str(ev.get('question', '')).strip()} {str(ev.get('answer', '')).strip()}")
        else:
            strings.append(str(ev))
    strings.extend(str(s) for s in example.get("string_evidence") or [])
    return _clean(strings)


def read_averitec_json(path: str | os.PathLike) -> list[dict[str, Any]]:
    """A JSON list of AVeriTeC examples (a JSONL file is accepted too)."""
    text = Path(path).read_text(encoding="utf-8")
    stripped = text.lstrip()
    if stripped.startswith("["):
        data = json.loads(text)
    else:
        data = [json.loads(line) for line in text.splitlines() if line.strip()]
    if not isinstance(data, list):
        raise ValueError(f"{path}: expected a JSON list of claims")
    return data


def claims_from_averitec(gold: Sequence[Mapping[str, Any]], pred: Sequence[Mapping[str, Any]]) -> list[ClaimPrediction]:
    """Pair gold and predicted AVeriTeC examples by position (as the official scorer does).

    The predicted label is ``pred_label`` (or ``label``); the predicted justification ``justification``.
    """
    if len(gold) != len(pred):
        raise ValueError(f"{len(pred)} predictions for {len(gold)} gold claims; they are paired by position")
    claims = []
    for i, (g, p) in enumerate(zip(gold, pred)):
        claims.append(
            ClaimPrediction(
                id=str(g.get("claim_id", g.get("id", i))),
                label=str(g.get("label", "")),
                pred_label=str(p.get("pred_label", p.get("label", ""))),
                gold_evidence=averitec_evidence_strings(g),
                evidence=averitec_evidence_strings(p),
                gold_justification=g.get("justification"),
                justification=p.get("justification"),
            )
        )
    return claims


def _string_list(value: Any, field_name: str) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str):
        return [value]
    if not isinstance(value, list):
        raise ValueError(f"{field_name} must be a list of strings")
    return [str(v) for v in value]


def claim_from_record(rec: Mapping[str, Any]) -> ClaimPrediction:
    """One line of the workflow's prediction JSONL.

    ``{id, label, pred_label, evidence: [str], gold_evidence: [str], justification?, gold_justification?}``.
    Raises ``ValueError`` for a record without ``id``, ``label`` or ``pred_label``.
    """
    for key in ("id", "label", "pred_label"):
        if key not in rec or rec[key] is None:
            raise ValueError(f"missing {key!r}")
    return ClaimPrediction(
        id=str(rec["id"]),
        label=str(rec["label"]),
        pred_label=str(rec["pred_label"]),
        gold_evidence=_string_list(rec.get("gold_evidence"), "gold_evidence"),
        evidence=_string_list(rec.get("evidence"), "evidence"),
        gold_justification=rec.get("gold_justification"),
        justification=rec.get("justification"),
    )
