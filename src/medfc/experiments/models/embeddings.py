"""Frozen-encoder embeddings (mean-pooled, L2-normalised, as sentence-transformers'), kept on disk per (model,
recipe, text) and shared by the ``frozen`` and ``gbm`` kinds: each batch one ``.npz`` renamed into place whole, a
damaged one a counted miss (docs/experiments.md, "Frozen-encoder features"); torch loads with the first text not stored.
"""

from __future__ import annotations

import hashlib
import logging
import os
import re
import secrets
import time
from collections.abc import Sequence
from contextlib import suppress
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal

import numpy as np

from medfc.common.io import atomic_output

if TYPE_CHECKING:  # transformers and torch load with the first text no store holds
    from transformers import PreTrainedModel, PreTrainedTokenizerBase

    from medfc.common.device import Placement

log = logging.getLogger(__name__)

DIGEST = 32  # bytes of a text's SHA-256, the key of its vector
STALE_TMP_S = 3600.0  # a temporary file this old was left by a killed job: removed


def text_digest(text: str) -> bytes:
    return hashlib.sha256(text.encode("utf-8")).digest()


@dataclass(frozen=True)
class Recipe:
    """What decides a text's vector besides the text (its :attr:`key` names the store's folder)."""

    model: str
    max_length: int
    side: Literal["head", "tail"]

    @property
    def key(self) -> str:
        return f"{self.model}|mean|L{self.max_length}|{self.side}"

    @property
    def folder(self) -> str:
        slug = re.sub(r"[^A-Za-z0-9.]+", "-", self.key).strip("-")[-60:]
        return f"{slug}-{hashlib.sha256(self.key.encode('utf-8')).hexdigest()[:16]}"


@dataclass
class EmbedStats:
    """What a job's embeddings cost: distinct texts asked for, stored, encoded, cut; batch files written, damaged; seconds."""

    texts: int = 0
    cached: int = 0
    encoded: int = 0
    truncated: int = 0
    files_written: int = 0
    damaged_files: int = 0
    encode_seconds: float = 0.0

    def as_dict(self) -> dict[str, int | float]:
        return {**self.__dict__, "encode_seconds": round(self.encode_seconds, 3)}


