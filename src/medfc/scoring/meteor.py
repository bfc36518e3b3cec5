"""NLTK METEOR with the AVeriTeC conventions: ``Meteor()(prediction, reference)`` equals
``single_meteor_score(word_tokenize(reference), word_tokenize(prediction))`` with NLTK's defaults (lower-casing,
Porter stemmer, WordNet synonyms). Tokens, stems and synsets are cached per string / word (speed only).
A missing WordNet raises :class:`~medfc.scoring.nltk_data.NltkDataMissing` instead of scoring without synonyms.
"""

from __future__ import annotations

import codecs
from collections.abc import Iterable, Iterator
from functools import lru_cache
from typing import IO, TYPE_CHECKING

from medfc.common.collector import gc_paused
from medfc.common.nltk_import import import_nltk
from medfc.scoring.nltk_data import ensure_nltk_data

if TYPE_CHECKING:
    from nltk.corpus.reader.wordnet import Synset
    from nltk.corpus.util import LazyCorpusLoader
    from nltk.data import SeekableUnicodeStreamReader
    from nltk.stem.porter import PorterStemmer


class _LineFile:
    """A WordNet file read in binary mode and decoded line by line, with the line semantics of NLTK's own
    reader (``SeekableUnicodeStreamReader``: a line ends at any boundary ``str.splitlines`` knows) and
    byte offsets for ``seek``/``tell`` (a synset's offset is its line's byte offset in ``data.<pos>``).
    A file that starts with a byte-order mark is left to NLTK's reader.
    NLTK's reader decodes 72 bytes at a time through a checkpointing decoder: loading WordNet's indices
    through it costs about 0.3 s more CPU than this."""

    def __init__(self, stream: IO[bytes], encoding: str) -> None:
        self._file = stream  # binary, seekable: NLTK's own checked stream (FileSystemPathPointer.open())
        self._encoding = encoding

    def readline(self) -> str:
        start = self._file.tell()
        line = self._file.readline().decode(self._encoding)
        parts = line.splitlines(True)
        if len(parts) > 1:  # a boundary other than "\n" (NLTK splits there too): stop after it
            self._file.seek(start + len(parts[0].encode(self._encoding)))
            return parts[0]
        return line

    def __iter__(self) -> Iterator[str]:
        return iter(self._file.read().decode(self._encoding).splitlines(True))

    def seek(self, offset: int, whence: int = 0) -> int:
        return self._file.seek(offset, whence)

    def tell(self) -> int:
        return self._file.tell()

    def close(self) -> None:
        self._file.close()

    def __enter__(self) -> _LineFile:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


# the files WordNetCorpusReader reads line by line or by offset (the rest, index.sense and cntlist.rev, it
# binary-searches with its own reader's extras)
_LINE_FILES = ("lexnames", *(f"{kind}.{pos}" for kind in ("index", "data") for pos in ("noun", "verb", "adj", "adv")),
               *(f"{pos}.exc" for pos in ("noun", "verb", "adj", "adv")))


def english_wordnet() -> LazyCorpusLoader:
    """NLTK's WordNet reader as ``nltk.corpus.wordnet`` loads it (same data, same lazy Open Multilingual WordNet
    reader) with a faster line reader (:class:`_LineFile`) and without ``map_wn("wordnet")``: comparing version
    "3.0" with the name "wordnet" it reads index.sense twice to map WordNet 3.0 onto itself (about 40 % of a score
    job's WordNet loading); only the multilingual functions read that map, never ``synsets`` (a test compares the
    tables and synsets with a plain ``WordNetCorpusReader``). A WordNet inside a zip is read by NLTK's reader."""
    import_nltk()
    from nltk.corpus import wordnet
    from nltk.corpus.reader.wordnet import WordNetCorpusReader
    from nltk.corpus.util import LazyCorpusLoader
    from nltk.data import FileSystemPathPointer

    class EnglishWordNet(WordNetCorpusReader):
        def map_wn(self, version: str = "wordnet") -> object:  # NLTK's map, None for this one
            return None if version == "wordnet" else super().map_wn(version)

        def open(self, fileid: str) -> _LineFile | SeekableUnicodeStreamReader:
            pointer = self.abspath(fileid)
            if fileid in _LINE_FILES and isinstance(pointer, FileSystemPathPointer):
                stream = pointer.open()  # the bytes, through NLTK's checks of the data path
                if stream.read(len(codecs.BOM_UTF8)) != codecs.BOM_UTF8:  # NLTK's reader skips a byte-order mark
                    stream.seek(0)
                    return _LineFile(stream, self.encoding(fileid))
                stream.close()
            return super().open(fileid)

    # the multilingual reader nltk.corpus.wordnet is made with (still lazy: never loaded for English)
    omw = wordnet._omw_reader if isinstance(wordnet, WordNetCorpusReader) else wordnet._LazyCorpusLoader__args[0]
    loader = LazyCorpusLoader("wordnet", EnglishWordNet, omw)
    # built without the cyclic collector: it would run again and again while the reader makes its 330,000 lists and
    # dicts (the lemma index, the exceptions), none of which is ever garbage. A workflow job also skips the
    # collector's last pass over them at its exit (medfc.cli.job_process freezes what is alive when the step ends);
    # not here, where the process may go on: a frozen object is never collected
    with gc_paused(collect=True):
        loader.ensure_loaded()
    return loader


class _CachedWordNet:
    """Only the method METEOR calls (``synsets``), memoised per word."""

    def __init__(self, wordnet: LazyCorpusLoader) -> None:
        self._wn = wordnet
        self.synsets = lru_cache(maxsize=200_000)(self._synsets)

    def _synsets(self, word: str) -> list[Synset]:
        return self._wn.synsets(word)


class _CachedStemmer:
    def __init__(self, stemmer: PorterStemmer) -> None:
        self._stemmer = stemmer
        self.stem = lru_cache(maxsize=200_000)(stemmer.stem)


class Meteor:
    """Callable ``(prediction, reference) -> float`` METEOR scorer (see module docstring)."""

    def __init__(self, tokenizer_cache: int = 100_000) -> None:
        ensure_nltk_data(wordnet=True, punkt=True)
        nltk = import_nltk()
        from nltk.stem.porter import PorterStemmer
        from nltk.translate.meteor_score import single_meteor_score

        self._single = single_meteor_score
        self._wordnet = _CachedWordNet(english_wordnet())
        self._stemmer = _CachedStemmer(PorterStemmer())
        self.tokenize = lru_cache(maxsize=tokenizer_cache)(lambda s: tuple(nltk.word_tokenize(s)))

    def tokens_score(self, pred_tokens: Iterable[str], ref_tokens: Iterable[str]) -> float:
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
