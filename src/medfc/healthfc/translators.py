"""The DE→EN translators of the backends (docs/translation.md): Marian/Opus-MT run by transformers or by CTranslate2
(converted once into a cache), and the DeepL API; each loads its library in ``load()`` or its constructor."""

from __future__ import annotations

import hashlib
import json
import logging
import os
import re
import shutil
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from medfc.common.job import no_cuda_error
from medfc.common.jsontypes import JSONObject
from medfc.common.pinning import sha256_of

if TYPE_CHECKING:
    import ctranslate2
    import requests
    from transformers import PreTrainedModel, PreTrainedTokenizerBase

log = logging.getLogger(__name__)


class ModelUnavailableError(RuntimeError):
    """A translation model could not be loaded (hub unreachable, path missing, broken files)."""


# on_batch(sources, targets): one finished batch of a translator, in the order it was sent
BatchCallback = Callable[[list[str], list[str]], None]


@runtime_checkable
class Translator(Protocol):
    name: str  # the model name used as the memory key
    origin: str  # the memory origin of its output: "model" or "deepl"

    def translate(self, texts: Sequence[str], on_batch: BatchCallback | None = None) -> list[str]:
        """Translate ``texts`` in order, calling ``on_batch(sources, targets)`` after each batch (optional)."""


class LengthSortedBatches:
    """The local models' :meth:`translate`: ``load()``, then the texts by length (fewer pad tokens) in batches through
    ``_translate_batch``, each handed to ``on_batch``; returned in input order."""

    bar_suffix = ""

    def __init__(self, model_name_or_path: str | os.PathLike, device: str, batch_size: int, max_length: int, num_beams: int,
                 name: str | None, progress: bool, local_files_only: bool | None):
        self.model_name_or_path = str(model_name_or_path)
        self.name = name or self.model_name_or_path
        self.device_request = device
        self.batch_size = max(1, int(batch_size))
        self.max_length, self.num_beams = int(max_length), int(num_beams)
        self.progress, self.local_files_only = progress, local_files_only
        self._tokenizer: PreTrainedTokenizerBase | None = None
        self.device: str | None = None
        self.n_batches = self.n_sentences = 0

    def translate(self, texts: Sequence[str], on_batch: BatchCallback | None = None) -> list[str]:
        if not texts:
            return []
        self.load()
        from tqdm.auto import tqdm

        order = sorted(range(len(texts)), key=lambda i: (len(texts[i]), i), reverse=True)
        out: list[str] = [""] * len(texts)
        batches = [order[i : i + self.batch_size] for i in range(0, len(order), self.batch_size)]
        desc = f"translate {Path(self.name).name}{self.bar_suffix}"
        with tqdm(total=len(texts), desc=desc, unit="sent", disable=not self.progress) as bar:
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
        return out


def _resolve_device(device: str) -> str:
    if device != "auto":
        return device
    import torch

    if torch.cuda.is_available():
        return "cuda"
    if error := no_cuda_error("healthfc.translation.device auto", f" to torch {torch.__version__}"):
        raise error
    return "cpu"


def _local_files_only(requested: bool | None, model: str) -> bool:
    """``local_files_only`` as requested, else whether HF_HUB_OFFLINE is set or the model is a local directory."""
    offline = os.environ.get("HF_HUB_OFFLINE", "") not in ("", "0") or Path(model).is_dir()
    return requested if requested is not None else offline


class MarianTranslator(LengthSortedBatches):
    """A local seq2seq model (hub id such as ``Helsinki-NLP/opus-mt-de-en``, or a local directory), loaded lazily;
    ``device="auto"`` picks CUDA when available, where the weights are cast to fp16 (unless ``fp16`` says)."""

    origin = "model"

    def __init__(self, model_name_or_path: str | os.PathLike, device: str = "auto", batch_size: int = 32, max_length: int = 512,
                 num_beams: int = 4, *, name: str | None = None, fp16: bool | None = None, progress: bool = True,
                 local_files_only: bool | None = None):
        super().__init__(model_name_or_path, device, batch_size, max_length, num_beams, name, progress, local_files_only)
        self.fp16 = fp16
        self._model: PreTrainedModel | None = None

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
            raise ModelUnavailableError(f"cannot load translation model {self.model_name_or_path!r}: {type(exc).__name__}: {exc}") from exc
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


