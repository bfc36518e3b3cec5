"""What every DE→EN translation backend shares: the :class:`Translator` protocol, :class:`ModelUnavailableError`, and
the local models' batching loop :class:`LengthSortedBatches`."""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Protocol, runtime_checkable

if TYPE_CHECKING:
    from transformers import PreTrainedTokenizerBase


class ModelUnavailableError(RuntimeError):
    """A translation model could not be loaded (hub unreachable, path missing, broken files)."""


BatchCallback = Callable[[list[str], list[str]], None]
"""``on_batch(sources, targets)``: one finished batch of a translator, in the order it was sent."""


@runtime_checkable
class Translator(Protocol):
    name: str
    """Model name used as the memory key."""
    origin: str
    """Memory origin for its output: "model" or "deepl"."""

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
