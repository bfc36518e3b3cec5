"""The joint HealthFC system: one encoder for evidence selection and veracity prediction (its windows, span pooling
and loss: docs/experiments.md, "Joint model")."""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, NotRequired, TypedDict

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from medfc.common.device import Placement
from medfc.common.tokens import token_ids
from medfc.experiments.models.encoder import EncoderModel, load_tokenizer
from medfc.experiments.models.keeper import CARD, TRANSFORMERS_DIR, keep_checkpoint
from medfc.experiments.models.sklearn_common import validation_scores
from medfc.experiments.models.options import TrainConfig
from medfc.experiments.records import CardFields, Claim, ModelCard
from medfc.experiments.models.training import TrainResult, class_weights, load_checkpoint, predict, set_seed, train

if TYPE_CHECKING:
    from transformers import PreTrainedTokenizerBase

    from medfc.experiments.healthfc.systems import JointOptions

# one window of a claim: its token ids, their sentence ids (-1: the claim), its sentences, their evidence labels
# (1.0 / 0.0), with token types its token_type_ids
Window = dict[str, list[int] | list[float]]


class JointFeature(TypedDict):
    """A claim as the joint encoder reads it: its windows and its sentence count; ``labels`` when it has one."""

    windows: list[Window]
    n_sentences: int
    labels: NotRequired[int]


def sentence_attention_pool(hidden: torch.Tensor, sent_ids: torch.Tensor, scores: torch.Tensor, n_sentences: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Token states ``[W, T, H]`` pooled by attention (``scores [W, T]``) within each sentence slot (``sent_ids``,
    -1: none) into ``[W, S, H]``, with the slots' validity mask ``[W, S]``."""
    slots = torch.arange(n_sentences, device=hidden.device)
    member = sent_ids.unsqueeze(1) == slots.view(1, -1, 1)  # [W, S, T]
    logits = scores.float().unsqueeze(1).expand(-1, n_sentences, -1)
    logits = logits.masked_fill(~member, float("-inf"))
    valid = member.any(dim=-1)
    weights = torch.softmax(logits, dim=-1)
    weights = torch.where(valid.unsqueeze(-1), weights, torch.zeros_like(weights))
    vectors = torch.bmm(weights.to(hidden.dtype), hidden)
    return vectors, valid


def joint_loss(evidence_logits: torch.Tensor, evidence_labels: torch.Tensor, label_logits: torch.Tensor, labels: torch.Tensor,
               evidence_weight: float = 6.0, label_weights: torch.Tensor | None = None) -> dict[str, torch.Tensor]:
    """``evidence_weight`` · BCE over sentences labelled (not -1) + the labels' cross-entropy (``label_weights``)."""
    mask = evidence_labels >= 0
    if mask.any():
        ev = F.binary_cross_entropy_with_logits(evidence_logits[mask].float(), evidence_labels[mask].float())
    else:
        ev = evidence_logits.sum() * 0.0
    ce = F.cross_entropy(label_logits.float(), labels, weight=None if label_weights is None else label_weights.to(label_logits.device))
    return {"loss": evidence_weight * ev + ce, "evidence_loss": ev, "label_loss": ce}


def pool_weights(probs: torch.Tensor, valid: torch.Tensor, window_claim: torch.Tensor, n_claims: int, threshold: float, gold: torch.Tensor | None = None) -> torch.Tensor:
    """Per-sentence weights for the label pooling (see the module docstring)."""
    probs = probs * valid
    hard = (gold > 0).to(probs.dtype) * valid if gold is not None else probs * (probs > threshold).to(probs.dtype)
    per_claim = torch.zeros(n_claims, device=probs.device, dtype=probs.dtype).index_add(0, window_claim, hard.sum(dim=1))
    use_hard = (per_claim > 0)[window_claim].unsqueeze(1)
    return torch.where(use_hard, hard, probs)


class JointModel(nn.Module):
    """Encoder + token attention pooling + evidence head + label head."""

    def __init__(self, encoder: nn.Module, n_labels: int, *, evidence_weight: float, threshold: float, pool: str,
                 dropout: float = 0.1) -> None:
        super().__init__()
        self.encoder = encoder
        hidden = encoder.config.hidden_size
        self.token_attention = nn.Linear(hidden, 1)
        self.evidence_head = nn.Sequential(nn.Dropout(dropout), nn.Linear(hidden, 1))
        self.label_head = nn.Sequential(nn.Dropout(dropout), nn.Linear(2 * hidden, hidden), nn.Tanh(),
                                        nn.Dropout(dropout), nn.Linear(hidden, n_labels))
        self.n_labels, self.evidence_weight, self.threshold, self.pool = n_labels, evidence_weight, threshold, pool
        self.label_weights: torch.Tensor | None = None  # class weights of the label loss (set before training)

    def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor, sent_ids: torch.Tensor, window_claim: torch.Tensor,
                evidence_labels: torch.Tensor | None = None, labels: torch.Tensor | None = None,
                token_type_ids: torch.Tensor | None = None) -> dict[str, torch.Tensor]:
        enc_kwargs = {"input_ids": input_ids, "attention_mask": attention_mask}
        if token_type_ids is not None:
            enc_kwargs["token_type_ids"] = token_type_ids
        hidden = self.encoder(**enc_kwargs).last_hidden_state  # [W, T, H]
        n_sent = int(sent_ids.max().item()) + 1 if sent_ids.numel() else 0
        n_sent = max(n_sent, evidence_labels.shape[1] if evidence_labels is not None else 0, 1)
        scores = self.token_attention(hidden).squeeze(-1)
        vectors, valid = sentence_attention_pool(hidden, sent_ids, scores, n_sent)  # [W, S, H]
        evidence_logits = self.evidence_head(vectors).squeeze(-1).float()  # [W, S]
        probs = torch.sigmoid(evidence_logits)
        n_claims = int(window_claim.max().item()) + 1
        gold = evidence_labels.clamp(min=0) if (self.training and self.pool == "gold" and evidence_labels is not None) else None
        w = pool_weights(probs, valid.to(probs.dtype), window_claim, n_claims, self.threshold, gold)
        num = torch.zeros(n_claims, hidden.shape[-1], device=hidden.device, dtype=torch.float32).index_add(0, window_claim, (w.unsqueeze(-1) * vectors.float()).sum(dim=1))
        den = torch.zeros(n_claims, device=hidden.device, dtype=torch.float32).index_add(0, window_claim, w.sum(dim=1))
        pooled = num / den.clamp(min=1e-6).unsqueeze(-1)
        cls_sum = torch.zeros(n_claims, hidden.shape[-1], device=hidden.device, dtype=torch.float32).index_add(0, window_claim, hidden[:, 0].float())
        n_windows = torch.zeros(n_claims, device=hidden.device).index_add(0, window_claim, torch.ones_like(window_claim, dtype=torch.float32))
        claim_vec = cls_sum / n_windows.unsqueeze(-1)
        label_logits = self.label_head(torch.cat([claim_vec, pooled], dim=-1).to(hidden.dtype)).float()
        out = {"evidence_logits": evidence_logits, "evidence_valid": valid, "label_logits": label_logits}
        if labels is not None and evidence_labels is not None:
            out.update(joint_loss(evidence_logits, evidence_labels, label_logits, labels, self.evidence_weight, self.label_weights))
        return out


