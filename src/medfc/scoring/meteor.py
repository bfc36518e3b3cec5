"""NLTK METEOR with the AVeriTeC conventions, plus caches that leave the numbers unchanged.

``Meteor()(prediction, reference)`` equals
``nltk.translate.meteor_score.single_meteor_score(word_tokenize(reference), word_tokenize(prediction))``
(gold as reference, prediction as hypothesis, NLTK defaults: lower-casing, Porter stemmer, WordNet
synonyms). Caches: each string is tokenised once, each word is stemmed once, and WordNet synsets are
looked up once per word. They change speed only: NLTK receives the same tokens, stems and synsets.

Creating a :class:`Meteor` calls :func:`medfc.scoring.nltk_data.ensure_nltk_data`, so a missing WordNet
raises :class:`~medfc.scoring.nltk_data.NltkDataMissing` instead of scoring without synonyms.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from medfc.scoring.nltk_data import ensure_nltk_data


class _CachedWordNet:
    """Only the method METEOR calls (``synsets``), memoised per word."""

    def __init__(self, wordnet: Any) -> None:
        self._wn = wordnet
        self.synsets = lru_cache(maxsize=200_000)(self._synsets)

    def _synsets(self, word: str) -> list[Any]:
        return self._wn.synsets(word)


class _CachedStemmer:
    def __init__(self, stemmer: Any) -> None:
        self._stemmer = stemmer
        self.stem = lru_cache(maxsize=200_000)(stemmer.stem)


class Meteor:
    """Callable ``(prediction, reference) -> float`` METEOR scorer (see module docstring)."""

    def __init__(self, tokenizer_cache: int = 100_000) -> None:
        ensure_nltk_data(wordnet=True, punkt=True)
        import nltk
        from nltk.corpus import wordnet
        from nltk.stem.porter import PorterStemmer
        from nltk.translate.meteor_score import single_meteor_score

        wordnet.ensure_loaded()
        self._single = single_meteor_score
        self._wordnet = _CachedWordNet(wordnet)
        self._stemmer = _CachedStemmer(PorterStemmer())
        self.tokenize = lru_cache(maxsize=tokenizer_cache)(lambda s: tuple(nltk.word_tokenize(s)))

    def tokens_score(self, pred_tokens: Any, ref_tokens: Any) -> float:
        """METEOR of pre-tokenised hypothesis (prediction) against reference (gold)."""
        return float(self._single(list(ref_tokens), list(pred_tokens), wordnet=self._wordnet, stemmer=self._stemmer))

    def __call__(self, prediction: str, reference: str) -> float:
        return self.tokens_score(self.tokenize(prediction), self.tokenize(reference))


_DEFAULT: Meteor | None = None


def default_meteor() -> Meteor:
    """A process-wide :class:`Meteor` (caches shared between calls)."""
    global _DEFAULT
    if _DEFAULT is None:
        _DEFAULT = Meteor()
    return _DEFAULT
