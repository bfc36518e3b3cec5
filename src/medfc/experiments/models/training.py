"""One model-agnostic training loop (:func:`train`) and batched inference (:func:`predict`) for every encoder
(batches, optimisation, precision, checkpoints and smoke caps: docs/experiments.md, "The training loop").
"""

from __future__ import annotations

import json
import logging
import math
import os
import random
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar, cast

import numpy as np
import torch
from tqdm.auto import tqdm

from medfc.common.device import Placement
from medfc.experiments.models.options import TrainConfig
from medfc.experiments.models.sklearn_common import Info

log = logging.getLogger(__name__)

Batch = dict[str, torch.Tensor]
# one tokenised example: a field's token list (padded by the collator) or a scalar (a label)
FeatureValue = int | float | Sequence[int] | Sequence[float] | np.ndarray
Feature = dict[str, FeatureValue]

_F = TypeVar("_F", bound=Mapping[str, object])  # a feature of any shape (a joint claim's windows too)
_R = TypeVar("_R")  # what a forward function returns per example
_V = TypeVar("_V")

# validation metrics the best state minimises (every other ``eval_metric`` is maximised)
LOWER_IS_BETTER = frozenset({"val_loss"})


def class_weights(labels: Sequence[int], n_classes: int, scheme: str) -> torch.Tensor | None:
    """Cross-entropy weights: None for ``"none"``; ``"balanced"``: n / (k · n_c) (absent classes: 0)."""
    if scheme == "none":
        return None
    counts = np.bincount(np.asarray(list(labels), dtype=np.int64), minlength=n_classes).astype(np.float64)
    weights = np.where(counts > 0, counts.sum() / (n_classes * np.maximum(counts, 1)), 0.0)
    return torch.tensor(weights, dtype=torch.float32)


def set_seed(seed: int) -> None:
    """Seed python, numpy and torch (all devices)."""
    random.seed(seed)
    np.random.seed(seed % (2**32))
    torch.manual_seed(seed)
    if torch.cuda.is_available():
        torch.cuda.manual_seed_all(seed)


def length_grouped_batches(lengths: Sequence[int], batch_size: int, *, seed: int = 0, epoch: int = 0, shuffle: bool = True,
                           group_factor: int = 50, group: bool = True) -> list[list[int]]:
    """Batches of indices of similar lengths: with ``shuffle``, mega-batches seeded by (seed, epoch) sorted by length,
    the longest batch first and the rest shuffled; without, all sorted by length (inference)."""
    if batch_size < 1:
        raise ValueError("batch_size must be >= 1")
    lengths = np.asarray(lengths, dtype=np.int64)
    n, bs = len(lengths), batch_size
    if not shuffle:
        order = np.argsort(-lengths, kind="stable") if group else np.arange(n)
        return [order[start : start + bs].tolist() for start in range(0, n, bs)]
    rng = np.random.default_rng([seed, epoch])
    perm = rng.permutation(n)
    if not group:
        return [perm[s : s + bs].tolist() for s in range(0, n, bs)]
    mega = bs * group_factor
    batches = []
    for start in range(0, n, mega):
        chunk = perm[start : start + mega]
        chunk = chunk[np.argsort(-lengths[chunk], kind="stable")]
        batches.extend(chunk[s : s + bs] for s in range(0, len(chunk), bs))
    if batches:  # the longest batch goes first so that out-of-memory errors show up immediately
        longest = int(np.argmax([lengths[b].max() for b in batches]))
        rest = [b for i, b in enumerate(batches) if i != longest]
        batches = [batches[longest]] + [rest[i] for i in rng.permutation(len(rest))]
    return [b.tolist() for b in batches]


class PadCollator:
    """Dynamic padding of list fields to the batch's longest (``input_ids`` with ``pad_token_id``, ``labels`` with
    -100, others with 0); scalars as tensors."""

    def __init__(self, pad_token_id: int = 0) -> None:
        self.pad_values: dict[str, int] = {"input_ids": pad_token_id, "labels": -100}

    def __call__(self, features: Sequence[Feature]) -> Batch:
        batch: Batch = {}
        for key in features[0]:
            values = [f[key] for f in features]
            if isinstance(values[0], (list, tuple, np.ndarray)):
                width = max(len(v) for v in values)
                pad = self.pad_values.get(key, 0)
                is_float = any(isinstance(x, float) for v in values for x in v[:1])
                arr = np.full((len(values), width), pad, dtype=np.float32 if is_float else np.int64)
                for i, v in enumerate(values):
                    arr[i, : len(v)] = v
                batch[key] = torch.from_numpy(arr)
            else:
                batch[key] = torch.tensor(values)
        return batch


