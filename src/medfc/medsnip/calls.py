"""LLM calls of the MedSNIP steps through the per-unit cache (:func:`cached_ask`: each answer cached before the next
sub-batch is sent, a failed call never), :func:`settle_failures` (docs/medsnip.md, "Failed calls") and :func:`scrub`
(no key is stored)."""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Callable, Mapping, Sequence

import jsonschema

from medfc.common.jsoncache import UnitCache, cache_key
from medfc.common.jsontypes import JSONValue
from medfc.common.options import set_torch_threads
from medfc.common.redact import redact, redact_values, remember_secret_env
from medfc.common.llm_backends import llm_backend, runs_locally
from medfc.common.report import SkipReport
from medfc.llm.base import Conversation, GenerationParams, Ledger, LLMClient, Prices
from medfc.llm.prompts import Prompt
from medfc.llm.structured import ask_json
from medfc.medsnip.options import LLMOptions
from medfc.medsnip.records import USAGE_KEYS

log = logging.getLogger(__name__)
KeyParts = tuple[object, ...]  # what besides the prompts and the LLM identifies an item's answer (texts, None)


# one item's answer (:func:`cached_ask`): a structured one has value, ok, raw and repaired, a plain one text; both
# error, usage (calls, prompt_tokens, completion_tokens), cached and failed
CallResult = dict[str, JSONValue]


class LLMCallsFailed(RuntimeError):
    """More LLM calls of a step failed than its ``max_failed_share`` allows: the step writes nothing; what was
    answered is cached, so a rerun asks only the failed items."""


def make_llm(opts: LLMOptions, ledger: Ledger | None = None, threads: int = 1) -> LLMClient:
    """The client; a local model computes on ``threads`` CPU threads (a server needs none)."""
    backend = llm_backend(opts.backend)
    if backend.local:
        set_torch_threads(threads)
        return backend.build(opts.model, ledger=ledger, device=opts.device, precision=opts.precision,
                             batch_size=opts.batch_size)
    return backend.build(opts.model, ledger=ledger, base_url=opts.base_url, api_key_env=opts.api_key_env,
                         cache_dir=opts.http_cache_dir or None, requests_per_second=opts.requests_per_second,
                         timeout_s=opts.timeout_s, max_retries=opts.max_retries)


def llm_prices(opts: LLMOptions | None) -> Prices | None:
    """The dollars per million tokens the options give, for the ledger's cost (None without an LLM)."""
    return Prices(opts.price_input_per_mtok, opts.price_output_per_mtok) if opts is not None else None


def gen_params(opts: LLMOptions, json_mode: bool) -> GenerationParams:
    return GenerationParams(max_tokens=opts.max_tokens, temperature=opts.temperature, json_mode=json_mode and opts.json_mode)


def llm_identity(opts: LLMOptions) -> dict[str, str | int | float | bool]:
    """What of the LLM options decides an answer (not where it is served, nor any credential)."""
    return {"backend": opts.backend, "model": opts.model, "max_tokens": opts.max_tokens, "temperature": opts.temperature, "json_mode": opts.json_mode}


def scrub(text: object, key_env: str | Sequence[str] = "", pattern: bool = True) -> str | None:
    """``text`` fit to be stored or logged: :func:`~medfc.common.redact.redact` (``pattern=False``: the known keys'
    values only, for a model's own answer), the variables ``key_env`` names among the known keys."""
    if text is None:
        return None
    for env in [key_env] if isinstance(key_env, str) else key_env:
        remember_secret_env(env)
    return redact(text) if pattern else redact_values(text)


def _usage_ok(rec: dict) -> None:
    usage = rec["usage"]
    if not isinstance(usage, Mapping) or not all(isinstance(usage.get(k), int) for k in USAGE_KEYS):
        raise ValueError(f"usage {usage!r} is not {{{', '.join(USAGE_KEYS)}}}")


def _entry(schema: Mapping[str, JSONValue] | None,
           check: Callable[[JSONValue], str | None] | None) -> Callable[[JSONValue], CallResult]:
    """The parser of a cached answer (plain without a ``schema``): one not of its kind's shape raises."""
    def parse(rec: JSONValue) -> CallResult:
        if not isinstance(rec, dict):
            raise TypeError(f"a {type(rec).__name__}, not an object")
        if schema is None:
            if not isinstance(rec["text"], str):
                raise TypeError("text is not a string")
            if rec.get("error") is not None or rec.get("failed"):
                raise ValueError("a failed call stored as an answer")
            _usage_ok(rec)
            return rec
        if not isinstance(rec["ok"], bool) or not isinstance(rec["raw"], str) or not isinstance(rec["repaired"], bool):
            raise TypeError("ok, raw or repaired of the wrong type")
        if rec.get("failed"):
            raise ValueError("a failed call stored as an answer")
        _usage_ok(rec)
        if rec["ok"]:
            try:
                jsonschema.validate(rec["value"], schema)
            except jsonschema.ValidationError as exc:
                raise ValueError(f"value refused by its schema: {exc.message}") from None
            err = check(rec["value"]) if check is not None else None
            if err is not None:
                raise ValueError(f"value refused by its check: {err}")
        elif not isinstance(rec["error"], str):
            raise TypeError("a malformed answer without its error")
        return rec

    return parse


