"""DE→EN translation of article sentences through a translation memory.

* :class:`Translator` — the protocol every backend follows (``name``, ``origin``, ``translate``).
* :class:`MarianTranslator` — a local seq2seq model (MarianMT / opus-mt, or any
  ``AutoModelForSeq2SeqLM``), loaded lazily on first use, batched with inputs sorted by length,
  on the GPU in fp16 when one is available.
* :class:`CTranslate2Translator` — the same Marian model run by CTranslate2: converted once into a
  cache (:mod:`medfc.healthfc.ct2_models`), int8 on the CPU and float16 on CUDA by default, batched
  the same way.
* :class:`DeepLTranslator` — optional DeepL API backend (key from ``DEEPL_AUTH_KEY``).
* :func:`translate_with_memory` — corrections first, then memory hits; only the rest reach the
  translator, which is created (and its model loaded) only when something is missing.

See ``docs/translation.md``.
"""

from __future__ import annotations

import inspect
import logging
import os
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal, Protocol, TypedDict, runtime_checkable

import medfc
from medfc.common.job import no_cuda_error
from medfc.common.options import Options
from medfc.healthfc.sentences import BaseSplitter, article_sentence_records
from medfc.healthfc.records import ArticleRecord, ClaimRecord
from medfc.healthfc.tm import Corrections, TranslationMemory, normalize_key

if TYPE_CHECKING:  # the model libraries are loaded by a translator's load(), the HTTP stack by DeepL's
    import ctranslate2
    import requests
    from transformers import PreTrainedModel, PreTrainedTokenizerBase

    from medfc.healthfc.ct2_models import ConvertedModel

__all__ = [
    "CTranslate2Translator",
    "DeepLError",
    "DeepLTranslator",
    "MarianTranslator",
    "ModelUnavailableError",
    "TranslateOptions",
    "TranslationUnavailableError",
    "Translator",
    "make_translator_factory",
    "translate_articles",
    "translate_with_memory",
]

log = logging.getLogger(__name__)


class ModelUnavailableError(RuntimeError):
    """A translation model could not be loaded (hub unreachable, path missing, broken files)."""


class TranslationUnavailableError(RuntimeError):
    """Sentences are missing from the memory and no translator is available for them."""


class DeepLError(RuntimeError):
    """The DeepL API refused or failed a request after retries."""


BatchCallback = Callable[[list[str], list[str]], None]
"""``on_batch(sources, targets)``: one finished batch of a translator, in the order it was sent."""


@runtime_checkable
class Translator(Protocol):
    name: str
    """Model name used as the memory key."""
    origin: str
    """Memory origin for its output: "model" or "deepl"."""

    def translate(self, texts: Sequence[str], on_batch: BatchCallback | None = None) -> list[str]:
        """Translate ``texts`` in order; same length as the input. ``on_batch(sources, targets)``, when given,
        is called after each batch with its texts and their translations (the memory writes them there, so
        a kill loses at most the batch in flight). A translator whose ``translate`` takes no ``on_batch``
        still works: its output is written once, at the end."""
        ...


# --------------------------------------------------------------------------- Marian / seq2seq


def _resolve_device(device: str) -> str:
    if device != "auto":
        return device
    import torch

    if torch.cuda.is_available():
        return "cuda"
    error = no_cuda_error("healthfc.translation.device auto", f" to torch {torch.__version__}")
    if error:
        raise error
    return "cpu"


def _local_files_only(requested: bool | None, model: str) -> bool:
    """``local_files_only`` for a model: as requested, else offline when HF_HUB_OFFLINE is set or the model
    is a local directory."""
    if requested is not None:
        return requested
    return os.environ.get("HF_HUB_OFFLINE", "") not in ("", "0") or Path(model).is_dir()