def move_to(batch: Mapping[str, _V], device: torch.device) -> dict[str, _V]:
    return {k: (v.to(device, non_blocking=True) if isinstance(v, torch.Tensor) else v) for k, v in batch.items()}


def feature_length(feature: Mapping[str, object]) -> int:
    return len(feature["input_ids"]) if "input_ids" in feature else 1


@dataclass
class TrainResult(Info):
    steps: int = 0
    epochs_run: int = 0
    examples_seen: int = 0
    train_seconds: float = 0.0
    examples_per_second: float = 0.0
    best_metric: float | None = None
    best_epoch: int | None = None
    history: list[dict[str, float]] = field(default_factory=list)  # per epoch: epoch, step and the metrics
    device: str = "cpu"
    precision: str = "fp32"
    checkpoint: str | None = None
    stopped_early: bool = False


def default_loss(model: torch.nn.Module, batch: Batch) -> torch.Tensor:
    return model(**batch).loss


def _param_groups(model: torch.nn.Module, weight_decay: float) -> list[dict[str, object]]:
    decay, no_decay = [], []
    for name, p in model.named_parameters():
        if not p.requires_grad:
            continue
        (no_decay if p.ndim < 2 or "norm" in name.lower() else decay).append(p)
    return [{"params": decay, "weight_decay": weight_decay}, {"params": no_decay, "weight_decay": 0.0}]


def linear_warmup_schedule(optimizer: torch.optim.Optimizer, warmup_steps: int, total_steps: int) -> torch.optim.lr_scheduler.LambdaLR:
    def factor(step: int) -> float:
        if warmup_steps > 0 and step < warmup_steps:
            return (step + 1) / warmup_steps
        return max(0.0, (total_steps - step) / max(1, total_steps - warmup_steps))

    return torch.optim.lr_scheduler.LambdaLR(optimizer, factor)


def subsample(n: int, max_examples: int | None, seed: int) -> list[int]:
    """Indices of the examples kept under a ``max_examples`` cap (seeded, in original order)."""
    if max_examples is None or max_examples >= n:
        return list(range(n))
    rng = np.random.default_rng(seed)
    return sorted(rng.choice(n, size=max_examples, replace=False).tolist())


def model_state(model: torch.nn.Module, trainable_only: bool = False) -> dict[str, torch.Tensor]:
    """The model's state dict, or with ``trainable_only`` just its trainable parameters (loaded back not strictly)."""
    if not trainable_only:
        return model.state_dict()
    return {name: p for name, p in model.named_parameters() if p.requires_grad}


CHECKPOINT = "model.safetensors"  # a checkpoint's weights: tensors only, read without running code


