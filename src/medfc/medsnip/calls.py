"""LLM calls of the MedSNIP steps, through the per-unit cache.

:func:`make_llm` builds the client an :class:`~medfc.medsnip.options.LLMOptions` names;
:func:`cached_ask` asks a batch of conversations (structured JSON or plain text), answering what
the cache already holds without a call. Each result keeps the *usage* of the call(s) that made it (calls,
prompt and completion tokens), cached or not, so cost is the logical cost of the pipeline whatever
a rerun reused. Results with a failed call (network, server) are not cached.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from medfc.common.options import set_torch_threads
from medfc.llm.base import Conversation, GenerationParams, Ledger, LLMClient
from medfc.llm.prompts import Prompt
from medfc.llm.structured import ask_json
from medfc.medsnip.cache import UnitCache, cache_key
from medfc.medsnip.options import LLMOptions


def make_llm(opts: LLMOptions, ledger: Ledger | None = None, threads: int = 1) -> LLMClient:
    """The client; a local model computes on ``threads`` CPU threads (a server needs none)."""
    from medfc.llm import make_client

    if opts.backend == "transformers":
        set_torch_threads(threads)
        return make_client("transformers", opts.model, ledger=ledger, device=opts.device, precision=opts.precision,
                           batch_size=opts.batch_size)
    return make_client("openai", opts.model, ledger=ledger, base_url=opts.base_url, api_key_env=opts.api_key_env,
                       cache_dir=opts.http_cache_dir or None, requests_per_second=opts.requests_per_second,
                       timeout_s=opts.timeout_s, max_retries=opts.max_retries)


def gen_params(opts: LLMOptions, json_mode: bool) -> GenerationParams:
    return GenerationParams(max_tokens=opts.max_tokens, temperature=opts.temperature, json_mode=json_mode and opts.json_mode)


def llm_identity(opts: LLMOptions) -> dict[str, Any]:
    """What of the LLM options decides an answer (not where it is served, nor any credential)."""
    return {"backend": opts.backend, "model": opts.model, "max_tokens": opts.max_tokens,
            "temperature": opts.temperature, "json_mode": opts.json_mode}


def _lookup(cache: UnitCache, identity: Mapping[str, Any], kind: str, prompts: Sequence[Prompt],
            items: Sequence[tuple[Any, Conversation]]) -> tuple[list[str], list[dict[str, Any] | None], list[int]]:
    """(cache keys, results with the cached ones filled in, indices still to ask)."""
    hashes = [p.sha256 for p in prompts]
    keys = [cache_key(kind, dict(identity), hashes, key_parts) for key_parts, _ in items]
    out: list[dict[str, Any] | None] = [None] * len(items)
    todo = []
    for i, key in enumerate(keys):
        hit = cache.get(key)
        if hit is not None:
            out[i] = dict(hit, cached=True)
        else:
            todo.append(i)
    return keys, out, todo


def cached_ask(
    client: LLMClient,
    cache: UnitCache,
    identity: Mapping[str, Any],
    kind: str,
    prompts: Sequence[Prompt],
    items: Sequence[tuple[Any, Conversation]],
    params: GenerationParams,
    schema: Mapping[str, Any] | None = None,
    repair: Prompt | None = None,
    check: Callable[[int, Any], str | None] | None = None,
) -> list[dict[str, Any]]:
    """One result dict per item ``(key parts, conversation)``, cached under ``kind``.

    With a ``schema`` (and its ``repair`` prompt) the answer is structured (:func:`ask_json`): ``value``,
    ``ok``, ``error``, ``raw``, ``repaired``; without, plain text: ``text`` and ``error`` (a failed call).
    Both carry ``usage`` (calls, prompt and completion tokens) and ``cached``."""
    structured = schema is not None
    if structured and repair is None:
        raise ValueError("a structured call needs its repair prompt")
    keys, out, todo = _lookup(cache, identity, kind, [*prompts, *([repair] if repair else [])], items)
    if not todo:
        return [o for o in out if o is not None]
    convs = [items[i][1] for i in todo]
    if structured:
        sub_check = (lambda j, v: check(todo[j], v)) if check is not None else None
        recs = []
        for res in ask_json(client, convs, schema, params, repair, kind, sub_check):
            recs.append(({"value": res.value, "ok": res.ok, "error": res.error, "raw": res.raw, "repaired": res.repaired,
                          "usage": res.usage()}, all(c.ok for c in res.completions)))
    else:
        recs = [({"text": c.text, "error": c.error, "usage": {"calls": 1, "prompt_tokens": c.prompt_tokens,
                                                               "completion_tokens": c.completion_tokens}}, c.ok)
                for c in client.chat(convs, params, kind)]
    for i, (rec, all_ok) in zip(todo, recs):
        if all_ok:
            cache.put(keys[i], rec)
        out[i] = dict(rec, cached=False)
    return [o for o in out if o is not None]