MANIFEST = "medfc.json"
LAYOUT = 1  # the version of the cache directory's layout (bump to reconvert everything)


@dataclass(frozen=True)
class ConvertedModel:
    path: Path  # the cache entry: model/, tokenizer/, medfc.json
    converted: bool  # True when this call converted the model, False on a cache hit
    manifest: JSONObject  # medfc.json: what was converted, how


def model_fingerprint(model: str, *, local_files_only: bool) -> str:
    """``dir:<sha256 of the files>`` for a local directory, ``hub:<id>@<commit>`` for a hub id."""
    path = Path(model)
    if path.is_dir():
        h = hashlib.sha256()
        for f in sorted(p for p in path.rglob("*") if p.is_file() and not any(part.startswith(".") for part in p.relative_to(path).parts)):
            h.update(f"{f.relative_to(path).as_posix()}\0{f.stat().st_size}\0{sha256_of(f)}\n".encode())
        return f"dir:{h.hexdigest()}"
    try:
        from transformers.utils import cached_file

        config = cached_file(model, "config.json", local_files_only=local_files_only)
    except Exception as exc:  # no hub, not cached, no such repository
        raise ModelUnavailableError(f"cannot find model {model!r}: {type(exc).__name__}: {exc}") from exc
    if config is None:
        raise ModelUnavailableError(f"cannot find model {model!r}: no config.json")
    return f"hub:{model}@{Path(config).parent.name}"


def _slug(model: str) -> str:
    name = Path(model.rstrip("/\\")).name or "model"
    return re.sub(r"[^A-Za-z0-9._-]+", "_", name)[:60]


