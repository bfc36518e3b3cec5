"""The DE→EN translation backends by name: how each builds its translator (:mod:`medfc.healthfc.translators` imported
only then, so the plan loads no model library), whether it runs locally, and the API key a run needs."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated, Literal

from medfc.common.options import OneOf, Options
from medfc.common.registry import lookup
from medfc.healthfc.sentences import BaseSplitter

if TYPE_CHECKING:  # the protocol only; the translators' module is imported when a translator is built
    from medfc.healthfc.translators import Translator


@dataclass(frozen=True)
class ApiKey:
    """An API key a backend reads from the environment, and why the run needs it."""

    env: str
    why: str


@dataclass(frozen=True)
class TranslationBackend:
    """One translation backend: ``build(options)`` makes its translator (the model loads later); ``local``: the model
    runs in the job's process, else the job calls a service; ``key``: the API key a run needs."""

    name: str
    build: Callable[[TranslateOptions], Translator]
    local: bool
    key: ApiKey | None = None


def _marian(options: TranslateOptions) -> Translator:
    from medfc.healthfc.translators import MarianTranslator

    return MarianTranslator(options.model, device=options.device, batch_size=options.batch_size, max_length=options.max_length,
                            num_beams=options.num_beams, name=options.memory_key, progress=options.progress)


def _ctranslate2(options: TranslateOptions) -> Translator:
    from medfc.healthfc.translators import CTranslate2Translator

    return CTranslate2Translator(options.model, options.ct2_cache, device=options.device, compute_type=options.compute_type,
                                 batch_size=options.batch_size, max_length=options.max_length, num_beams=options.num_beams,
                                 name=options.memory_key, progress=options.progress)


def _deepl(options: TranslateOptions) -> Translator:
    from medfc.healthfc.translators import DeepLTranslator

    return DeepLTranslator(name=options.memory_key)


TRANSLATION_BACKENDS: dict[str, TranslationBackend] = {
    b.name: b for b in (
        TranslationBackend("marian", _marian, local=True),
        TranslationBackend("ctranslate2", _ctranslate2, local=True),
        TranslationBackend("deepl", _deepl, local=False,
                           key=ApiKey("DEEPL_AUTH_KEY", "the deepl backend sends every sentence to the DeepL API")),
    )
}


def translation_backend(name: str) -> TranslationBackend:
    """The backend called ``name``; an unknown one is a ValueError naming the known ones."""
    return lookup(TRANSLATION_BACKENDS, name, "translation backend")


# checked against the registry when the options are built, so a backend registered later (a test's) is one
BackendName = Annotated[Literal[tuple(TRANSLATION_BACKENDS)],  # type: ignore[valid-type]
                        OneOf(lambda: tuple(TRANSLATION_BACKENDS))]


@dataclass(frozen=True)
class TranslateOptions(Options):
    """The ``healthfc.translation`` section + ``memory`` (the working store), ``ct2_cache`` and ``splitter``."""

    backend: BackendName  # a registered backend (TRANSLATION_BACKENDS)
    model: str
    model_name: str | None
    device: str
    compute_type: str
    batch_size: int
    max_length: int
    num_beams: int
    progress: bool
    memory: str
    ct2_cache: str  # the ctranslate2 backend's converted models (under the cache dir)
    splitter: BaseSplitter

    @property
    def memory_key(self) -> str:
        """The name translations are stored under in the memory (``model_name``, else ``model``)."""
        return self.model_name or self.model