class _LengthSortedBatches:
    """What the local model backends share: :meth:`translate` loads the model (the subclass's ``load``), sorts
    the texts by length (fewer pad tokens), translates batches of ``batch_size`` through the subclass's
    ``_translate_batch`` with a progress bar, hands each finished batch to ``on_batch`` (the memory's write),
    counts batches and sentences, and returns them in input order."""

    bar_suffix = ""
    name: str
    batch_size: int
    progress: bool
    n_batches: int
    n_sentences: int

    def translate(self, texts: Sequence[str], on_batch: BatchCallback | None = None) -> list[str]:
        if not texts:
            return []
        self.load()
        from tqdm.auto import tqdm

        order = sorted(range(len(texts)), key=lambda i: (len(texts[i]), i), reverse=True)
        out: list[str] = [""] * len(texts)
        batches = [order[i : i + self.batch_size] for i in range(0, len(order), self.batch_size)]
        bar = tqdm(total=len(texts), desc=f"translate {Path(self.name).name}{self.bar_suffix}", unit="sent", disable=not self.progress)
        try:
            for idx in batches:
                sources = [texts[i] for i in idx]
                targets = self._translate_batch(sources)
                for i, txt in zip(idx, targets, strict=True):
                    out[i] = txt
                if on_batch is not None:
                    on_batch(sources, list(targets))
                self.n_batches += 1
                self.n_sentences += len(idx)
                bar.update(len(idx))
        finally:
            bar.close()
        return out


class MarianTranslator(_LengthSortedBatches):
    """A local seq2seq translation model, loaded lazily.

    ``model_name_or_path`` is a hub id (e.g. ``Helsinki-NLP/opus-mt-de-en``, needs the hub or its
    local cache) or a local directory. ``device="auto"`` picks CUDA when available; on CUDA the
    weights are cast to fp16. Inputs are translated in batches of ``batch_size`` after sorting by
    length (fewer pad tokens), and returned in input order.
    """

    origin = "model"

    def __init__(
        self,
        model_name_or_path: str | os.PathLike,
        device: str = "auto",
        batch_size: int = 32,
        max_length: int = 512,
        num_beams: int = 4,
        *,
        name: str | None = None,
        fp16: bool | None = None,
        progress: bool = True,
        local_files_only: bool | None = None,
    ):
        self.model_name_or_path = str(model_name_or_path)
        self.name = name or self.model_name_or_path
        self.device_request = device
        self.batch_size = max(1, int(batch_size))
        self.max_length = int(max_length)
        self.num_beams = int(num_beams)
        self.fp16 = fp16
        self.progress = progress
        self.local_files_only = local_files_only
        self._model: PreTrainedModel | None = None
        self._tokenizer: PreTrainedTokenizerBase | None = None
        self.device: str | None = None
        self.n_batches = 0
        self.n_sentences = 0

    @property
    def loaded(self) -> bool:
        return self._model is not None

    def load(self) -> None:
        """Load tokenizer and model (idempotent); raise :class:`ModelUnavailableError` on failure."""
        if self._model is not None:
            return
        from transformers import AutoModelForSeq2SeqLM, AutoTokenizer

        local_only = _local_files_only(self.local_files_only, self.model_name_or_path)
        try:
            tokenizer = AutoTokenizer.from_pretrained(self.model_name_or_path, local_files_only=local_only)
            model = AutoModelForSeq2SeqLM.from_pretrained(self.model_name_or_path, local_files_only=local_only)
        except Exception as exc:  # hub unreachable, missing path, bad files: all mean "no model"
            raise ModelUnavailableError(
                f"cannot load translation model {self.model_name_or_path!r}: {type(exc).__name__}: {exc}"
            ) from exc
        device = _resolve_device(self.device_request)
        use_fp16 = self.fp16 if self.fp16 is not None else device.startswith("cuda")
        if use_fp16:
            model = model.half()
        model.to(device)
        model.eval()
        self._tokenizer, self._model, self.device = tokenizer, model, device
        log.info("loaded %s on %s (fp16=%s)", self.model_name_or_path, device, use_fp16)

    def _translate_batch(self, texts: list[str]) -> list[str]:
        import torch

        enc = self._tokenizer(texts, return_tensors="pt", padding=True, truncation=True, max_length=self.max_length).to(self.device)
        with torch.inference_mode():
            gen = self._model.generate(**enc, max_length=self.max_length, num_beams=self.num_beams)
        return [txt.strip() for txt in self._tokenizer.batch_decode(gen, skip_special_tokens=True)]


