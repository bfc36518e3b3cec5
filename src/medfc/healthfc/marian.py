"""The local DE→EN translation models (Marian/Opus-MT or any seq2seq model), run by transformers
(:class:`MarianTranslator`) or CTranslate2 (:class:`CTranslate2Translator`), loaded lazily."""

from __future__ import annotations

import logging
import os
from pathlib import Path
from typing import TYPE_CHECKING

from medfc.common.job import no_cuda_error
from medfc.healthfc.translators import LengthSortedBatches, ModelUnavailableError

if TYPE_CHECKING:  # the model libraries are loaded by a translator's load()
    import ctranslate2
    from transformers import PreTrainedModel

    from medfc.healthfc.ct2_models import ConvertedModel

log = logging.getLogger(__name__)


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
    if requested is not None:
        return requested
    return os.environ.get("HF_HUB_OFFLINE", "") not in ("", "0") or Path(model).is_dir()


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