class EmbeddingStore:
    """The vectors of one recipe on disk; ``directory`` None keeps nothing."""

    def __init__(self, directory: str | os.PathLike | None, recipe: Recipe, stats: EmbedStats | None = None):
        self.recipe = recipe
        self.dir = Path(directory) / recipe.folder if directory else None
        self.stats = stats if stats is not None else EmbedStats()
        self.dim: int | None = None
        self._written: list[Path] = []  # this job's batch files since the last merge

    def _files(self) -> list[Path]:
        if self.dir is None or not self.dir.is_dir():
            return []
        return sorted(p for p in self.dir.iterdir() if p.suffix == ".npz" and not p.name.startswith("."))

    def _read(self, path: Path) -> tuple[np.ndarray, np.ndarray]:
        """(digests [n, 32] uint8, vectors [n, dim] float32) of one batch file; ValueError when not whole."""
        with np.load(path, allow_pickle=False) as z:
            recipe, keys, vecs = str(z["recipe"]), z["keys"], z["vecs"]
        if recipe != self.recipe.key:
            raise ValueError(f"holds recipe {recipe!r}")
        if keys.dtype != np.uint8 or keys.ndim != 2 or keys.shape[1] != DIGEST:
            raise ValueError(f"keys of shape {keys.shape} and type {keys.dtype}")
        if vecs.dtype != np.float32 or vecs.ndim != 2 or len(vecs) != len(keys) or not np.isfinite(vecs).all():
            raise ValueError(f"vectors of shape {vecs.shape} and type {vecs.dtype} for {len(keys)} keys, or not finite")
        return keys, vecs

    def load(self) -> dict[bytes, np.ndarray]:
        """Every stored vector by text digest; a damaged or odd-sized file is counted, logged and set aside."""
        parts: list[tuple[Path, np.ndarray, np.ndarray]] = []
        for _attempt in range(3):
            parts, vanished = [], False
            for path in self._files():
                try:
                    parts.append((path, *self._read(path)))
                except FileNotFoundError:
                    vanished = True
                except Exception as exc:  # noqa: BLE001 (whatever a damaged file raises: a miss, never a crash)
                    self._set_aside(path, exc)
            if not vanished:
                break
        if parts and self.dim is None:
            sizes: dict[int, int] = {}
            for _, keys, vecs in parts:
                sizes[vecs.shape[1]] = sizes.get(vecs.shape[1], 0) + len(keys)
            self.dim = max(sizes, key=lambda d: (sizes[d], d))
        out: dict[bytes, np.ndarray] = {}
        for path, keys, vecs in parts:
            if vecs.shape[1] != self.dim:
                self._set_aside(path, ValueError(f"vectors of {vecs.shape[1]} dimensions, the store's have {self.dim}"))
                continue
            out.update(zip(map(bytes, keys), vecs))
        return out

    def _set_aside(self, path: Path, exc: BaseException) -> None:
        self.stats.damaged_files += 1
        log.warning("%s: not a whole batch of embeddings (%s: %s); its texts are encoded again", path, type(exc).__name__, exc)
        with suppress(OSError):
            os.replace(path, path.with_name(path.name + ".damaged"))

    def put(self, digests: Sequence[bytes], vecs: np.ndarray) -> None:
        """One batch, whole or not at all: written under a temporary name, then renamed into place."""
        if self.dir is None or not len(digests):
            return
        self.dir.mkdir(parents=True, exist_ok=True)
        if not self._written:  # this job's first batch: the temporary files a killed job left go
            now = time.time()
            for p in self.dir.glob(".*.tmp"):
                with suppress(OSError):
                    if now - p.stat().st_mtime > STALE_TMP_S:
                        p.unlink()
        keys = np.frombuffer(b"".join(digests), dtype=np.uint8).reshape(len(digests), DIGEST)
        self._written.append(self._write(keys, np.ascontiguousarray(vecs, dtype=np.float32)))
        self.stats.files_written += 1

    def _write(self, keys: np.ndarray, vecs: np.ndarray) -> Path:
        final = self.dir / f"{os.getpid()}-{secrets.token_hex(8)}.npz"
        with atomic_output(final) as fh:  # a hidden temporary name (``.*.tmp``) until it is whole
            np.savez(fh, recipe=np.array(self.recipe.key), keys=keys, vecs=vecs)
        return final

    def merge_written(self) -> None:
        """The batch files this job wrote since the last merge, as one file (written before they go)."""
        if len(self._written) > 1:
            parts = [self._read(p) for p in self._written]
            self._write(np.concatenate([k for k, _ in parts]), np.concatenate([v for _, v in parts]))
            for p in self._written:
                p.unlink(missing_ok=True)
        self._written = []


