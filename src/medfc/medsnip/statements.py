"""HealthFC claims (questions) rewritten into the statements they assert (``prepare``'s ``rewrite_claims``): one
cached JSON call per claim. A malformed answer or failed call keeps the question."""

from __future__ import annotations

from medfc.common.jsoncache import UnitCache
from medfc.common.jsontypes import JSONValue
from medfc.common.report import SkipReport
from medfc.llm.base import Ledger, LLMClient
from medfc.llm.prompts import load_prompt
from medfc.medsnip.calls import cached_ask, check_failures, count_failures, gen_params, llm_identity, llm_prices
from medfc.medsnip.options import PrepareOptions
from medfc.medsnip.records import Answer, usage_total

STATEMENT_SCHEMA: dict[str, JSONValue] = {"type": "object", "required": ["statement"], "properties": {"statement": {"type": "string", "minLength": 1, "pattern": r"\S"}}}


def rewrite_statements(answers: list[Answer], client: LLMClient, opts: PrepareOptions, report: SkipReport, ledger: Ledger) -> dict[str, object]:
    """Rewrite each claim into the statement it asserts, the answer's text (in place); returns the rewrite's info."""
    assert opts.llm is not None
    prompt = load_prompt("medsnip/healthfc_statement", opts.prompt_dir)
    repair = load_prompt("llm/json_repair", opts.prompt_dir)
    cache = UnitCache(opts.unit_cache_dir)
    items = [((a["claim"],), prompt.render(claim=a["claim"])) for a in answers]
    results = cached_ask(client, cache, llm_identity(opts.llm), "prepare:statement", [prompt], items, gen_params(opts.llm, True),
                         STATEMENT_SCHEMA, repair, key_env=opts.llm.api_key_env)
    failures = []
    for a, r in zip(answers, results):
        if r["failed"]:
            failures.append((a["answer_id"], r["error"] or "call failed"))
            report.skip(a["answer_id"], "statement_call_failed_question_kept", (r["error"] or "")[:300])
        elif r["ok"]:
            a["text"] = " ".join(r["value"]["statement"].split())
            report.count("claims_rewritten")
        else:
            report.skip(a["answer_id"], "statement_malformed_question_kept", (r["error"] or "")[:300])
    count_failures(report, ledger, len(failures), cache)
    check_failures("medsnip prepare (statement rewrite)", "claims", failures, len(answers), opts.llm.max_failed_share, ledger.total()["failed"])
    usage = usage_total(r["usage"] for r in results) if results else {}  # no claim: no usage keys
    return {"usage": usage, "cache": dict(cache.stats), "calls": ledger.as_dict(llm_prices(opts.llm)),
            "failed": len(failures)}
