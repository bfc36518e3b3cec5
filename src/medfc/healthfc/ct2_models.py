"""Marian (Opus-MT) models converted to CTranslate2 once, into a cache (:func:`ensure_converted`), keyed by the
model's fingerprint, the ctranslate2 version and the quantization. An entry (``model/``, ``tokenizer/``,
``medfc.json``) is built in a temporary directory and renamed into place: no run leaves a half model.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import re
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

from medfc.common.jsontypes import JSONObject
from medfc.common.pinning import sha256_of

log = logging.getLogger(__name__)

MANIFEST = "medfc.json"
LAYOUT = 1
"""Version of the cache directory's layout (bump to reconvert everything)."""


class ConversionError(RuntimeError):
    """The model could not be found, loaded or converted."""


@dataclass(frozen=True)
class ConvertedModel:
    path: Path
    """The cache entry: ``model/``, ``tokenizer/``, ``medfc.json``."""
    key: str
    converted: bool
    """True when this call converted the model, False on a cache hit."""
    manifest: JSONObject  # medfc.json: what was converted, how

    @property
    def model_dir(self) -> Path:
        return self.path / "model"

    @property
    def tokenizer_dir(self) -> Path:
        return self.path / "tokenizer"


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
        raise ConversionError(f"cannot find model {model!r}: {type(exc).__name__}: {exc}") from exc
    if config is None:
        raise ConversionError(f"cannot find model {model!r}: no config.json")
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
    """The cached CTranslate2 conversion of ``model`` in ``quantization``, converting it if missing; ConversionError
    when the model or ctranslate2 is unavailable or the conversion fails."""
    try:
        import ctranslate2
    except ImportError as exc:
        raise ConversionError(f"the ctranslate2 backend needs the ctranslate2 package ({exc})") from exc
    spec = {"fingerprint": model_fingerprint(model, local_files_only=local_files_only), "quantization": quantization,
            "ctranslate2": ctranslate2.__version__, "layout": LAYOUT}  # what the cache key covers
    key = hashlib.sha256(json.dumps(spec, sort_keys=True).encode()).hexdigest()[:16]
    cache = Path(cache_dir)
    entry = cache / f"{_slug(model)}-{quantization}-{key}"
    manifest = _read_manifest(entry)
    if manifest is not None:
        log.info("CTranslate2 model for %s (%s) from the cache: %s", model, quantization, entry)
        return ConvertedModel(entry, key, False, manifest)

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
            return ConvertedModel(entry, key, False, _read_manifest(entry) or manifest)
    except Exception as exc:  # converter: unsupported architecture, vocabulary mismatch, missing files
        shutil.rmtree(tmp, ignore_errors=True)
        raise ConversionError(f"cannot convert {model!r} to CTranslate2 ({quantization}): {type(exc).__name__}: {exc}") from exc
    return ConvertedModel(entry, key, True, manifest)
