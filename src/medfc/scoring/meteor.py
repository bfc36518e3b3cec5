"""NLTK METEOR with the AVeriTeC conventions: ``Meteor()(prediction, reference)`` equals
``single_meteor_score(word_tokenize(reference), word_tokenize(prediction))`` with NLTK's defaults, tokens, stems and
synsets cached. A missing WordNet raises :class:`~medfc.scoring.nltk_data.NltkDataMissing`.
"""

from __future__ import annotations

import codecs
from collections.abc import Iterator
from functools import lru_cache
from types import SimpleNamespace
from typing import IO, TYPE_CHECKING

from medfc.common.collector import gc_paused
from medfc.common.nltk_import import import_nltk
from medfc.scoring.nltk_data import WORDNET_REQUIRED, ensure_nltk_data

if TYPE_CHECKING:
    from nltk.corpus.util import LazyCorpusLoader
    from nltk.data import SeekableUnicodeStreamReader


class _LineFile:
    """A WordNet file read in binary mode and decoded line by line, with the line semantics of NLTK's own
    ``SeekableUnicodeStreamReader`` (a line ends at any ``str.splitlines`` boundary) and byte offsets for
    ``seek``/``tell``; about 0.3 s less CPU than NLTK's reader to load WordNet's indices."""

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
_LINE_FILES = ("lexnames", *WORDNET_REQUIRED)


def english_wordnet() -> LazyCorpusLoader:
    """NLTK's WordNet reader as ``nltk.corpus.wordnet`` loads it, with a faster line reader (:class:`_LineFile`)
    and without ``map_wn("wordnet")``, which maps WordNet 3.0 onto itself (about 40 % of the loading) and which
    ``synsets`` never reads. A WordNet inside a zip is read by NLTK's reader."""
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
    # built without the cyclic collector, which would run again and again over the reader's 330,000 lists and dicts
    with gc_paused(collect=True):
        loader.ensure_loaded()
    return loader


class Meteor:
    """Callable ``(prediction, reference) -> float`` METEOR scorer (see module docstring)."""

    def __init__(self) -> None:
        ensure_nltk_data(wordnet=True, punkt=True)
        nltk = import_nltk()
        from nltk.stem.porter import PorterStemmer
        from nltk.translate.meteor_score import single_meteor_score

        self._single = single_meteor_score
        # only the methods METEOR calls, memoised per word
        self._wordnet = SimpleNamespace(synsets=lru_cache(maxsize=200_000)(english_wordnet().synsets))
        self._stemmer = SimpleNamespace(stem=lru_cache(maxsize=200_000)(PorterStemmer().stem))
        self.tokenize = lru_cache(maxsize=100_000)(lambda s: tuple(nltk.word_tokenize(s)))

    def __call__(self, prediction: str, reference: str) -> float:
        ref, pred = list(self.tokenize(reference)), list(self.tokenize(prediction))
        return float(self._single(ref, pred, wordnet=self._wordnet, stemmer=self._stemmer))


@lru_cache(maxsize=1)
def default_meteor() -> Meteor:
    """A process-wide :class:`Meteor` (caches shared between calls)."""
    return Meteor()
