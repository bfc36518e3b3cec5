"""Structured (JSON) answers: parsed, validated against a JSON schema, repaired once; a failed call is not a
malformed answer (``failed``: not to be cached)."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
import jsonschema

from medfc.common.jsontypes import JSONValue
from medfc.llm.base import Completion, Conversation, GenerationParams, LLMClient, Message
from medfc.llm.prompts import Prompt

FENCE_RE = re.compile(r"```(?:json|JSON)?\s*(.*?)```", re.DOTALL)
_THINK_BLOCK = re.compile(r"<think>.*?</think>", re.DOTALL | re.IGNORECASE)
_THINK_OPEN = re.compile(r"\A\s*<think>", re.IGNORECASE)
_THINK_CLOSE = re.compile(r"</think>", re.IGNORECASE)


def strip_think(text: str | None) -> str:
    """``text`` without its reasoning: every ``<think>…</think>`` block, everything up to a last unopened
    ``</think>`` (a template opened it), and everything after an unterminated leading ``<think>`` (out of tokens)."""
    text = _THINK_BLOCK.sub("", text or "")
    closes = list(_THINK_CLOSE.finditer(text))
    if closes:
        text = text[closes[-1].end():]
    return "" if _THINK_OPEN.match(text) else text.strip()


@dataclass
class Structured:
    value: JSONValue  # the parsed answer (None when not ok)
    ok: bool
    error: str | None
    raw: str
    repaired: bool = False
    completions: list[Completion] = field(default_factory=list)

    @property
    def failed(self) -> bool:
        """Whether a call of this answer failed (then it has no value and is not to be cached)."""
        return any(not c.ok for c in self.completions)

    def usage(self) -> dict[str, int]:
        return {"calls": len(self.completions), "prompt_tokens": sum(c.prompt_tokens for c in self.completions),
                "completion_tokens": sum(c.completion_tokens for c in self.completions)}


def _first_json_object(text: str) -> JSONValue:
    """The first decodable JSON value starting at a ``{`` (or ``[``) in the text."""
    candidates = [m.group(1) for m in FENCE_RE.finditer(text)] + [text]
    decoder = json.JSONDecoder()
    for cand in candidates:
        try:
            return json.loads(cand.strip())
        except ValueError:
            pass
        for m in re.finditer(r"[\[{]", cand):
            try:
                return decoder.raw_decode(cand[m.start():])[0]
            except ValueError:
                continue
    raise ValueError("no JSON object in the answer")


def parse_json_answer(text: str, schema: Mapping[str, JSONValue]) -> tuple[JSONValue, str | None]:
    """(value, None) when ``text`` holds JSON valid against ``schema``, else (None, error); reasoning blocks
    (:func:`strip_think`) are removed first."""
    text = strip_think(text)
    if not text:
        return None, "empty answer"
    try:
        value = _first_json_object(text)
    except ValueError as exc:
        return None, str(exc)
    try:
        jsonschema.validate(value, schema)
    except jsonschema.ValidationError as exc:
        where = "/".join(str(p) for p in exc.absolute_path) or "(root)"
        return None, f"schema: {where}: {exc.message}"
    return value, None


def ask_json(client: LLMClient, conversations: Sequence[Conversation], schema: Mapping[str, JSONValue], params: GenerationParams,
             repair: Prompt, purpose: str, check: Callable[[int, JSONValue], str | None] | None = None) -> list[Structured]:
    """One :class:`Structured` per conversation; ``check(i, value)`` may add a test beyond the schema for
    conversation ``i`` (its error is treated like a schema error)."""

    def parse(i: int, text: str) -> tuple[JSONValue, str | None]:
        value, err = parse_json_answer(text, schema)
        if err is None and check is not None:
            err = check(i, value)
            if err is not None:
                value = None
        return value, err

    first = client.chat(conversations, params, purpose)
    results: list[Structured] = []
    retry: list[int] = []
    for i, comp in enumerate(first):
        if not comp.ok:
            # a call that failed for good (counted as ``failed`` by the ledger) is not repaired
            results.append(Structured(None, False, f"call failed: {comp.error}", "", completions=[comp]))
            continue
        value, err = parse(i, comp.text)
        results.append(Structured(value, err is None, err, comp.text, completions=[comp]))
        if err is not None:
            retry.append(i)
    if retry:
        convs: list[list[Message]] = []
        for i in retry:
            fix = repair.render(error=results[i].error or "", schema=json.dumps(schema, sort_keys=True))
            convs.append([*conversations[i], {"role": "assistant", "content": results[i].raw}, *[m for m in fix if m["role"] == "user"]])
        for i, comp in zip(retry, client.chat(convs, params, purpose + ":repair")):
            res = results[i]
            res.completions.append(comp)
            if comp.ok:
                value, err = parse(i, comp.text)
                if err is None:
                    res.value, res.ok, res.error, res.raw, res.repaired = value, True, None, comp.text, True
                    client.ledger.count(purpose, "repaired")
                    continue
                res.error, res.raw = err, comp.text
            else:  # not malformed: the repair call failed, so the answer is unknown (``failed``)
                res.error = f"repair call failed: {comp.error}"
                continue
            client.ledger.count(purpose, "malformed")
    return results
