"""The prompt of the generative CliniFact systems and the scoring of its answer options (any
:class:`medfc.llm.base.LLMClient`): the answer is the option of highest log-probability, TRUE → evidence, FALSE →
inconclusive, NONE → NEI. An abstract too long for the budget is trimmed from its start, at a token boundary.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from medfc.common.labels import CLINIFACT_CODES
from medfc.common.report import SkipReport
from medfc.common.tokens import token_ids
from medfc.experiments.pairs import Pair, prediction_record
from medfc.experiments.records import PairPrediction
from medfc.llm.base import LLMClient

OPTION_TO_LABEL = {"TRUE": CLINIFACT_CODES[1], "FALSE": CLINIFACT_CODES[0], "NONE": CLINIFACT_CODES[2]}
ANSWER_OPTIONS = tuple(OPTION_TO_LABEL)  # TRUE, FALSE, NONE

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
    """:data:`PROMPT` for the pair, with ``abstract`` in place of its own when given (a trimmed one)."""
    return PROMPT.format(claim=p.claim, title=p.title, abstract=p.abstract if abstract is None else abstract)


def fit_prompt(p: Pair, tokenizer, max_tokens: int) -> tuple[str, bool]:
    """The prompt in at most ``max_tokens`` tokens, the abstract trimmed from its start; (prompt, trimmed)."""
    prompt = build_prompt(p)
    n = len(token_ids(tokenizer, prompt))
    if n <= max_tokens:
        return prompt, False
    offsets = tokenizer.backend_tokenizer.encode(p.abstract, add_special_tokens=False).offsets
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


def _softmax(logp: np.ndarray) -> np.ndarray:
    """The softmax of the finite log-probabilities (at least one), the others 0."""
    finite = np.isfinite(logp)
    m = logp[finite].max()
    e = np.where(finite, np.exp(logp - m), 0.0)
    return e / e.sum()


def answer_options() -> dict[str, str]:
    """Each answer option → the label it means (TRUE → evidence, FALSE → inconclusive, NONE → NEI)."""
    return {o: OPTION_TO_LABEL[o] for o in ANSWER_OPTIONS}


def prompts_for(pairs: Sequence[Pair], tokenizer, max_prompt_tokens: int) -> tuple[list[str], int]:
    """The prompts of ``pairs`` (trimmed when a tokenizer is known) and how many were trimmed."""
    if tokenizer is None:
        return [build_prompt(p) for p in pairs], 0
    fitted = [fit_prompt(p, tokenizer, max_prompt_tokens - 8) for p in pairs]
    return [prompt for prompt, _ in fitted], sum(cut for _, cut in fitted)


def score_pairs(scorer: LLMClient, tokenizer, splits: Mapping[str, Sequence[Pair]], system: str, max_prompt_tokens: int,
                batch_size: int, report: SkipReport) -> tuple[list[PairPrediction], int, int]:
    """One record per pair of each split, the options' log-probabilities softmaxed over the three; a pair none of whose
    options came back gets no prediction. Returns (records, prompts trimmed, pairs without any option)."""
    labels = list(answer_options().values())
    records, trimmed, no_option = [], 0, 0
    for split, pairs in splits.items():
        prompts, cut = prompts_for(pairs, tokenizer, max_prompt_tokens)
        trimmed += cut
        for p, row in zip(pairs, scorer.score_options(prompts, ANSWER_OPTIONS, batch_size)):
            answered = np.isfinite(row).any()
            if not answered:
                no_option += 1
                report.count("no_option_in_top_logprobs")
            records.append(prediction_record(p, split, system, labels, _softmax(row) if answered else None))
    return records, trimmed, no_option