def _read_manifest(entry: Path) -> JSONObject | None:
    try:
        manifest = json.loads((entry / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not (entry / "model" / "model.bin").is_file() or not (entry / "tokenizer").is_dir():
        return None
    return manifest if isinstance(manifest, dict) else None


def ensure_converted(model: str, cache_dir: str | os.PathLike, quantization: str, *, local_files_only: bool) -> ConvertedModel:
    """The cached CTranslate2 conversion of ``model`` in ``quantization``, keyed by the model's fingerprint, the
    ctranslate2 version and the quantization; a missing one is built in a temporary directory renamed into place (no run
    leaves a half model). ModelUnavailableError when the model or ctranslate2 is missing or the conversion fails."""
    try:
        import ctranslate2
    except ImportError as exc:
        raise ModelUnavailableError(f"the ctranslate2 backend needs the ctranslate2 package ({exc})") from exc
    spec = {"fingerprint": model_fingerprint(model, local_files_only=local_files_only), "quantization": quantization,
            "ctranslate2": ctranslate2.__version__, "layout": LAYOUT}  # what the cache key covers
    key = hashlib.sha256(json.dumps(spec, sort_keys=True).encode()).hexdigest()[:16]
    cache = Path(cache_dir)
    entry = cache / f"{_slug(model)}-{quantization}-{key}"
    manifest = _read_manifest(entry)
    if manifest is not None:
        log.info("CTranslate2 model for %s (%s) from the cache: %s", model, quantization, entry)
        return ConvertedModel(entry, False, manifest)

    cache.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{entry.name}.", dir=cache))
    try:
        from ctranslate2.converters import TransformersConverter
        from transformers import AutoTokenizer, GenerationConfig

        log.info("converting %s to CTranslate2 (%s) into %s", model, quantization, entry)
        TransformersConverter(model).convert(str(tmp / "model"), quantization=quantization, force=True)
        AutoTokenizer.from_pretrained(model, local_files_only=local_files_only).save_pretrained(tmp / "tokenizer")
        try:
            generation = GenerationConfig.from_pretrained(model, local_files_only=local_files_only)
            forced_eos = generation.forced_eos_token_id
        except OSError:  # no generation_config.json: transformers falls back to the model config
            from transformers import AutoConfig

            forced_eos = getattr(AutoConfig.from_pretrained(model, local_files_only=local_files_only), "forced_eos_token_id", None)
        manifest = {"model": model, **spec, "key": key, "forced_eos": forced_eos is not None}
        (tmp / MANIFEST).write_text(json.dumps(manifest, indent=1, sort_keys=True) + "\n", encoding="utf-8")
        if entry.exists() and _read_manifest(entry) is None:  # an incomplete entry left by hand
            shutil.rmtree(entry, ignore_errors=True)
        try:
            os.rename(tmp, entry)
        except OSError:  # another run finished the same conversion first
            if _read_manifest(entry) is None:
                raise
            shutil.rmtree(tmp, ignore_errors=True)
            return ConvertedModel(entry, False, _read_manifest(entry) or manifest)
    except Exception as exc:  # converter: unsupported architecture, vocabulary mismatch, missing files
        shutil.rmtree(tmp, ignore_errors=True)
        raise ModelUnavailableError(f"cannot convert {model!r} to CTranslate2 ({quantization}): "
                                    f"{type(exc).__name__}: {exc}") from exc
    return ConvertedModel(entry, True, manifest)


class CTranslate2Translator(LengthSortedBatches):
    """A Marian (Opus-MT) model run by CTranslate2, converted once into ``cache_dir``, loaded lazily.
    ``compute_type="auto"``: ``int8`` on the CPU, ``float16`` on CUDA (else ``float32``). The output length limit is
    transformers' ``generate(max_length=…)``'s (``max_length - 2`` tokens with a forced end token, else ``- 1``), so
    greedy float32 translations equal :class:`MarianTranslator`'s on the CPU."""

    origin = "model"
    bar_suffix = " (ct2)"

    def __init__(self, model_name_or_path: str | os.PathLike, cache_dir: str | os.PathLike, device: str = "auto", compute_type: str = "auto",
                 batch_size: int = 32, max_length: int = 512, num_beams: int = 4, *, name: str | None = None, progress: bool = True,
                 local_files_only: bool | None = None, intra_threads: int = 0):
        super().__init__(model_name_or_path, device, batch_size, max_length, num_beams, name, progress, local_files_only)
        self.cache_dir, self.intra_threads = Path(cache_dir), int(intra_threads)
        self.compute_type_request = compute_type
        self._translator: ctranslate2.Translator | None = None
        self.compute_type: str | None = None
        self.converted: ConvertedModel | None = None  # once loaded (its ``.converted``: False on a cache hit)
        self.max_decoding_length = 0

    @staticmethod
    def resolve(device: str, compute_type: str) -> tuple[str, int, str]:
        """(device, device index, compute type) for a request; ``auto`` resolved as the class says."""
        import ctranslate2

        if device == "auto":
            device = "cuda" if ctranslate2.get_cuda_device_count() > 0 else "cpu"
            if device == "cpu" and (error := no_cuda_error("healthfc.translation.device auto", " to CTranslate2")):
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
        try:
            import ctranslate2
            from transformers import AutoTokenizer
        except ImportError as exc:
            raise ModelUnavailableError(f"the ctranslate2 backend needs the ctranslate2 package: {exc}") from exc
        local_only = _local_files_only(self.local_files_only, self.model_name_or_path)
        try:
            device, index, compute_type = self.resolve(self.device_request, self.compute_type_request)
            converted = ensure_converted(self.model_name_or_path, self.cache_dir, compute_type, local_files_only=local_only)
            tokenizer = AutoTokenizer.from_pretrained(converted.path / "tokenizer", local_files_only=True)
            translator = ctranslate2.Translator(str(converted.path / "model"), device=device, device_index=index,
                                                compute_type=compute_type, intra_threads=self.intra_threads)
        except (OSError, ValueError, RuntimeError) as exc:
            raise ModelUnavailableError(f"cannot load translation model {self.model_name_or_path!r} with CTranslate2: "
                                        f"{type(exc).__name__}: {exc}") from exc
        self.max_decoding_length = max(1, self.max_length - (2 if converted.manifest.get("forced_eos") else 1))
        self._tokenizer, self._translator, self.converted = tokenizer, translator, converted
        self.device, self.compute_type = device if device == "cpu" else f"cuda:{index}", compute_type
        log.info("loaded %s with CTranslate2 on %s (%s, %s)", self.model_name_or_path, self.device, compute_type,
                 "converted now" if converted.converted else "cached conversion")

    def _translate_batch(self, texts: list[str]) -> list[str]:
        tok = self._tokenizer
        ids = tok(texts, truncation=True, max_length=self.max_length).input_ids
        results = self._translator.translate_batch([tok.convert_ids_to_tokens(x) for x in ids], beam_size=self.num_beams,
                                                   max_decoding_length=self.max_decoding_length, min_decoding_length=0, max_input_length=0)
        return [tok.decode(tok.convert_tokens_to_ids(res.hypotheses[0]), skip_special_tokens=True).strip() for res in results]


class DeepLError(RuntimeError):
    """The DeepL API refused or failed a request after retries."""


class DeepLTranslator:
    """DeepL API v2 backend (needs ``DEEPL_AUTH_KEY``). Free-plan keys (ending in ``:fx``) go to api-free.deepl.com;
    429, 5xx and connection errors are retried with exponential backoff, 456 (quota exceeded) and other 4xx fail."""

    origin = "deepl"

    def __init__(self, auth_key: str | None = None, *, source_lang: str = "DE", target_lang: str = "EN-US", base_url: str | None = None,
                 session: requests.Session | None = None, batch_size: int = 50, retries: int = 4, backoff_s: float = 1.0,
                 timeout_s: float = 60.0, name: str = "deepl"):
        key = auth_key if auth_key is not None else os.environ.get("DEEPL_AUTH_KEY", "")
        if not key:
            raise ModelUnavailableError("DeepL backend selected but DEEPL_AUTH_KEY is not set")
        self.auth_key = key
        self.base_url = (base_url or ("https://api-free.deepl.com" if key.endswith(":fx") else "https://api.deepl.com")).rstrip("/")
        self.source_lang, self.target_lang = source_lang, target_lang
        self.batch_size = max(1, min(int(batch_size), 50))
        self.retries, self.backoff_s, self.timeout_s, self.name = int(retries), float(backoff_s), float(timeout_s), name
        from medfc.common.http import HttpClient

        self.http = HttpClient(cache_dir=None, rate=10.0, burst=5, user_agent="medfc", timeout=self.timeout_s,
                               max_retries=self.retries, backoff=self.backoff_s, session=session)

    def translate(self, texts: Sequence[str], on_batch: BatchCallback | None = None) -> list[str]:
        from medfc.common.http import HttpError

        out: list[str] = []
        for i in range(0, len(texts), self.batch_size):
            sources = list(texts[i : i + self.batch_size])
            payload = {"text": sources, "source_lang": self.source_lang, "target_lang": self.target_lang}
            try:
                data = self.http.post_json(f"{self.base_url}/v2/translate", payload,
                                           headers={"Authorization": f"DeepL-Auth-Key {self.auth_key}"})
            except HttpError as exc:  # 456 (quota exceeded) and other 4xx are not retried
                raise DeepLError(f"DeepL request failed ({exc})") from exc
            targets = [t["text"] for t in data.get("translations", [])]
            if len(targets) != len(sources):
                raise DeepLError(f"DeepL returned {len(targets)} translations for {len(sources)} texts")
            out.extend(targets)
            if on_batch is not None:
                on_batch(sources, targets)
        return out
