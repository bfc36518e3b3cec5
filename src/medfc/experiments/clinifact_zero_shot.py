"""The zero-shot generative CliniFact baseline (Zhang et al., Sci Data 2025, Table 8).

A causal LM reads :data:`PROMPT` (our wording of the paper's Table 7 description: claim + abstract,
answer with one of TRUE / FALSE / NONE) and the answer is the most probable of the options, scored as the
(summed) log-probability of each option's tokens after the prompt. Mapping (from the paper's label
definitions): TRUE → evidence (the abstract states there is evidence for the claim), FALSE → inconclusive
(the abstract reports the comparison but does not establish the claim), NONE → NEI (the abstract says
nothing about it).  Backends: a local ``transformers`` model directory / hub name, or an
OpenAI-compatible ``/completions`` endpoint with ``logprobs`` (cached on disk, rate limited) — the LLM
layer's two clients (``medfc.llm``).
"""

from __future__ import annotations

import logging
import os
from collections.abc import Sequence
import numpy as np

from medfc.common.labels import CLINIFACT_CODES
from medfc.common.report import SkipReport
from medfc.common.tokens import token_ids
from medfc.experiments.aliases import resolve_model
from medfc.experiments.clinifact import Pair, _scores, load_pairs, prediction_record
from medfc.experiments.options import ZeroShotOptions
from medfc.experiments.records import CliniFactPrediction, RunInfo
from medfc.common.llm_backends import runs_locally
from medfc.llm.base import LLMClient
from medfc.llm.local import TransformersLM
from medfc.llm.openai import OpenAICompatibleLM

log = logging.getLogger(__name__)

OPTION_TO_LABEL = {"TRUE": CLINIFACT_CODES[1], "FALSE": CLINIFACT_CODES[0], "NONE": CLINIFACT_CODES[2]}

PROMPT = (
    "You are an expert in clinical research. Read the clinical research claim and the abstract of a "
    "publication, and decide what the abstract says about the claim.\n"
    "Answer TRUE if the abstract states that there is evidence for the claim (a statistically "
    "significant result that establishes it), FALSE if the abstract reports the comparison but the "
    "result is inconclusive, or NONE if the abstract does not provide information about the claim.\n\n"
    "Claim: {claim}\n\n"
    "Title: {title}\n\n"
    "Abstract: {abstract}\n\n"
    "Answer (TRUE, FALSE or NONE):"
)


def build_prompt(p: Pair, abstract: str | None = None) -> str:
    return PROMPT.format(claim=p.claim, title=p.title, abstract=p.abstract if abstract is None else abstract)


def fit_prompt(p: Pair, tokenizer, max_tokens: int) -> tuple[str, bool]:
    """The prompt, with the abstract trimmed from its start (at a token boundary) until the whole
    prompt has at most ``max_tokens`` tokens.  Returns (prompt, whether it was trimmed)."""
    prompt = build_prompt(p)
    n = len(token_ids(tokenizer, prompt))
    if n <= max_tokens:
        return prompt, False
    enc = tokenizer.backend_tokenizer.encode(p.abstract, add_special_tokens=False)
    offsets = [o for o in enc.offsets]
    drop = n - max_tokens
    abstract = p.abstract
    for _ in range(5):
        if drop >= len(offsets):
            abstract = ""
            break
        abstract = p.abstract[offsets[drop][0] :]
        prompt = build_prompt(p, abstract)
        n = len(token_ids(tokenizer, prompt))
        if n <= max_tokens:
            return prompt, True
        drop += n - max_tokens
    return build_prompt(p, abstract), True


ANSWER_OPTIONS = tuple(OPTION_TO_LABEL)  # TRUE, FALSE, NONE


def _softmax(logp: np.ndarray) -> np.ndarray:
    finite = np.isfinite(logp)
    if not finite.any():
        return np.full_like(logp, 1.0 / len(logp))
    m = logp[finite].max()
    e = np.where(finite, np.exp(logp - m), 0.0)
    return e / e.sum()


# The two zero-shot backends are the LLM layer's clients (medfc.llm): the same local model and
# OpenAI-compatible server code as the MedSNIP decomposer and verifiers, scoring options here.
def make_scorer(opts: ZeroShotOptions) -> LLMClient:
    """The zero-shot scorer of ``opts.backend`` (see module docstring)."""
    if runs_locally(opts.backend):
        return TransformersLM(opts.model, device=opts.device, precision=opts.precision, batch_size=opts.batch_size)
    rate = 1.0 / opts.min_interval_s if opts.min_interval_s > 0 else 0.0
    return OpenAICompatibleLM(opts.base_url, opts.model, api_key_env=opts.api_key_env, top_logprobs=opts.top_logprobs,
                              cache_dir=opts.cache_dir, requests_per_second=rate, timeout_s=opts.timeout_s,
                              max_retries=opts.max_retries)