# --------------------------------------------------------------------------- CTranslate2


class CTranslate2Translator(_LengthSortedBatches):
    """A Marian (Opus-MT) model run by CTranslate2, converted once into ``cache_dir``, loaded lazily.

    ``model_name_or_path`` is what :class:`MarianTranslator` takes (hub id or local directory);
    :func:`medfc.healthfc.ct2_models.ensure_converted` converts it with CTranslate2's
    ``TransformersConverter`` into ``cache_dir`` under a key of the model's fingerprint, the
    ctranslate2 version and the quantization, so a changed model or a new ctranslate2 reconverts and
    everything else reuses the conversion (a cache hit needs neither the transformers weights nor the
    hub). ``compute_type="auto"`` is ``int8`` on the CPU and ``float16`` on CUDA (``float32`` where
    the device supports neither); any CTranslate2 compute type can be named. The weights are stored
    in that type. ``device`` is ``auto`` (CUDA when CTranslate2 sees a GPU), ``cpu``, ``cuda`` or
    ``cuda:N``; ``intra_threads`` the CPU threads (0: CTranslate2's default).

    Tokenization, truncation (``max_length`` source tokens), sorting by length, batches of
    ``batch_size`` and decoding are those of :class:`MarianTranslator`. Decoding is CTranslate2's
    ``translate_batch`` with ``beam_size=num_beams``; the output length limit matches transformers'
    ``generate(max_length=…)``, which counts the decoder start token and, for models with a forced
    end token (Opus-MT), forces ``</s>`` into the last place: at most ``max_length - 2`` tokens
    (``max_length - 1`` without a forced end); like transformers (``min_length`` 0) it may end at
    once (CTranslate2's own default is at least one token). Under greedy decoding (``num_beams=1``) with
    ``compute_type="float32"`` the translations equal :class:`MarianTranslator`'s on the CPU; int8 and
    float16 round the weights, so a near-tie between two tokens can fall the other way.
    """

    origin = "model"
    bar_suffix = " (ct2)"

    def __init__(
        self,
        model_name_or_path: str | os.PathLike,
        cache_dir: str | os.PathLike,
        device: str = "auto",
        compute_type: str = "auto",
        batch_size: int = 32,
        max_length: int = 512,
        num_beams: int = 4,
        *,
        name: str | None = None,
        progress: bool = True,
        local_files_only: bool | None = None,
        intra_threads: int = 0,
    ):
        self.model_name_or_path = str(model_name_or_path)
        self.name = name or self.model_name_or_path
        self.cache_dir = Path(cache_dir)
        self.device_request = device
        self.compute_type_request = compute_type
        self.batch_size = max(1, int(batch_size))
        self.max_length = int(max_length)
        self.num_beams = int(num_beams)
        self.progress = progress
        self.local_files_only = local_files_only
        self.intra_threads = int(intra_threads)
        self._translator: ctranslate2.Translator | None = None
        self._tokenizer: PreTrainedTokenizerBase | None = None
        self.device: str | None = None
        self.compute_type: str | None = None
        self.converted: ConvertedModel | None = None
        """The :class:`~medfc.healthfc.ct2_models.ConvertedModel` once loaded (``.converted``: this
        load converted it; False: a cache hit)."""
        self.max_decoding_length = 0
        self.n_batches = 0
        self.n_sentences = 0

    @property
    def loaded(self) -> bool:
        return self._translator is not None

    @staticmethod
    def resolve(device: str, compute_type: str) -> tuple[str, int, str]:
        """(device, device index, compute type) for a request; ``auto`` resolved as the class says."""
        import ctranslate2

        if device == "auto":
            device = "cuda" if ctranslate2.get_cuda_device_count() > 0 else "cpu"
            error = None if device == "cuda" else no_cuda_error("healthfc.translation.device auto", " to CTranslate2")
            if error:
                raise error
        kind, _, index = device.partition(":")
        if kind not in ("cpu", "cuda"):
            raise ValueError(f"device {device!r}: expected auto, cpu, cuda or cuda:N")
        if compute_type == "auto":
            preferred = "float16" if kind == "cuda" else "int8"
            compute_type = preferred if preferred in ctranslate2.get_supported_compute_types(kind) else "float32"
        return kind, int(index or 0), compute_type

    def load(self) -> None:
        """Convert (when not cached) and load; raise :class:`ModelUnavailableError` on failure."""
        if self._translator is not None:
            return
        from medfc.healthfc.ct2_models import ConversionError, ensure_converted

        try:
            import ctranslate2
            from transformers import AutoTokenizer
        except ImportError as exc:
            raise ModelUnavailableError(f"the ctranslate2 backend needs the ctranslate2 package: {exc}") from exc
        local_only = _local_files_only(self.local_files_only, self.model_name_or_path)
        try:
            device, index, compute_type = self.resolve(self.device_request, self.compute_type_request)
            converted = ensure_converted(self.model_name_or_path, self.cache_dir, compute_type, local_files_only=local_only)
            tokenizer = AutoTokenizer.from_pretrained(converted.tokenizer_dir, local_files_only=True)
            translator = ctranslate2.Translator(str(converted.model_dir), device=device, device_index=index,
                                                compute_type=compute_type, intra_threads=self.intra_threads)
        except (ConversionError, OSError, ValueError, RuntimeError) as exc:
            raise ModelUnavailableError(
                f"cannot load translation model {self.model_name_or_path!r} with CTranslate2: {type(exc).__name__}: {exc}"
            ) from exc
        self.max_decoding_length = max(1, self.max_length - (2 if converted.manifest.get("forced_eos") else 1))
        self._tokenizer, self._translator, self.converted = tokenizer, translator, converted
        self.device, self.compute_type = device if device == "cpu" else f"cuda:{index}", compute_type
        log.info("loaded %s with CTranslate2 on %s (%s, %s)", self.model_name_or_path, self.device, compute_type,
                 "converted now" if converted.converted else "cached conversion")

    def _translate_batch(self, texts: list[str]) -> list[str]:
        tok = self._tokenizer
        ids = tok(texts, truncation=True, max_length=self.max_length).input_ids
        results = self._translator.translate_batch(
            [tok.convert_ids_to_tokens(x) for x in ids], beam_size=self.num_beams,
            max_decoding_length=self.max_decoding_length, min_decoding_length=0, max_input_length=0,
        )
        return [tok.decode(tok.convert_tokens_to_ids(res.hypotheses[0]), skip_special_tokens=True).strip() for res in results]


