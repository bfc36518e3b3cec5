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


def english_wordnet() -> Any:
    """NLTK's WordNet reader as ``nltk.corpus.wordnet`` loads it (the same data, the same Open Multilingual
    WordNet reader, lazily), without the map it builds from WordNet onto the loaded WordNet.

    ``WordNetCorpusReader.__init__`` calls ``map_wn("wordnet")``, which compares the loaded version ("3.0")
    with the corpus name "wordnet": never equal, so it reads index.sense twice to map WordNet 3.0 onto
    itself (about 40 % of the 1-2 s a score job spends loading WordNet). The map (``map30``) is read only
    by the multilingual functions; the English lookups METEOR makes (``synsets``) never use it, so their
    answers are the same."""
    from nltk.corpus import wordnet
    from nltk.corpus.reader.wordnet import WordNetCorpusReader
    from nltk.corpus.util import LazyCorpusLoader

    class EnglishWordNet(WordNetCorpusReader):
        def map_wn(self, version: str = "wordnet") -> Any:
            return None if version == "wordnet" else super().map_wn(version)

    # the multilingual reader nltk.corpus.wordnet is made with (still lazy: never loaded for English)
    omw = wordnet._omw_reader if isinstance(wordnet, WordNetCorpusReader) else wordnet._LazyCorpusLoader__args[0]
    loader = LazyCorpusLoader("wordnet", EnglishWordNet, omw)
    loader.ensure_loaded()
    return loader


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
        from nltk.stem.porter import PorterStemmer
        from nltk.translate.meteor_score import single_meteor_score

        self._single = single_meteor_score
        self._wordnet = _CachedWordNet(english_wordnet())
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
