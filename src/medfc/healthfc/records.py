"""JSON Schemas of the parsed tables; every record is validated before it is written."""

from __future__ import annotations

from typing import Any

from jsonschema import Draft202012Validator

from medfc.healthfc.verdicts import LABELS, LEVELS

_STR_LIST = {"type": "array", "items": {"type": "string", "minLength": 1}}

ARTICLE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["article_id", "url", "layout", "title", "date", "authors", "reviewers", "teaser", "body",
                 "body_paragraphs", "studies", "references", "topics", "n_claims"],
    "properties": {
        "article_id": {"type": "string", "minLength": 1},
        "url": {"type": "string", "pattern": "^https?://"},
        "layout": {"enum": ["current", "2014_2017", "pre_2014"]},
        "title": {"type": "string", "minLength": 1},
        "date": {"type": ["string", "null"], "pattern": r"^\d{4}-\d{2}-\d{2}$"},
        "authors": _STR_LIST,
        "reviewers": _STR_LIST,
        "teaser": {"type": "string"},
        "body": {"type": "string", "minLength": 1},
        "body_paragraphs": {**_STR_LIST, "minItems": 1},
        "studies": {"type": "string"},
        "references": _STR_LIST,
        "topics": _STR_LIST,
        "n_claims": {"type": "integer", "minimum": 1},
    },
}

CLAIM_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["claim_id", "article_id", "url", "claim_index", "question", "verdict_text", "answer_index",
                 "label", "evidence_level", "small_effect", "explanation", "layout"],
    "properties": {
        "claim_id": {"type": "string", "minLength": 1},
        "article_id": {"type": "string", "minLength": 1},
        "url": {"type": "string"},
        "claim_index": {"type": "integer", "minimum": 0},
        "question": {"type": "string", "minLength": 3},
        "verdict_text": {"type": "string", "minLength": 1},
        "answer_index": {"type": ["integer", "null"], "minimum": 1, "maximum": 11},
        "label": {"enum": list(LABELS)},
        "evidence_level": {"enum": list(LEVELS)},
        "small_effect": {"type": "boolean"},
        "explanation": {"type": "string"},
        "layout": {"enum": ["current", "2014_2017", "pre_2014"]},
    },
}

_VALIDATORS = {"article": Draft202012Validator(ARTICLE_SCHEMA), "claim": Draft202012Validator(CLAIM_SCHEMA)}


def schema_errors(kind: str, record: dict[str, Any]) -> list[str]:
    """Human-readable schema violations of one record ("" list when valid)."""
    return [f"{'/'.join(map(str, e.path)) or '<record>'}: {e.message}" for e in _VALIDATORS[kind].iter_errors(record)]