class FrozenEncoder:
    """One job's frozen encoder: :meth:`embed` gives one row per text, from the store or encoded."""

    def __init__(self, model: str, *, cache_dir: str | os.PathLike | None, batch_size: int = 32, device: str = "auto",
                 threads: int | None = None, progress: bool = True,
                 lengths_key: str = "experiments.frozen.claim_length / evidence_length, or the alias's models.options"):
        self.model_name = model
        self.lengths_key = lengths_key  # the config keys of the token budgets, for the error naming a budget too long
        self.cache_dir = cache_dir or None
        self.batch_size = batch_size
        self.device = device
        self.threads = threads
        self.progress = progress
        self.stats = EmbedStats()
        self._stores: dict[Recipe, tuple[EmbeddingStore, dict[bytes, np.ndarray]]] = {}
        self._loaded: tuple[PreTrainedTokenizerBase, PreTrainedModel, Placement] | None = None  # (tokenizer, model, placement), at the first text not stored

    def _store(self, recipe: Recipe) -> tuple[EmbeddingStore, dict[bytes, np.ndarray]]:
        if recipe not in self._stores:
            store = EmbeddingStore(self.cache_dir, recipe, self.stats)
            self._stores[recipe] = (store, store.load())
        return self._stores[recipe]

    def embed(self, texts: Sequence[str], max_length: int, side: Literal["head", "tail"], desc: str = "embed") -> np.ndarray:
        """``[len(texts), dim]`` float32; a text asked for twice is encoded once."""
        recipe = Recipe(self.model_name, int(max_length), side)
        store, have = self._store(recipe)
        digests = [text_digest(t) for t in texts]
        unique = dict(zip(digests, texts))
        missing = [(d, t) for d, t in unique.items() if d not in have]
        self.stats.texts += len(unique)
        self.stats.cached += len(unique) - len(missing)
        if missing:
            start = time.perf_counter()
            try:
                self._encode(recipe, store, have, missing, desc)
            finally:
                store.merge_written()
                self.stats.encode_seconds += time.perf_counter() - start
        if not texts:
            return np.zeros((0, store.dim or 0), dtype=np.float32)
        return np.stack([have[d] for d in digests]).astype(np.float32, copy=False)

    def _load(self) -> tuple[PreTrainedTokenizerBase, PreTrainedModel, Placement]:
        if self._loaded is None:
            from transformers import AutoModel, AutoTokenizer

            from medfc.common.device import Placement
            from medfc.experiments.models.aliases import resolve_model

            path = resolve_model(self.model_name)
            placement = Placement.resolve(self.device, "fp32", self.threads)
            tokenizer = AutoTokenizer.from_pretrained(path)
            model = AutoModel.from_pretrained(path).eval().to(placement.device)
            self._loaded = (tokenizer, model, placement)
        return self._loaded

    def _encode(self, recipe: Recipe, store: EmbeddingStore, have: dict[bytes, np.ndarray], missing: list[tuple[bytes, str]], desc: str) -> None:
        import torch
        from tqdm import tqdm

        tokenizer, model, placement = self._load()
        limit = getattr(tokenizer, "model_max_length", None) or 0
        if 0 < limit < 1_000_000 and recipe.max_length > limit:
            raise ValueError(f"{self.model_name} reads at most {limit} tokens, not {recipe.max_length} ({self.lengths_key})")
        tokenizer.truncation_side = "left" if recipe.side == "tail" else "right"
        lengths = [len(ids) for ids in tokenizer([t for _, t in missing], truncation=False, verbose=False)["input_ids"]]
        cut = sum(n > recipe.max_length for n in lengths)
        self.stats.truncated += cut
        if cut:
            log.warning("%s: %d of %d texts exceeded %d tokens and were cut (%s kept)", desc, cut, len(missing), recipe.max_length, recipe.side)
        order = sorted(range(len(missing)), key=lambda i: -lengths[i])
        with tqdm(total=len(missing), desc=f"{desc} ({recipe.key})", unit="text", disable=not self.progress, mininterval=5.0,
                  leave=False) as bar:
            for start in range(0, len(order), self.batch_size):
                batch = [missing[i] for i in order[start : start + self.batch_size]]
                enc = tokenizer([t for _, t in batch], padding=True, truncation=True, max_length=recipe.max_length, return_tensors="pt")
                enc = {k: v.to(placement.device) for k, v in enc.items()}
                with torch.inference_mode():
                    hidden = model(**enc).last_hidden_state.float()
                mask = enc["attention_mask"].unsqueeze(-1).to(hidden.dtype)
                pooled = (hidden * mask).sum(1) / mask.sum(1).clamp(min=1e-9)
                vecs = torch.nn.functional.normalize(pooled, dim=-1).cpu().numpy().astype(np.float32)
                store.put([d for d, _ in batch], vecs)
                store.dim = vecs.shape[1]
                have.update(zip((d for d, _ in batch), vecs))
                self.stats.encoded += len(batch)
                bar.update(len(batch))