# --------------------------------------------------------------------------- DeepL


class DeepLTranslator:
    """DeepL API v2 backend (optional). Not used unless configured; needs ``DEEPL_AUTH_KEY``.

    Free-plan keys (ending in ``:fx``) go to api-free.deepl.com. 429 and 5xx responses and
    connection errors are retried with exponential backoff; 456 (quota exceeded) and other 4xx fail.
    """

    origin = "deepl"

    def __init__(
        self,
        auth_key: str | None = None,
        *,
        source_lang: str = "DE",
        target_lang: str = "EN-US",
        base_url: str | None = None,
        session: requests.Session | None = None,
        batch_size: int = 50,
        retries: int = 4,
        backoff_s: float = 1.0,
        timeout_s: float = 60.0,
        name: str = "deepl",
    ):
        key = auth_key if auth_key is not None else os.environ.get("DEEPL_AUTH_KEY", "")
        if not key:
            raise ModelUnavailableError("DeepL backend selected but DEEPL_AUTH_KEY is not set")
        self.auth_key = key
        self.base_url = (base_url or ("https://api-free.deepl.com" if key.endswith(":fx") else "https://api.deepl.com")).rstrip("/")
        self.source_lang, self.target_lang = source_lang, target_lang
        self.batch_size = max(1, min(int(batch_size), 50))
        self.retries, self.backoff_s, self.timeout_s = int(retries), float(backoff_s), float(timeout_s)
        self.name = name
        from medfc.common.http import HttpClient

        # the project's client: retries with backoff on 429/5xx and connection errors, honours Retry-After
        self.http = HttpClient(cache_dir=None, rate=10.0, burst=5, user_agent="medfc", timeout=self.timeout_s,
                               max_retries=self.retries, backoff=self.backoff_s, session=session)

    def _post(self, texts: list[str]) -> list[str]:
        from medfc.common.http import HttpError

        payload = {"text": texts, "source_lang": self.source_lang, "target_lang": self.target_lang}
        try:
            data = self.http.post_json(f"{self.base_url}/v2/translate", payload,
                                       headers={"Authorization": f"DeepL-Auth-Key {self.auth_key}"})
        except HttpError as exc:  # 456 (quota exceeded) and other 4xx are not retried
            raise DeepLError(f"DeepL request failed ({exc})") from exc
        got = [t["text"] for t in data.get("translations", [])]
        if len(got) != len(texts):
            raise DeepLError(f"DeepL returned {len(got)} translations for {len(texts)} texts")
        return got

    def translate(self, texts: Sequence[str], on_batch: BatchCallback | None = None) -> list[str]:
        out: list[str] = []
        for i in range(0, len(texts), self.batch_size):
            sources = list(texts[i : i + self.batch_size])
            targets = self._post(sources)
            out.extend(targets)
            if on_batch is not None:
                on_batch(sources, targets)
        return out


