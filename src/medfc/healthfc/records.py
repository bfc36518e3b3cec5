"""JSON Schemas of the parsed tables, every record validated before it is written; and the shapes of the
records the HealthFC steps write (parsed articles and claims, dataset records)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TypedDict

from jsonschema import Draft202012Validator

from medfc.common.jsontypes import JSONObject
from medfc.healthfc.verdicts import LABELS, LEVELS

_STR_LIST: JSONObject = {"type": "array", "items": {"type": "string", "minLength": 1}}


class ArticleRecord(TypedDict):
    """A parsed article (:data:`ARTICLE_SCHEMA`; ``articles.jsonl``)."""

    article_id: str
    url: str
    layout: str  # current | 2014_2017 | pre_2014
    title: str
    date: str | None  # YYYY-MM-DD
    authors: list[str]
    reviewers: list[str]
    teaser: str
    body_paragraphs: list[str]
    studies: str
    references: list[str]
    topics: list[str]
    n_claims: int
    body: str


class ClaimRecord(TypedDict):
    """A parsed claim (:data:`CLAIM_SCHEMA`; ``claims.jsonl``)."""

    claim_id: str
    article_id: str
    url: str
    claim_index: int
    question: str
    verdict_text: str
    answer_index: int | None
    label: str
    evidence_level: str
    small_effect: bool
    explanation: str
    layout: str


ARTICLE_SCHEMA: JSONObject = {
    "type": "object",
    "required": list(ArticleRecord.__annotations__),
    "properties": {
        "article_id": {"type": "string", "minLength": 1}, "url": {"type": "string", "pattern": "^https?://"},
        "layout": {"enum": ["current", "2014_2017", "pre_2014"]}, "title": {"type": "string", "minLength": 1},
        "date": {"type": ["string", "null"], "pattern": r"^\d{4}-\d{2}-\d{2}$"},
        "authors": _STR_LIST, "reviewers": _STR_LIST, "teaser": {"type": "string"},
        "body": {"type": "string", "minLength": 1}, "body_paragraphs": {**_STR_LIST, "minItems": 1},
        "studies": {"type": "string"}, "references": _STR_LIST, "topics": _STR_LIST,
        "n_claims": {"type": "integer", "minimum": 1},
    },
}

CLAIM_SCHEMA: JSONObject = {
    "type": "object",
    "required": list(ClaimRecord.__annotations__),
    "properties": {
        "claim_id": {"type": "string", "minLength": 1}, "article_id": {"type": "string", "minLength": 1},
        "url": {"type": "string"},
        "claim_index": {"type": "integer", "minimum": 0}, "question": {"type": "string", "minLength": 3},
        "verdict_text": {"type": "string", "minLength": 1},
        "answer_index": {"type": ["integer", "null"], "minimum": 1, "maximum": 11},
        "label": {"enum": list(LABELS)}, "evidence_level": {"enum": list(LEVELS)}, "small_effect": {"type": "boolean"},
        "explanation": {"type": "string"}, "layout": {"enum": ["current", "2014_2017", "pre_2014"]},
    },
}

_VALIDATORS = {"article": Draft202012Validator(ARTICLE_SCHEMA), "claim": Draft202012Validator(CLAIM_SCHEMA)}


def schema_errors(kind: str, record: Mapping[str, object]) -> list[str]:
    """Human-readable schema violations of one record ("" list when valid)."""
    return [f"{'/'.join(map(str, e.path)) or '<record>'}: {e.message}" for e in _VALIDATORS[kind].iter_errors(record)]


class DatasetRecord(TypedDict):
    """One claim of the HealthFC dataset (:data:`medfc.healthfc.dataset.FIELDS`, docs/healthfc.md): German and
    English side by side; the English fields are None until translated."""

    id: str
    url: str
    article_id: str
    claim_de: str
    claim_en: str | None
    label: str
    evidence_level: str | None
    small_effect: bool
    explanation_de: str
    explanation_en: str | None
    sentences_de: list[str]
    sentences_en: list[str] | None
    sentence_sections: list[str] | None
    evidence_ids: list[int]
    date: str | None
    topics: list[str]
    topics_en: list[str] | None  # 1:1 with topics
    authors: list[str]
    title: str
    source: str  # crawl | crawl+release | release
    release_row: int | None
    gold_evidence: bool
    n_evidence_unaligned: int
    claim_en_origin: str | None
    explanation_en_origin: str | None
    sentences_en_origin: str | None
