"""Torch device and precision: shared by training (``medfc.experiments``) and local LLMs (``medfc.llm``)."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import torch

from medfc.common.job import no_cuda_error
from medfc.common.options import set_torch_threads


def resolve_device(device: str = "auto") -> torch.device:
    """``auto`` → the first CUDA device when usable, else the CPU unless the job asked for a GPU
    (:func:`medfc.common.job.no_cuda_error`)."""
    if device == "auto":
        if torch.cuda.is_available():
            return torch.device("cuda")
        error = no_cuda_error("device auto", f" to torch {torch.__version__}")  # a job given a GPU must use it
        if error:
            raise error
        return torch.device("cpu")
    dev = torch.device(device)
    if dev.type == "cuda" and not torch.cuda.is_available():
        raise RuntimeError(f"device {device!r} requested but CUDA is not available")
    return dev


def resolve_precision(precision: str, device: torch.device) -> tuple[torch.dtype | None, bool]:
    """Return (autocast dtype or None for fp32, whether a GradScaler is needed)."""
    if precision == "fp32":
        return None, False
    if precision == "auto":
        if device.type != "cuda":
            return None, False
        precision = "bf16" if torch.cuda.is_bf16_supported() else "fp16"
    if precision == "bf16":
        return torch.bfloat16, False
    if precision == "fp16":
        if device.type != "cuda":
            raise ValueError("fp16 mixed precision needs a CUDA device")
        return torch.float16, True
    raise ValueError(f"unknown precision {precision!r}")


@dataclass(frozen=True)
class Placement:
    """Where and how a job's model computes, resolved once per job: the torch device, the autocast dtype
    (None: fp32) and whether fp16 needs a ``GradScaler``."""

    device: torch.device
    amp_dtype: torch.dtype | None
    use_scaler: bool

    @classmethod
    def resolve(cls, device: str = "auto", precision: str = "auto", threads: int | None = None) -> Placement:
        """A config's ``device`` and ``precision`` resolved; with ``threads``, torch uses that many cores."""
        if threads is not None:
            set_torch_threads(threads)
        dev = resolve_device(device)
        amp_dtype, use_scaler = resolve_precision(precision, dev)
        return cls(dev, amp_dtype, use_scaler)

    def on(self, device: torch.device) -> Placement:
        """The same precision on another device (the first device of a model spread over several)."""
        return dataclasses.replace(self, device=device)

    @property
    def precision(self) -> str:
        """``bfloat16``, ``float16`` or ``fp32`` (as the info files name it)."""
        return str(self.amp_dtype).replace("torch.", "") if self.amp_dtype else "fp32"