# --------------------------------------------------------------------------- memory-backed translation


def _takes_on_batch(translator: Translator) -> bool:
    """Whether ``translator.translate`` accepts ``on_batch`` (every backend here does; a plain callable
    translator, e.g. a test's, may not)."""
    try:
        params = inspect.signature(translator.translate).parameters
    except (TypeError, ValueError):
        return False
    return "on_batch" in params or any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values())


def translate_with_memory(
    texts: Sequence[str],
    translator_factory: Callable[[], Translator],
    memory: TranslationMemory,
    corrections: Corrections | None,
    model_name: str,
) -> tuple[list[str], dict[str, int]]:
    """Translate ``texts``: corrections first, then memory hits, and only the rest through the model.

    ``translator_factory`` is called (and the model loaded) only when some sentence is missing from
    both corrections and memory. New translations are appended to ``memory`` under ``model_name``
    with the translator's ``origin``, one append per batch of the translator (``on_batch``), so a run
    killed midway keeps every finished batch and its rerun sends the model only what is missing. Returns translations in input order (blank inputs give "") and
    ``stats`` over the unique non-blank sources:
    ``n_total`` (inputs), ``n_unique``, ``n_corrections``, ``n_memory_hits``, ``n_model``
    (``n_corrections + n_memory_hits + n_model == n_unique``).

    :raises TranslationUnavailableError: sentences are missing and the model cannot be loaded.
    """
    corrections = corrections or Corrections()
    keys = [normalize_key(t) for t in texts]
    unique = list(dict.fromkeys(k for k in keys if k))
    resolved: dict[str, str] = {}
    n_corr = n_mem = 0
    missing: list[str] = []
    for key in unique:
        fixed = corrections.get(model_name, key)
        if fixed is not None:
            resolved[key] = fixed
            n_corr += 1
            continue
        hit = memory.get(model_name, key)
        if hit is not None:
            resolved[key] = hit
            n_mem += 1
        else:
            missing.append(key)
    if missing:
        try:
            translator = translator_factory()
            load = getattr(translator, "load", None)
            if callable(load):
                load()
        except (ModelUnavailableError, OSError, ValueError, ImportError) as exc:
            raise TranslationUnavailableError(
                f"{len(missing)} sentence(s) are not in the translation memory for model {model_name!r}, "
                f"and the model cannot be loaded ({exc}). Fix: run the translation once with access to the "
                f"model hub (the model is then cached), or set `translation.model` to a local directory "
                f"holding the model, or add the missing sentences to the translation memory / corrections file."
            ) from exc
        origin = getattr(translator, "origin", "model")

        def write_batch(sources: list[str], targets: list[str]) -> None:
            if len(targets) != len(sources):
                raise RuntimeError(f"translator returned {len(targets)} texts for a batch of {len(sources)}")
            memory.put_many(model_name, zip(sources, targets), origin=origin)

        per_batch = _takes_on_batch(translator)
        translated = translator.translate(missing, on_batch=write_batch) if per_batch else translator.translate(missing)
        if len(translated) != len(missing):
            raise RuntimeError(f"translator returned {len(translated)} texts for {len(missing)} inputs")
        if not per_batch:  # a translator without batches of its own: its whole output at once
            memory.put_many(model_name, zip(missing, translated), origin=origin)
        resolved.update(zip(missing, translated))
    translations = [resolved[k] if k else "" for k in keys]
    stats = {
        "n_total": len(texts),
        "n_unique": len(unique),
        "n_corrections": n_corr,
        "n_memory_hits": n_mem,
        "n_model": len(missing),
    }
    return translations, stats


