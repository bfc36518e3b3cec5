"""Model kind ``encoder``: a transformer fine-tuned for sequence-pair classification (:class:`EncoderModel`), the
second text cut from its end (``trim="right"``) or start (``"left"``), every cut counted.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import torch
from tokenizers import Encoding

from medfc.common.device import Placement
from medfc.experiments.models.aliases import resolve_model
from medfc.experiments.models.keeper import CARD, TRANSFORMERS_DIR, keep_checkpoint
from medfc.experiments.models.options import TrainConfig
from medfc.experiments.models.sklearn_common import Info, validation_scores
from medfc.experiments.records import CardFields, Example, ModelCard
from medfc.experiments.models.training import Feature, PadCollator, TrainResult, class_weights, default_loss, load_checkpoint, predict, set_seed, train

if TYPE_CHECKING:
    from transformers import PreTrainedTokenizerBase

log = logging.getLogger(__name__)


def load_tokenizer(path: str | os.PathLike):
    from transformers import AutoTokenizer

    tok = AutoTokenizer.from_pretrained(str(path))
    if getattr(tok, "backend_tokenizer", None) is None:
        raise ValueError(f"{path}: a fast (tokenizers-backed) tokenizer is required")
    return tok


def load_classifier(path: str | os.PathLike, labels: Sequence[str]) -> torch.nn.Module:
    """A sequence classifier with a fresh ``len(labels)``-way head (replacing one of another size, e.g. MNLI's)."""
    from transformers import AutoModelForSequenceClassification

    return AutoModelForSequenceClassification.from_pretrained(str(path), num_labels=len(labels), id2label=dict(enumerate(labels)),
                                                              label2id={label: i for i, label in enumerate(labels)},
                                                              ignore_mismatched_sizes=True)


def encode_pair(tokenizer, a: str, b: str | None = None, max_length: int = 512, trim: str = "right", b_prefix: str | None = None) -> tuple[dict[str, list[int]], bool]:
    """``a`` (and ``b``) with the model's special tokens in at most ``max_length`` tokens: (features, whether cut).

    ``b_prefix`` (e.g. a title) leads the second segment (cut only past half the room). ``b`` is cut first, from
    the ``trim`` side; ``a`` from its end only when it alone takes more than half of the room."""
    backend = tokenizer.backend_tokenizer
    backend.no_truncation()
    backend.no_padding()
    enc_a = backend.encode(a or "", add_special_tokens=False)
    enc_b = backend.encode(b or "", add_special_tokens=False) if (b is not None or b_prefix is not None) else None
    enc_p = backend.encode(b_prefix, add_special_tokens=False) if b_prefix else None
    budget = max_length - tokenizer.num_special_tokens_to_add(pair=enc_b is not None)
    prefix_cut = False
    if enc_p is not None:
        if len(enc_p.ids) > budget // 2:
            enc_p.truncate(budget // 2, direction="right")
            prefix_cut = True
        budget -= len(enc_p.ids)
    if budget < 1:
        raise ValueError(f"max_length {max_length} leaves no room for text")
    len_a = len(enc_a.ids)
    len_b = len(enc_b.ids) if enc_b is not None else 0
    cut = len_a + len_b > budget
    if cut:
        if enc_b is not None:
            # b gives way first, but keeps at least half the budget when a itself is very long
            keep_b = max(budget - len_a, min(len_b, budget // 2))
            enc_b.truncate(keep_b, direction=trim)
            len_b = keep_b
        if len_a + len_b > budget:
            enc_a.truncate(budget - len_b, direction="right")
    if enc_p is not None:
        enc_b = Encoding.merge([enc_p, enc_b], growing_offsets=True)
    enc = backend.post_process(enc_a, enc_b, add_special_tokens=True)
    feat = {"input_ids": list(enc.ids), "attention_mask": [1] * len(enc.ids)}
    if "token_type_ids" in tokenizer.model_input_names:
        feat["token_type_ids"] = list(enc.type_ids)
    return feat, cut or prefix_cut


@dataclass
class EncodeStats(Info):
    n: int = 0
    truncated: int = 0


def make_features(tokenizer, examples: Sequence[Example], labels: Sequence[str] | None, max_length: int,
                  trim: str = "right", stats: EncodeStats | None = None) -> list[Feature]:
    """Each example's features, with its label's index when ``labels`` are given (None: to predict)."""
    index = {label: i for i, label in enumerate(labels or ())}
    feats: list[Feature] = []
    n_cut = 0
    for ex in examples:
        feat, cut = encode_pair(tokenizer, ex.text_a, ex.text_b, max_length, trim, ex.prefix_b)
        n_cut += cut
        if labels is not None and ex.label is not None:
            feat["labels"] = index[ex.label]
        feats.append(feat)
    if stats is not None:
        stats.n += len(examples)
        stats.truncated += n_cut
    if n_cut:
        log.warning("%d of %d inputs exceeded %d tokens and were cut (trim=%s)", n_cut, len(examples), max_length, trim)
    return feats


def _probs_forward(model: torch.nn.Module, batch: dict[str, torch.Tensor]) -> list[np.ndarray]:
    logits = model(**{k: v for k, v in batch.items() if k != "labels"}).logits.float()
    return list(torch.softmax(logits, dim=-1).cpu().numpy())


def collator_for(tokenizer) -> PadCollator:
    return PadCollator(pad_token_id=tokenizer.pad_token_id or 0)


def classifier_probs(model: torch.nn.Module, tokenizer, features: Sequence[Feature], cfg: TrainConfig, placement: Placement,
                     desc: str = "predict") -> np.ndarray:
    """Class probabilities, shape ``[len(features), n_labels]``."""
    if not features:
        return np.zeros((0, model.config.num_labels), dtype=np.float32)
    out = predict(model, features, collate=collator_for(tokenizer), forward_fn=_probs_forward, placement=placement,
                  batch_size=cfg.eval_batch_size, progress=cfg.progress, desc=desc)
    return np.stack(out).astype(np.float32)


@dataclass
class FittedClassifier:
    """A fine-tuned encoder: ``probs`` of examples on the device and in the precision it was trained with."""

    model: torch.nn.Module
    tokenizer: PreTrainedTokenizerBase
    labels: list[str]
    cfg: TrainConfig
    placement: Placement
    result: TrainResult
    trim: str = "right"
    encode_stats: EncodeStats = field(default_factory=EncodeStats)

    def probs(self, examples: Sequence[Example], desc: str = "predict") -> np.ndarray:
        feats = make_features(self.tokenizer, examples, None, self.cfg.max_length, self.trim, self.encode_stats)
        return classifier_probs(self.model, self.tokenizer, feats, self.cfg, self.placement, desc)


def _weighted_loss(weights: torch.Tensor):
    """Cross-entropy of the model's logits with per-class weights."""

    def loss_fn(model: torch.nn.Module, batch: dict[str, torch.Tensor]) -> torch.Tensor:
        logits = model(**{k: v for k, v in batch.items() if k != "labels"}).logits.float()
        return torch.nn.functional.cross_entropy(logits, batch["labels"], weight=weights.to(logits.device))

    return loss_fn


class EncoderModel:
    """Kind ``encoder``: :meth:`fit` fine-tunes ``config.model`` as a ``len(labels)``-way classifier."""

    def __init__(self, config: TrainConfig, threads: int | None = None) -> None:
        self.config = config.replace(model=resolve_model(config.model))
        self.placement = Placement.resolve(config.device, config.precision, threads)

    def fit(self, examples: Sequence[Example], labels: Sequence[str], validation: Sequence[Example] | None = None, *,
            checkpoint_dir: str | os.PathLike | None = None, trim: str = "right", desc: str = "train") -> FittedClassifier:
        """Keeps the state with the best ``eval_metric`` on ``validation``; ``class_weights`` weights the cross-entropy."""
        cfg, placement, labels = self.config, self.placement, list(labels)
        set_seed(cfg.seed)
        tokenizer = load_tokenizer(cfg.model)
        model = load_classifier(cfg.model, labels)
        stats = EncodeStats()
        feats = make_features(tokenizer, examples, labels, cfg.max_length, trim, stats)
        if validation:
            val_feats = make_features(tokenizer, validation, None, cfg.max_length, trim, stats)

        def evaluate(m: torch.nn.Module) -> dict[str, float]:
            probs = classifier_probs(m, tokenizer, val_feats, cfg, placement, desc=f"{desc}/validate")
            return validation_scores([ex.label for ex in validation], [labels[i] for i in probs.argmax(axis=1)], labels)

        weights = class_weights([f["labels"] for f in feats], len(labels), cfg.class_weights)
        loss_fn = _weighted_loss(weights) if weights is not None else default_loss
        result = train(model, feats, cfg, placement=placement, collate=collator_for(tokenizer), loss_fn=loss_fn,
                       evaluate=evaluate if validation else None, checkpoint_dir=checkpoint_dir, desc=desc)
        return FittedClassifier(model, tokenizer, labels, cfg, placement, result, trim, stats)


def keep_encoder(fitted: FittedClassifier, directory: Path) -> CardFields:
    """Beside the checkpoint training wrote: the model's config and tokenizer in ``transformers/``; the card names the checkpoint."""
    return keep_checkpoint(fitted.result, fitted.model.config, fitted.tokenizer, directory, "the encoder")


def load_encoder(directory: Path, card: ModelCard, device: str, batch_size: int | None) -> FittedClassifier:
    """The fine-tuned encoder of a kept directory (``transformers/`` and the checkpoint) on ``device``."""
    from transformers import AutoConfig, AutoModelForSequenceClassification

    cfg = TrainConfig.from_mapping(card["config"], where=str(directory / CARD))
    cfg = cfg.replace(device=device, progress=False, eval_batch_size=batch_size or cfg.eval_batch_size)
    hf = directory / TRANSFORMERS_DIR
    config = AutoConfig.from_pretrained(hf)
    labels = list(card["labels"])
    if config.num_labels != len(labels):
        raise ValueError(f"{directory}: the classifier has {config.num_labels} outputs but the card names {len(labels)} labels")
    model = AutoModelForSequenceClassification.from_config(config)
    load_checkpoint(model, directory / card["checkpoint"])
    placement = Placement.resolve(device, "auto", None)
    return FittedClassifier(model.eval(), load_tokenizer(hf), labels, cfg, placement, TrainResult(), card.get("trim", "right"))
