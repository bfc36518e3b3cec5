"""Torch device and precision: shared by training (``medfc.experiments``) and local LLMs (``medfc.llm``)."""

from __future__ import annotations

import torch


def resolve_device(device: str = "auto") -> torch.device:
    """``auto`` → the first CUDA device when one is usable, else the CPU."""
    if device == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
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