# ------------------------------------------------------------------------------- the stage's options


@dataclass(frozen=True)
class TranslateOptions(Options):
    """The ``healthfc.translation`` section as the translation step uses it (its shipped memory files
    and corrections are rule inputs), + ``memory`` (the working store under the cache, written by this
    step alone), ``ct2_cache`` (the ctranslate2 backend's converted models, under the cache) and
    ``splitter`` (``healthfc.sentences.base``)."""

    backend: Literal["marian", "ctranslate2", "deepl"]
    model: str
    model_name: str | None
    device: str
    compute_type: str
    batch_size: int
    max_length: int
    num_beams: int
    progress: bool
    memory: str
    ct2_cache: str
    """Where the ctranslate2 backend keeps its converted models (under the cache dir)."""
    splitter: BaseSplitter

    @property
    def memory_key(self) -> str:
        """The name translations are stored under in the memory (``model_name``, else ``model``)."""
        return self.model_name or self.model


def make_translator_factory(options: TranslateOptions) -> Callable[[], Translator]:
    """A factory for the configured backend; nothing is created (or loaded) until it is called."""
    if options.backend == "marian":
        def marian() -> Translator:
            return MarianTranslator(options.model, device=options.device, batch_size=options.batch_size, max_length=options.max_length,
                                    num_beams=options.num_beams, name=options.memory_key, progress=options.progress)

        return marian

    if options.backend == "ctranslate2":
        def ct2() -> Translator:
            return CTranslate2Translator(options.model, options.ct2_cache, device=options.device, compute_type=options.compute_type,
                                         batch_size=options.batch_size, max_length=options.max_length, num_beams=options.num_beams,
                                         name=options.memory_key, progress=options.progress)

        return ct2

    def deepl() -> Translator:
        return DeepLTranslator(name=options.memory_key)

    return deepl


class TranslatedArticle(TypedDict):
    """An article's sentences and texts in German and English (the translation step's ``sentences`` output)."""

    article_id: str
    url: str
    sentences_de: list[str]
    sentences_en: list[str]
    sections: list[str]  # body | studies, per sentence
    title_de: str
    title_en: str
    teaser_de: str
    teaser_en: str