def answer_options() -> dict[str, str]:
    """Each answer option → the label it means (TRUE → evidence, FALSE → inconclusive, NONE → NEI)."""
    return {o: OPTION_TO_LABEL[o] for o in ANSWER_OPTIONS}


def prompts_for(pairs: Sequence[Pair], tokenizer, max_prompt_tokens: int) -> tuple[list[str], int]:
    """The prompts of ``pairs`` (abstracts trimmed to ``max_prompt_tokens`` less room for the answer when a
    tokenizer is known) and how many were trimmed."""
    prompts, trimmed = [], 0
    for p in pairs:
        if tokenizer is not None:
            prompt, cut = fit_prompt(p, tokenizer, max_prompt_tokens - 8)
            trimmed += cut
        else:
            prompt = build_prompt(p)
        prompts.append(prompt)
    return prompts, trimmed


def score_pairs(scorer: LLMClient, tokenizer, pairs: Sequence[Pair], split: str, system: str, max_prompt_tokens: int,
                batch_size: int, report: SkipReport) -> tuple[list[CliniFactPrediction], int, int]:
    """One record per pair: the options' log-probabilities after the prompt, softmaxed over the three
    options (the zero-shot and the fine-tuned generative systems alike); a pair none of whose options
    came back gets no prediction. Returns (records, prompts trimmed, pairs without any option)."""
    labels = list(answer_options().values())
    prompts, trimmed = prompts_for(pairs, tokenizer, max_prompt_tokens)
    logp = scorer.score_options(prompts, ANSWER_OPTIONS, batch_size)
    records, no_option = [], 0
    for p, row in zip(pairs, logp):
        if not np.isfinite(row).any():
            no_option += 1
            report.count("no_option_in_top_logprobs")
            records.append(prediction_record(p, split, system, labels, None))
        else:
            records.append(prediction_record(p, split, system, labels, _softmax(row)))
    return records, trimmed, no_option


def resolved(opts: ZeroShotOptions) -> ZeroShotOptions:
    """The options with a local model's name and the tokenizer's resolved as the job loads them (``offline:``)."""
    if runs_locally(opts.backend):
        opts = opts.replace(model=resolve_model(opts.model))
    if opts.tokenizer:
        opts = opts.replace(tokenizer=resolve_model(opts.tokenizer))
    return opts


def run_zero_shot(
    split_csvs: dict[str, str | os.PathLike],
    opts: ZeroShotOptions,
    *,
    threads: int | None = None,
    report: SkipReport | None = None,
) -> tuple[list[CliniFactPrediction], RunInfo]:
    """Zero-shot predictions for the splits named in ``opts.splits`` (paths in ``split_csvs``); ``threads``:
    the cores a job was granted, for a local model."""
    from medfc.common.options import set_torch_threads
    from medfc.experiments.training import set_seed

    report = report or SkipReport("clinifact-zero-shot")
    opts = resolved(opts)
    if threads is not None and runs_locally(opts.backend):
        set_torch_threads(threads)
    set_seed(0)
    tokenizer = None
    scorer = make_scorer(opts)
    if isinstance(scorer, TransformersLM):
        tokenizer = scorer.tokenizer
    else:
        if opts.tokenizer:
            from transformers import AutoTokenizer

            tokenizer = AutoTokenizer.from_pretrained(opts.tokenizer)
    records: list[CliniFactPrediction] = []
    trimmed = no_option = 0
    for split in opts.splits:
        recs, cut, missing = score_pairs(scorer, tokenizer, load_pairs(split_csvs[split], report), split, "zero_shot",
                                         opts.max_prompt_tokens, opts.batch_size, report)
        records += recs
        trimmed += cut
        no_option += missing
    info: RunInfo = {
        "system": "zero_shot",
        "backend": opts.backend,
        "model": opts.model,
        "options": answer_options(),
        "n_prompts_trimmed": trimmed,
        "n_no_option": no_option,
        "scores": {s: _scores([r for r in records if r["split"] == s]) for s in opts.splits},
        "skips": report.as_dict(),
    }
    if isinstance(scorer, OpenAICompatibleLM):
        info["requests_sent"] = scorer.requests_sent
        info["cache_hits"] = scorer.cache_hits
    return records, info