def save_checkpoint(model: torch.nn.Module, directory: Path, meta: dict[str, object], trainable_only: bool = False) -> Path:
    """The model's weights as safetensors in ``directory`` (tied weights written once), with ``meta.json``."""
    from safetensors.torch import save_file

    directory.mkdir(parents=True, exist_ok=True)
    tmp = directory / (CHECKPOINT + ".tmp")
    state, seen = {}, set()
    for name, tensor in model_state(model, trainable_only).items():
        tensor = tensor.detach().cpu()
        storage = tensor.untyped_storage()
        whole = tensor.is_contiguous() and tensor.storage_offset() == 0 and tensor.nbytes == storage.nbytes()
        state[name] = tensor if whole and storage.data_ptr() not in seen else tensor.clone().contiguous()
        seen.add(storage.data_ptr())
    save_file(state, str(tmp), metadata={"format": "pt"})
    os.replace(tmp, directory / CHECKPOINT)
    (directory / "model.pt").unlink(missing_ok=True)  # a pickled checkpoint an earlier version wrote here
    (directory / "meta.json").write_text(json.dumps(meta, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    return directory / CHECKPOINT


def load_checkpoint(model: torch.nn.Module, path: str | os.PathLike, trainable_only: bool = False) -> None:
    """Weights :func:`save_checkpoint` wrote into ``model``; anything but safetensors is refused unread."""
    from safetensors.torch import load_file

    path = Path(path)
    if path.is_dir():
        path = path / CHECKPOINT
    if path.suffix != ".safetensors":
        raise ValueError(f"{path}: not a safetensors checkpoint; medfc reads only {CHECKPOINT} files (a pickled checkpoint "
                         "can run code when loaded): train the model again with this version of medfc")
    model.load_state_dict(load_file(str(path), device="cpu"), strict=not trainable_only)


def train(model: torch.nn.Module, features: Sequence[Feature], cfg: TrainConfig, *, placement: Placement,
          collate: Callable[[Sequence[Feature]], Batch], loss_fn: Callable[[torch.nn.Module, Batch], torch.Tensor] = default_loss,
          evaluate: Callable[[torch.nn.Module], dict[str, float]] | None = None, checkpoint_dir: str | os.PathLike | None = None,
          lengths: Sequence[int] | None = None, desc: str = "train", trainable_only: bool = False) -> TrainResult:
    """Train ``model`` in place on ``features``. With ``evaluate`` the model is scored after every epoch and the best
    state by ``cfg.eval_metric`` (in ``checkpoint_dir/best``, else in memory) is loaded back at the end."""
    if not features:
        raise ValueError("no training examples")
    device, amp_dtype, use_scaler = placement.device, placement.amp_dtype, placement.use_scaler
    if not getattr(model, "hf_device_map", None):  # a device_map placed the weights already
        model.to(device)

    keep = subsample(len(features), cfg.max_examples, cfg.seed)
    feats = [features[i] for i in keep]
    lens = [lengths[i] for i in keep] if lengths is not None else [feature_length(f) for f in feats]
    steps_per_epoch = math.ceil(math.ceil(len(lens) / cfg.batch_size) / cfg.grad_accum)
    total_steps = max(1, math.ceil(cfg.epochs * steps_per_epoch))
    if cfg.max_steps is not None:
        total_steps = min(total_steps, cfg.max_steps)
    n_epochs = math.ceil(total_steps / steps_per_epoch)
    warmup_steps = int(round(cfg.warmup_ratio * total_steps))

    optimizer = torch.optim.AdamW(_param_groups(model, cfg.weight_decay), lr=cfg.lr, fused=device.type == "cuda")
    scheduler = linear_warmup_schedule(optimizer, warmup_steps, total_steps)
    scaler = torch.amp.GradScaler("cuda") if use_scaler else None

    result = TrainResult(device=str(device), precision=placement.precision)
    ckpt_root = Path(checkpoint_dir) if checkpoint_dir is not None else None
    best_state: dict[str, torch.Tensor] | None = None
    lower = cfg.eval_metric in LOWER_IS_BETTER
    log.info("%s: %d examples, %d epochs, %d optimizer steps (%d warm-up) on %s/%s", desc, len(feats), n_epochs, total_steps, warmup_steps, result.device, result.precision)

    def run_eval(epoch: int) -> bool:
        """Evaluate (``evaluate`` given); True when early stopping says to stop."""
        nonlocal best_state
        model.eval()
        metrics = evaluate(model)
        model.train()
        entry = {"epoch": epoch, "step": result.steps, **{k: float(v) for k, v in metrics.items()}}
        result.history.append(entry)
        if cfg.eval_metric not in metrics:
            raise KeyError(f"evaluate() returned no {cfg.eval_metric!r} (got {sorted(metrics)})")
        value = float(metrics[cfg.eval_metric])
        log.info("%s: epoch %d step %d %s=%.4f", desc, epoch, result.steps, cfg.eval_metric, value)
        if result.best_metric is None or (value < result.best_metric if lower else value > result.best_metric):
            result.best_metric, result.best_epoch = value, epoch
            if ckpt_root is not None:
                result.checkpoint = str(save_checkpoint(model, ckpt_root / "best", {**entry, "config": cfg.as_dict()}, trainable_only))
            else:
                best_state = {k: v.detach().to("cpu", copy=True) for k, v in model_state(model, trainable_only).items()}
        patience = cfg.early_stopping_patience  # >= 1: evaluations in a row without a better metric
        return patience is not None and epoch - (result.best_epoch if result.best_epoch is not None else -1) >= patience

    model.train()
    start = time.perf_counter()
    # tqdm's disable=None: no bar when the stream is not a terminal
    bar = tqdm(total=total_steps, desc=desc, disable=None if cfg.progress else True, file=sys.stderr, leave=False)
    done = False
    for epoch in range(n_epochs):
        batches = length_grouped_batches(lens, cfg.batch_size, seed=cfg.seed, epoch=epoch, group_factor=cfg.group_factor,
                                         group=cfg.length_grouping)
        optimizer.zero_grad(set_to_none=True)
        running = 0.0
        for i, idx in enumerate(batches):
            batch = move_to(collate([feats[j] for j in idx]), device)
            with torch.autocast(device_type=device.type, dtype=amp_dtype or torch.float32, enabled=amp_dtype is not None):
                loss = loss_fn(model, batch)
            # the last accumulation group of an epoch may be shorter
            group_start = (i // cfg.grad_accum) * cfg.grad_accum
            group_len = min(cfg.grad_accum, len(batches) - group_start)
            scaled = loss.float() / group_len
            (scaler.scale(scaled) if scaler else scaled).backward()
            running += float(loss.detach())
            result.examples_seen += len(idx)
            if i + 1 == group_start + group_len:
                if scaler:
                    scaler.unscale_(optimizer)
                if cfg.max_grad_norm > 0:
                    torch.nn.utils.clip_grad_norm_(model.parameters(), cfg.max_grad_norm)
                if scaler:
                    scaler.step(optimizer)
                    scaler.update()
                else:
                    optimizer.step()
                scheduler.step()
                optimizer.zero_grad(set_to_none=True)
                result.steps += 1
                bar.update(1)
                bar.set_postfix(loss=f"{running / (i + 1):.4f}", epoch=epoch)
                if result.steps >= total_steps:
                    done = True
                    break
        result.epochs_run = epoch + 1
        if evaluate is not None:
            result.train_seconds += time.perf_counter() - start
            if run_eval(epoch) and not done:
                result.stopped_early = True
                log.info("%s: no better %s for %d evaluations: stopping early after epoch %d", desc, cfg.eval_metric,
                         cfg.early_stopping_patience, epoch)
                done = True
            start = time.perf_counter()
        else:
            result.history.append({"epoch": epoch, "step": result.steps, "train_loss": running / max(1, len(batches))})
        if done:
            break
    bar.close()
    result.train_seconds += time.perf_counter() - start
    result.examples_per_second = result.examples_seen / max(result.train_seconds, 1e-9)

    if evaluate is not None and result.best_metric is not None:
        if ckpt_root is not None:
            load_checkpoint(model, ckpt_root / "best", trainable_only)
        elif best_state is not None:
            model.load_state_dict(best_state, strict=not trainable_only)
    elif ckpt_root is not None:
        result.checkpoint = str(save_checkpoint(model, ckpt_root / "final", {"epoch": result.epochs_run - 1, "step": result.steps, "config": cfg.as_dict()},
                                                trainable_only))
    model.eval()
    return result


def predict(model: torch.nn.Module, features: Sequence[_F], *, collate: Callable[[Sequence[_F]], Batch],
            forward_fn: Callable[[torch.nn.Module, Batch], Sequence[_R]], placement: Placement, batch_size: int = 16,
            lengths: Sequence[int] | None = None, progress: bool = True, desc: str = "predict") -> list[_R]:
    """``forward_fn``'s per-example outputs, in input order, over length-sorted batches on ``placement``."""
    dev, amp_dtype = placement.device, placement.amp_dtype
    model.to(dev)
    was_training = model.training
    model.eval()
    lens = list(lengths) if lengths is not None else [feature_length(f) for f in features]
    out: list[_R | None] = [None] * len(features)
    with torch.inference_mode():
        for idx in tqdm(length_grouped_batches(lens, batch_size, shuffle=False), desc=desc,
                        disable=None if progress else True, file=sys.stderr, leave=False):
            batch = move_to(collate([features[j] for j in idx]), dev)
            with torch.autocast(device_type=dev.type, dtype=amp_dtype or torch.float32, enabled=amp_dtype is not None):
                results = forward_fn(model, batch)
            for j, r in zip(idx, results):
                out[j] = r
    if was_training:
        model.train()
    return cast("list[_R]", out)  # every slot filled