class TranslatedClaim(TypedDict):
    """A claim's question and explanation in German and English (the translation step's ``claims_en`` output)."""

    claim_id: str
    article_id: str
    url: str
    question_de: str
    question_en: str
    explanation_de: str
    explanation_en: str
    title_de: str
    title_en: str


def translate_articles(
    articles: Sequence[ArticleRecord],
    claims: Sequence[ClaimRecord],
    translator_factory: Callable[[], Translator],
    memory: TranslationMemory,
    corrections: Corrections | None,
    model_name: str,
    *,
    base: str,
) -> tuple[list[TranslatedArticle], list[TranslatedClaim], dict[str, object]]:
    """Split and translate → (sentence records, claim records, report) — see the module docstring.

    :raises TranslationUnavailableError: texts are missing from corrections/memory and the
        translator cannot be created or loaded.
    """
    corrections = corrections or Corrections()
    sentence_lists = {a["article_id"]: article_sentence_records(a, base=base) for a in articles}  # type: ignore[arg-type]
    split = {aid: [str(r["text"]) for r in recs] for aid, recs in sentence_lists.items()}
    titles = {a["article_id"]: a.get("title", "") or "" for a in articles}
    texts: list[str] = []
    for a in articles:
        texts += [titles[a["article_id"]], a.get("teaser", "") or "", *split[a["article_id"]]]
    for c in claims:
        texts += [c.get("question", "") or "", c.get("explanation", "") or ""]
        texts.append(titles.get(c["article_id"], ""))

    # where each unique text's translation comes from (decided before the model adds anything)
    origin_of: dict[str, str | None] = {}
    for key in dict.fromkeys(normalize_key(t) for t in texts):
        if not key:
            continue
        if corrections.get(model_name, key) is not None:
            origin_of[key] = "correction"
        else:
            rec = memory.record(model_name, key)
            origin_of[key] = rec.origin if rec is not None else None

    translations, stats = translate_with_memory(texts, translator_factory, memory, corrections, model_name)
    table = {normalize_key(s): t for s, t in zip(texts, translations, strict=True)}

    def en(text: str) -> str:
        return table.get(normalize_key(text), "") if text and text.strip() else ""

    origins: Counter = Counter()
    for key, origin in origin_of.items():
        if origin is None:  # sent to the translator just now
            rec = memory.record(model_name, key)
            origin = rec.origin if rec is not None else "model"
        origins[origin] += 1

    sentence_records: list[TranslatedArticle] = []
    for a in articles:
        sents = split[a["article_id"]]
        sentence_records.append({
            "article_id": a["article_id"],
            "url": a.get("url", ""),
            "sentences_de": sents,
            "sentences_en": [en(s) for s in sents],
            "sections": [str(r["section"]) for r in sentence_lists[a["article_id"]]],
            "title_de": titles[a["article_id"]],
            "title_en": en(titles[a["article_id"]]),
            "teaser_de": a.get("teaser", "") or "",
            "teaser_en": en(a.get("teaser", "") or ""),
        })
    claim_records: list[TranslatedClaim] = []
    for c in claims:
        title = titles.get(c["article_id"], "")
        claim_records.append({
            "claim_id": c["claim_id"],
            "article_id": c["article_id"],
            "url": c.get("url", ""),
            "question_de": c.get("question", "") or "",
            "question_en": en(c.get("question", "") or ""),
            "explanation_de": c.get("explanation", "") or "",
            "explanation_en": en(c.get("explanation", "") or ""),
            "title_de": title,
            "title_en": en(title),
        })
    report: dict[str, object] = {
        **stats,
        "origins": dict(sorted(origins.items())),
        "n_articles": len(sentence_records),
        "n_claims": len(claim_records),
        "n_sentences": sum(len(r["sentences_de"]) for r in sentence_records),
        "model_name": model_name,
        "splitter": {"base": base, "rules": True, "medfc_version": medfc.__version__},
        "memory_skipped_lines": memory.skipped_lines,
    }
    return sentence_records, claim_records, report