def cached_ask(client: LLMClient, cache: UnitCache, identity: Mapping[str, JSONValue], kind: str, prompts: Sequence[Prompt],
               items: Sequence[tuple[KeyParts, Conversation]], params: GenerationParams, schema: Mapping[str, JSONValue] | None = None,
               repair: Prompt | None = None, check: Callable[[int, JSONValue], str | None] | None = None,
               key_env: str | Sequence[str] = "") -> list[CallResult]:
    """One result per item ``(key parts, conversation)``, cached under ``kind``: structured (:func:`ask_json`)
    with a ``schema`` and its ``repair`` prompt, else plain text."""
    hashes = [p.sha256 for p in [*prompts, *([repair] if repair else [])]]
    keys = [cache_key(kind, dict(identity), hashes, key_parts) for key_parts, _ in items]
    out: list[CallResult | None] = [None] * len(items)
    todo = []
    for i, key in enumerate(keys):
        hit = cache.get(key, _entry(schema, (lambda v, i=i: check(i, v)) if check is not None else None))
        if hit is not None:
            out[i] = dict(hit, cached=True, failed=False)
        else:
            todo.append(i)
    # items per call: a local model's batch (it generates them together), else one
    step = max(1, int(getattr(client, "batch_size", 1))) if runs_locally(client.backend) else 1
    for start in range(0, len(todo), step):
        chunk = todo[start:start + step]
        convs = [items[i][1] for i in chunk]
        recs: list[tuple[CallResult, bool]] = []
        if schema is not None:
            assert repair is not None  # a structured call has its repair prompt
            sub_check = (lambda j, v, chunk=chunk: check(chunk[j], v)) if check is not None else None
            for res in ask_json(client, convs, schema, params, repair, kind, sub_check):
                recs.append(({"value": None if res.failed else res.value, "ok": res.ok and not res.failed,
                              "error": scrub(res.error, key_env), "raw": scrub(res.raw, key_env, False) or "",
                              "repaired": res.repaired, "usage": res.usage()}, res.failed))
        else:
            for c in client.chat(convs, params, kind):
                recs.append(({"text": scrub(c.text, key_env, False) or "", "error": scrub(c.error, key_env),
                              "usage": {"calls": 1, "prompt_tokens": c.prompt_tokens, "completion_tokens": c.completion_tokens}},
                             not c.ok))
        for i, (rec, failed) in zip(chunk, recs):
            if not failed:
                cache.put(keys[i], rec)  # stored as soon as it is answered
            out[i] = dict(rec, cached=False, failed=failed)
    return [o for o in out if o is not None]


def first_errors(errors: Sequence[str], n: int = 3) -> str:
    """The first ``n`` distinct errors with how often each occurred: ``'HTTP 500 (7×); timeout (2×)'``."""
    counts = Counter(errors)
    parts = [f"{e} ({counts[e]}×)" for e in list(dict.fromkeys(errors))[:n]]
    more = len(counts) - n
    return "; ".join(parts) + (f"; and {more} other errors" if more > 0 else "")


def settle_failures(what: str, items: str, failures: Sequence[tuple[str, str]], n_items: int, max_share: float,
                    report: SkipReport, ledger: Ledger, cache: UnitCache, n_unparsed: int | None = None) -> None:
    """Count failed calls, items left without an answer (``failures``: item id, error), unreadable answers and
    damaged unit-cache entries in ``report``; then raise :class:`LLMCallsFailed` when more of the ``n_items`` had a
    failed call than ``max_share`` of them allows, and below that log a warning."""
    n_calls_failed = ledger.total()["failed"]
    report.count("failed_calls", n_calls_failed)
    report.count("failed_items", len(failures))
    if n_unparsed is not None:
        report.count("unparsed", n_unparsed)
    report.count("unit_cache_damaged", int(cache.stats.get("damaged", 0)))
    if not failures:
        return
    n = len(failures)
    allowed = int(max_share * n_items + 1e-9)
    if n <= allowed:
        log.warning("%s: %d of %d %s without an answer (a call failed; allowed: %d, max_failed_share %s); first: %s",
                    what, n, n_items, items, allowed, max_share, first_errors([e for _, e in failures]))
        return
    calls = f"{n_calls_failed} LLM calls failed" if n_calls_failed else "LLM calls failed"
    ids = [i for i, _ in failures]
    raise LLMCallsFailed(
        f"{what}: {calls}, for {n} of {n_items} {items} ({', '.join(ids[:5])}{' …' if n > 5 else ''}); "
        f"max_failed_share {max_share} allows {allowed}. First errors: {first_errors([e for _, e in failures])}. "
        f"Every answer received is kept in the unit cache: a rerun asks only the {n} failed")
