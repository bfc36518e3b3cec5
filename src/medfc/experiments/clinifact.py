"""CliniFact baselines (Zhang et al., Sci Data 2025, Table 8).

Labels: the release codes 1 = evidence, 0 = inconclusive, 2 = not enough information, named here
``CLINIFACT_LABELS = ["evidence", "inconclusive", "NEI"]`` (:mod:`medfc.common.labels`).

Discriminative
    ``[CLS] claim [SEP] title abstract [SEP]`` in at most ``max_length`` (512) tokens; when too long
    the abstract is trimmed from its *start* (its end — usually results and conclusions — is kept;
    the paper's Supplementary Fig. S2); the title is kept.  Fine-tuned on the train split, the
    checkpoint with the best validation ``eval_metric`` (macro-F1) is evaluated on the test split.

Zero-shot generative
    A causal LM reads :data:`PROMPT` (our wording of the paper's Table 7 description: claim +
    abstract, answer with one of TRUE / FALSE / NONE) and the answer is the most probable of the
    options, scored as the (summed) log-probability of each option's tokens after the prompt.
    Mapping (from the paper's label definitions): TRUE → evidence (the abstract states there is
    evidence for the claim), FALSE → inconclusive (the abstract reports the comparison but does not
    establish the claim), NONE → NEI (the abstract says nothing about it).  Backends: a local
    ``transformers`` model directory / hub name, or an OpenAI-compatible ``/completions`` endpoint
    with ``logprobs`` (cached on disk, rate limited) — the LLM layer's two clients (``medfc.llm``).
"""

from __future__ import annotations

import logging
import os
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
import pandas as pd

from medfc.common.io import write_json, write_jsonl
from medfc.common.labels import CLINIFACT_CODES, CLINIFACT_LABELS
from medfc.common.options import Options
from medfc.common.report import SkipReport
from medfc.common.tokens import token_ids
from medfc.experiments.classifier import Example
from medfc.experiments.models import ModelConfig, fit_model
from medfc.experiments.metrics import validation_scores
from medfc.experiments.training import set_seed
from medfc.llm.base import LLMClient
from medfc.llm.local import TransformersLM
from medfc.llm.openai import OpenAICompatibleLM

log = logging.getLogger(__name__)

CODE_TO_LABEL = CLINIFACT_CODES
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


# ------------------------------------------------------------------------------------------- data


@dataclass
class Pair:
    id: str
    claim: str
    title: str
    abstract: str
    label: str | None


def load_pairs(path: str | os.PathLike, report: SkipReport | None = None) -> list[Pair]:
    """Claim–abstract pairs from a CliniFact split CSV (the release's 22-column format).

    The id is the ``index`` column (``nctId:PMID`` when absent).  Rows without a claim or abstract,
    or with a label outside 0/1/2, are skipped with a reason.
    """
    report = report or SkipReport("clinifact-pairs")
    df = pd.read_csv(path, dtype=str, keep_default_na=False)
    missing = {"claim", "article_abstract", "label"} - set(df.columns)
    if missing:
        raise ValueError(f"{path}: missing columns {sorted(missing)}")
    pairs, seen = [], set()
    for row_no, row in enumerate(df.to_dict("records")):
        pid = str(row.get("index") or "").strip() or f"{row.get('nctId', '')}:{row.get('PMID', '')}:{row_no}"
        if pid in seen:
            report.skip(pid, "duplicate_id")
            continue
        if not row["claim"].strip():
            report.skip(pid, "missing_claim")
            continue
        if not row["article_abstract"].strip():
            report.skip(pid, "missing_abstract")
            continue
        try:
            label = CODE_TO_LABEL[int(float(row["label"]))]
        except (KeyError, ValueError):
            report.skip(pid, "unknown_label", row["label"])
            continue
        seen.add(pid)
        pairs.append(Pair(pid, row["claim"].strip(), str(row.get("article_title") or "").strip(), row["article_abstract"].strip(), label))
        report.count("pairs")
    return pairs


def pair_example(p: Pair, include_title: bool = True) -> Example:
    return Example(p.claim, p.abstract, p.label, prefix_b=p.title if include_title and p.title else None)


def _record(p: Pair, split: str, system: str, labels: Sequence[str], probs: np.ndarray | None) -> dict[str, Any]:
    if probs is None:
        pred, prob_map = None, {lab: None for lab in labels}
    else:
        pred = labels[int(np.argmax(probs))]
        prob_map = {lab: round(float(x), 6) for lab, x in zip(labels, probs)}
    return {"id": p.id, "split": split, "system": system, "label": p.label, "pred_label": pred, "probs": prob_map}