class WindowStats(Counter):
    """How documents were packed into windows: claims and windows, those spread or cut."""

    KEYS = ("claims", "windows", "multi_window_claims", "claims_cut", "sentences_cut")

    def as_dict(self) -> dict[str, int]:
        return {k: self[k] for k in self.KEYS}


def build_windows(tokenizer, claim: str, sentences: Sequence[str], max_length: int, stats: WindowStats | None = None) -> list[Window]:
    """Pack ``[CLS] claim [SEP] s_i [SEP] …`` windows of at most ``max_length`` tokens, each with ``input_ids``,
    ``sent_ids`` (window-local sentence slot per token, -1: the claim) and ``sentences`` (their global indices)."""
    cls_id = tokenizer.cls_token_id if tokenizer.cls_token_id is not None else tokenizer.bos_token_id
    sep_id = tokenizer.sep_token_id if tokenizer.sep_token_id is not None else tokenizer.eos_token_id
    if cls_id is None or sep_id is None:
        raise ValueError("the joint model needs a tokenizer with CLS/SEP (or BOS/EOS) tokens")
    stats = WindowStats() if stats is None else stats
    c_ids = token_ids(tokenizer, claim)
    if len(c_ids) > max_length // 2:
        c_ids = c_ids[: max_length // 2]
        stats["claims_cut"] += 1
    prefix = [cls_id, *c_ids, sep_id]
    room = max_length - len(prefix)
    windows: list[Window] = []
    cur: dict[str, list[int]] = {"input_ids": list(prefix), "sent_ids": [-1] * len(prefix), "sentences": []}
    for gi, sentence in enumerate(sentences):
        s_ids = token_ids(tokenizer, sentence)
        if len(s_ids) + 1 > room:
            s_ids = s_ids[: room - 1]
            stats["sentences_cut"] += 1
        if len(cur["input_ids"]) + len(s_ids) + 1 > max_length:
            windows.append(cur)
            cur = {"input_ids": list(prefix), "sent_ids": [-1] * len(prefix), "sentences": []}
        slot = len(cur["sentences"])
        cur["input_ids"].extend([*s_ids, sep_id])
        cur["sent_ids"].extend([slot] * (len(s_ids) + 1))
        cur["sentences"].append(gi)
    windows.append(cur)
    stats["claims"] += 1
    stats["windows"] += len(windows)
    stats["multi_window_claims"] += len(windows) > 1
    return windows


def joint_features(tokenizer, claim: str, sentences: Sequence[str], evidence_ids: Sequence[int], label: int | None, max_length: int, stats: WindowStats | None = None, with_types: bool = False) -> JointFeature:
    gold = set(evidence_ids)
    windows = build_windows(tokenizer, claim, sentences, max_length, stats)
    for w in windows:
        w["evidence_labels"] = [1.0 if gi in gold else 0.0 for gi in w["sentences"]]
        if with_types:
            first = w["sent_ids"].index(0) if 0 in w["sent_ids"] else len(w["sent_ids"])
            w["token_type_ids"] = [0] * first + [1] * (len(w["sent_ids"]) - first)
    feat: JointFeature = {"windows": windows, "n_sentences": len(sentences)}
    if label is not None:
        feat["labels"] = label
    return feat


def joint_length(feature: JointFeature) -> int:
    return sum(len(w["input_ids"]) for w in feature["windows"])


class JointCollator:
    """Flattens the windows of a batch of claims; ``window_claim`` maps each window to its claim."""

    def __init__(self, pad_token_id: int = 0) -> None:
        self.pad_token_id = pad_token_id

    def __call__(self, features: Sequence[JointFeature]) -> dict[str, torch.Tensor]:
        windows = [(ci, w) for ci, f in enumerate(features) for w in f["windows"]]
        width = max(len(w["input_ids"]) for _, w in windows)
        n_sent = max(1, max(len(w["sentences"]) for _, w in windows))
        n = len(windows)
        ids = np.full((n, width), self.pad_token_id, dtype=np.int64)
        mask = np.zeros((n, width), dtype=np.int64)
        sent = np.full((n, width), -1, dtype=np.int64)
        types = np.zeros((n, width), dtype=np.int64)
        ev = np.full((n, n_sent), -1.0, dtype=np.float32)
        owner = np.array([ci for ci, _ in windows], dtype=np.int64)
        has_types = "token_type_ids" in windows[0][1]
        for i, (_, w) in enumerate(windows):
            L = len(w["input_ids"])
            ids[i, :L] = w["input_ids"]
            mask[i, :L] = 1
            sent[i, :L] = w["sent_ids"]
            if has_types:
                types[i, :L] = w["token_type_ids"]
            ev[i, : len(w["evidence_labels"])] = w["evidence_labels"]
        batch = {"input_ids": torch.from_numpy(ids), "attention_mask": torch.from_numpy(mask), "sent_ids": torch.from_numpy(sent),
                 "window_claim": torch.from_numpy(owner), "evidence_labels": torch.from_numpy(ev)}
        if has_types:
            batch["token_type_ids"] = torch.from_numpy(types)
        if "labels" in features[0]:
            batch["labels"] = torch.tensor([f["labels"] for f in features])
        return batch


def joint_forward(model: JointModel, batch: dict[str, torch.Tensor]) -> list[tuple[np.ndarray, np.ndarray]]:
    """Per claim: (label probabilities, evidence probabilities of its sentences in document order)."""
    out = model(**{k: v for k, v in batch.items() if k != "labels"})
    label_probs = torch.softmax(out["label_logits"].float(), dim=-1).cpu().numpy()
    ev_probs = torch.sigmoid(out["evidence_logits"].float()).cpu().numpy()
    ev_mask = (batch["evidence_labels"] >= 0).cpu().numpy()
    owner = batch["window_claim"].cpu().numpy()
    per_claim: list[list[np.ndarray]] = [[] for _ in range(label_probs.shape[0])]
    for w in range(ev_probs.shape[0]):
        per_claim[owner[w]].append(ev_probs[w][ev_mask[w]])
    return [(label_probs[c], np.concatenate(per_claim[c]) if per_claim[c] else np.zeros(0, dtype=np.float32)) for c in range(label_probs.shape[0])]


def uses_token_types(tokenizer: PreTrainedTokenizerBase, encoder: nn.Module) -> bool:
    """Whether the windows mark the sentences with token type 1 (a tokenizer and encoder that have two types)."""
    return "token_type_ids" in tokenizer.model_input_names and getattr(encoder.config, "type_vocab_size", 1) >= 2


@dataclass
class FittedJoint:
    """A trained joint model: per claim its label probabilities and its sentences' evidence probabilities."""

    model: JointModel
    tokenizer: PreTrainedTokenizerBase
    labels: list[str]
    cfg: TrainConfig
    placement: Placement
    with_types: bool
    result: TrainResult
    encode_stats: WindowStats  # every claim's windows: training, validation and predicted

    def features(self, claims: Sequence[Claim]) -> list[JointFeature]:
        """Each claim's windows; a claim without a label (a new claim, ``medfc predict``) gets none."""
        index = {lab: i for i, lab in enumerate(self.labels)}
        return [joint_features(self.tokenizer, c.claim, c.sentences, c.evidence_ids, index[c.label] if c.label else None, self.cfg.max_length,
                               self.encode_stats, self.with_types) for c in claims]

    def infer(self, feats: list[JointFeature], desc: str) -> list[tuple[np.ndarray, np.ndarray]]:
        return predict(self.model, feats, collate=JointCollator(self.tokenizer.pad_token_id or 0), forward_fn=joint_forward, placement=self.placement,
                       batch_size=self.cfg.eval_batch_size, lengths=[joint_length(f) for f in feats], progress=self.cfg.progress, desc=desc)

    def predict(self, claims: Sequence[Claim], desc: str = "joint/predict") -> list[tuple[np.ndarray, np.ndarray]]:
        """(label probabilities, evidence probabilities of its sentences in document order) per claim."""
        return self.infer(self.features(claims), desc)


class JointEncoder:
    """The joint system's model over the run's encoder: :meth:`fit` trains on whole claims."""

    def __init__(self, encoder: EncoderModel, options: JointOptions) -> None:
        self.config, self.placement, self.options = encoder.config, encoder.placement, options

    def fit(self, claims: Sequence[Claim], labels: Sequence[str], validation: Sequence[Claim] | None = None, *,
            checkpoint_dir: str | os.PathLike | None = None, desc: str = "joint") -> FittedJoint:
        from transformers import AutoModel

        cfg, opts, labels = self.config, self.options, list(labels)
        set_seed(cfg.seed)
        tok = load_tokenizer(cfg.model)
        model = JointModel(AutoModel.from_pretrained(cfg.model), len(labels), evidence_weight=opts.evidence_weight,
                           threshold=opts.threshold, pool=opts.joint_pool)
        with_types = uses_token_types(tok, model.encoder)
        fitted = FittedJoint(model, tok, labels, cfg, self.placement, with_types, TrainResult(), WindowStats())
        train_f = fitted.features(claims)
        index = {lab: i for i, lab in enumerate(labels)}
        model.label_weights = class_weights([index[c.label] for c in claims], len(labels), cfg.class_weights)
        val_f = fitted.features(validation) if validation else []

        def evaluate(m: torch.nn.Module) -> dict[str, float]:
            out = fitted.infer(val_f, f"{desc}/validate")
            pred = [labels[int(np.argmax(lp))] for lp, _ in out]
            return validation_scores([c.label for c in validation], pred, labels)

        fitted.result = train(model, train_f, cfg, placement=self.placement, lengths=[joint_length(f) for f in train_f],
                              collate=JointCollator(tok.pad_token_id or 0), loss_fn=lambda m, batch: m(**batch)["loss"],
                              evaluate=evaluate if validation else None, checkpoint_dir=checkpoint_dir, desc=desc)
        return fitted


def keep_joint(fitted: FittedJoint, directory: Path) -> CardFields:
    """Beside the checkpoint training wrote: the encoder's config and tokenizer in ``transformers/``."""
    return keep_checkpoint(fitted.result, fitted.model.encoder.config, fitted.tokenizer, directory, "the joint encoder")


def load_joint(directory: Path, card: ModelCard, device: str, batch_size: int | None) -> FittedJoint:
    """The joint model of a kept directory (``transformers/`` and every weight from the checkpoint)."""
    from transformers import AutoConfig, AutoModel

    cfg = TrainConfig.from_mapping(card["config"], where=str(directory / CARD))
    cfg = cfg.replace(device=device, progress=False, eval_batch_size=batch_size or cfg.eval_batch_size)
    opts = card["system_options"]
    hf = directory / TRANSFORMERS_DIR
    labels = list(card["labels"])
    model = JointModel(AutoModel.from_config(AutoConfig.from_pretrained(hf)), len(labels), evidence_weight=float(opts["evidence_weight"]),
                       threshold=float(opts["threshold"]), pool=opts["joint_pool"])
    load_checkpoint(model, directory / card["checkpoint"])
    tok = load_tokenizer(hf)
    return FittedJoint(model.eval(), tok, labels, cfg, Placement.resolve(device, "auto", None), uses_token_types(tok, model.encoder),
                       TrainResult(), WindowStats())
