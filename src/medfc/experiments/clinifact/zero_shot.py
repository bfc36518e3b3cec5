"""The zero-shot generative CliniFact baseline (Zhang et al., Sci Data 2025, Table 8): the answer options of
:mod:`medfc.experiments.clinifact.prompts` scored by a local model or an OpenAI-compatible endpoint (``medfc.llm``).
"""

from __future__ import annotations

import os

from medfc.common.report import SkipReport
from medfc.experiments.models.aliases import resolve_model
from medfc.experiments.pairs import load_pairs, scores_by_split
from medfc.experiments.clinifact.prompts import answer_options, score_pairs
from medfc.experiments.models.options import ZeroShotOptions
from medfc.experiments.records import PairPrediction, RunInfo
from medfc.common.llm_backends import llm_backend, runs_locally
from medfc.llm.base import LLMClient


def run_zero_shot(split_csvs: dict[str, str | os.PathLike], opts: ZeroShotOptions, *, threads: int | None = None,
                  report: SkipReport | None = None) -> tuple[list[PairPrediction], RunInfo]:
    """Zero-shot predictions for the splits of ``opts.splits`` (paths in ``split_csvs``) on the job's ``threads``."""
    from medfc.common.options import set_torch_threads
    from medfc.experiments.models.training import set_seed

    report = report or SkipReport("clinifact-zero-shot")
    set_seed(0)
    tokenizer = None
    if runs_locally(opts.backend):
        opts = opts.replace(model=resolve_model(opts.model))  # a local model's name as the job loads it (``offline:``)
        if threads is not None:
            set_torch_threads(threads)
        scorer: LLMClient = llm_backend(opts.backend).build(opts.model, device=opts.device, precision=opts.precision,
                                                            batch_size=opts.batch_size)
        tokenizer = scorer.tokenizer
    else:
        rate = 1.0 / opts.min_interval_s if opts.min_interval_s > 0 else 0.0
        scorer = llm_backend(opts.backend).build(opts.model, base_url=opts.base_url, api_key_env=opts.api_key_env,
                                                 top_logprobs=opts.top_logprobs, cache_dir=opts.cache_dir,
                                                 requests_per_second=rate, timeout_s=opts.timeout_s,
                                                 max_retries=opts.max_retries)
    if tokenizer is None and opts.tokenizer:
        from transformers import AutoTokenizer

        tokenizer = AutoTokenizer.from_pretrained(resolve_model(opts.tokenizer))
    splits = {split: load_pairs(split_csvs[split], report) for split in opts.splits}
    records, trimmed, no_option = score_pairs(scorer, tokenizer, splits, "zero_shot", opts.max_prompt_tokens,
                                              opts.batch_size, report)
    info: RunInfo = {"system": "zero_shot", "backend": opts.backend, "model": opts.model, "options": answer_options(),
                     "n_prompts_trimmed": trimmed, "n_no_option": no_option, "scores": scores_by_split(records, opts.splits),
                     "skips": report.as_dict()}
    if not runs_locally(opts.backend):  # a server's: what was sent, what came from the cache
        info["requests_sent"] = int(scorer.http.stats["requests"])
        info["cache_hits"] = int(scorer.http.stats["cache_hits"])
    return records, info