def _scores(records: Sequence[dict[str, Any]]) -> dict[str, float]:
    return validation_scores([r["label"] for r in records], [r["pred_label"] for r in records], CLINIFACT_LABELS) if records else {}


# -------------------------------------------------------------------------------- discriminative


def run_discriminative(
    train_csv: str | os.PathLike,
    validation_csv: str | os.PathLike,
    test_csv: str | os.PathLike,
    cfg: ModelConfig,
    *,
    checkpoint_dir: str | os.PathLike | None,
    include_title: bool,
    predict_splits: Sequence[str],
    report: SkipReport | None = None,
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Fine-tune on train, keep the best-validation checkpoint (in ``checkpoint_dir``, or in memory
    without one), predict ``predict_splits``."""
    report = report or SkipReport("clinifact-discriminative")
    splits = {"train": load_pairs(train_csv, report), "validation": load_pairs(validation_csv, report), "test": load_pairs(test_csv, report)}
    fitted = fit_model(
        cfg,
        CLINIFACT_LABELS,
        [pair_example(p, include_title) for p in splits["train"]],
        [pair_example(p, include_title) for p in splits["validation"]],
        checkpoint_dir=checkpoint_dir,
        trim="left",
        desc="clinifact",
    )
    records: list[dict[str, Any]] = []
    for split in predict_splits:
        probs = fitted.probs([pair_example(p, include_title) for p in splits[split]], desc=f"clinifact/{split}")
        records.extend(_record(p, split, "discriminative", CLINIFACT_LABELS, pr) for p, pr in zip(splits[split], probs))
    info = {
        "system": "discriminative",
        "config": cfg.as_dict(),
        "train": fitted.result.as_dict(),
        "encode": fitted.encode_stats.as_dict(),
        "sizes": {k: len(v) for k, v in splits.items()},
        "scores": {s: _scores([r for r in records if r["split"] == s]) for s in predict_splits},
        "skips": report.as_dict(),
    }
    return records, info


# ------------------------------------------------------------------------------------- zero-shot


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


@dataclass(frozen=True)
class ZeroShotOptions(Options):
    """The ``experiments.clinifact.zero_shot`` section + ``model`` (a local directory / hub name for
    ``transformers``, the served model name for ``openai``) and the resolved ``cache_dir``."""

    backend: Literal["transformers", "openai"]
    model: str
    tokenizer: str | None  # prompt trimming with the openai backend (transformers uses the model's)
    max_prompt_tokens: int
    batch_size: int
    device: str
    precision: Literal["auto", "fp32", "bf16", "fp16"]
    base_url: str
    api_key_env: str
    top_logprobs: int
    cache_dir: str
    min_interval_s: float
    timeout_s: float
    max_retries: int
    splits: tuple[str, ...]


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
    if opts.backend == "transformers":
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
                batch_size: int, report: SkipReport) -> tuple[list[dict[str, Any]], int, int]:
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
            records.append(_record(p, split, system, labels, None))
        else:
            records.append(_record(p, split, system, labels, _softmax(row)))
    return records, trimmed, no_option


def run_zero_shot(
    split_csvs: dict[str, str | os.PathLike],
    opts: ZeroShotOptions,
    *,
    report: SkipReport | None = None,
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Zero-shot predictions for the splits named in ``opts.splits`` (paths in ``split_csvs``)."""
    report = report or SkipReport("clinifact-zero-shot")
    set_seed(0)
    tokenizer = None
    scorer = make_scorer(opts)
    if isinstance(scorer, TransformersLM):
        tokenizer = scorer.tokenizer
    else:
        if opts.tokenizer:
            from transformers import AutoTokenizer

            tokenizer = AutoTokenizer.from_pretrained(opts.tokenizer)
    records: list[dict[str, Any]] = []
    trimmed = no_option = 0
    for split in opts.splits:
        recs, cut, missing = score_pairs(scorer, tokenizer, load_pairs(split_csvs[split], report), split, "zero_shot",
                                         opts.max_prompt_tokens, opts.batch_size, report)
        records += recs
        trimmed += cut
        no_option += missing
    info = {
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


def write_predictions(predictions: str | os.PathLike, info_path: str | os.PathLike | None, records: list[dict[str, Any]], info: dict[str, Any]) -> None:
    write_jsonl(predictions, records)
    if info_path is not None:
        write_json(info_path, info)
