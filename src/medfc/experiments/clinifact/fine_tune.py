"""The fine-tuned generative CliniFact baseline (Zhang et al., Sci Data 2025, Table 8): LoRA adapters on a causal LM,
scored as the zero-shot system (its training, scoring and saves: docs/experiments.md, "Fine-tuned generative")."""

from __future__ import annotations

import inspect
import logging
import os
import time
from collections.abc import Sequence
from pathlib import Path
import torch

from medfc.common.device import Placement
from medfc.common.io import atomic_directory
from medfc.experiments.final.kept import keep_fitted
from medfc.common.report import SkipReport
from medfc.experiments.models.aliases import resolve_model
from medfc.experiments.pairs import Pair, load_pairs, scores_by_split
from medfc.experiments.clinifact.prompts import OPTION_TO_LABEL, answer_options, prompts_for, score_pairs
from medfc.experiments.models.options import FineTuneOptions
from medfc.experiments.records import CardFields, PairPrediction, RunInfo
from medfc.experiments.models.training import Feature, length_grouped_batches, move_to, set_seed, train
from medfc.llm.local import TransformersLM, load_dtype

log = logging.getLogger(__name__)

LABEL_TO_OPTION = {label: option for option, label in OPTION_TO_LABEL.items()}
KEY = "experiments.clinifact.fine_tune"
# layers peft saves with their base weights when adapted (the saved adapters would hold the vocabulary matrices)
WHOLE_LAYER_MODULES = frozenset({"lm_head", "embed_tokens", "wte", "word_embeddings"})


def answer_features(pairs: Sequence[Pair], tokenizer, max_prompt_tokens: int) -> tuple[list[Feature], int]:
    """Prompt + gold answer tokens per pair (labels -100 on the prompt), and the prompts trimmed."""
    prompts, trimmed = prompts_for(pairs, tokenizer, max_prompt_tokens)
    feats = []
    for p, prompt in zip(pairs, prompts):
        option = LABEL_TO_OPTION[p.label]
        base = list(tokenizer(prompt, add_special_tokens=True)["input_ids"])
        full = list(tokenizer(prompt + " " + option, add_special_tokens=True)["input_ids"])
        answer = full[len(base):] if full[: len(base)] == base and len(full) > len(base) else \
            list(tokenizer(" " + option, add_special_tokens=False)["input_ids"])
        ids = base + answer
        feats.append({"input_ids": ids, "attention_mask": [1] * len(ids), "labels": [-100] * len(base) + answer})
    return feats, trimmed


class LeftPadCollator:
    """Left padding, so every answer ends the row and the loss needs only the last positions' logits (a 128k vocabulary
    times 2,000 positions would not fit). ``position_ids`` count the real tokens, as if the row were alone."""

    def __init__(self, pad_token_id: int) -> None:
        self.pad = pad_token_id

    def __call__(self, features: Sequence[Feature]) -> dict[str, torch.Tensor]:
        width = max(len(f["input_ids"]) for f in features)
        ids = torch.full((len(features), width), self.pad, dtype=torch.long)
        mask = torch.zeros((len(features), width), dtype=torch.long)
        labels = torch.full((len(features), width), -100, dtype=torch.long)
        for r, f in enumerate(features):
            n = len(f["input_ids"])
            ids[r, width - n:] = torch.tensor(f["input_ids"])
            mask[r, width - n:] = 1
            labels[r, width - n:] = torch.tensor(f["labels"])
        positions = (mask.cumsum(-1) - 1).clamp(min=0)
        return {"input_ids": ids, "attention_mask": mask, "labels": labels, "position_ids": positions}


def answer_nll(model: torch.nn.Module, batch: dict[str, torch.Tensor], reduce: bool = True) -> torch.Tensor:
    """The answer tokens' cross-entropy of a left-padded batch: the mean (``reduce``) or (sum, count)."""
    labels = batch["labels"]
    answer = labels != -100
    # the answer tokens are the last k of every row; the logits before them predict them
    first = int(answer.float().argmax(dim=-1).min()) if answer.any() else labels.shape[1] - 1
    k = labels.shape[1] - first
    base = model.get_base_model() if hasattr(model, "get_base_model") else model
    kwargs = {"logits_to_keep": k + 1} if "logits_to_keep" in inspect.signature(base.forward).parameters else {}
    out = model(input_ids=batch["input_ids"], attention_mask=batch["attention_mask"], position_ids=batch["position_ids"], **kwargs)
    logits = out.logits[:, -(k + 1):-1].float()
    target = labels[:, -k:]
    nll = torch.nn.functional.cross_entropy(logits.reshape(-1, logits.shape[-1]), target.reshape(-1), ignore_index=-100, reduction="sum")
    count = (target != -100).sum()
    return nll / count.clamp(min=1) if reduce else torch.stack([nll, count.to(nll.dtype)])


def validation_loss(model: torch.nn.Module, features: Sequence[Feature], collate: LeftPadCollator, batch_size: int,
                    placement: Placement) -> float:
    """Mean cross-entropy per answer token over ``features`` (the model selection's number)."""
    device, amp_dtype = placement.device, placement.amp_dtype
    total = torch.zeros(2, dtype=torch.float64)
    with torch.inference_mode():
        for idx in length_grouped_batches([len(f["input_ids"]) for f in features], batch_size, shuffle=False):
            batch = move_to(collate([features[i] for i in idx]), device)
            with torch.autocast(device_type=device.type, dtype=amp_dtype or torch.float32, enabled=amp_dtype is not None):
                total += answer_nll(model, batch, reduce=False).double().cpu()
    return float(total[0] / max(float(total[1]), 1.0))


def load_lora_model(opts: FineTuneOptions, device: torch.device):
    """The base causal LM (frozen; 4-bit with ``load_in_4bit``) with fresh LoRA adapters, and its tokenizer."""
    from peft import LoraConfig, get_peft_model
    from transformers import AutoModelForCausalLM, AutoTokenizer

    whole = sorted(set(opts.target_modules) & WHOLE_LAYER_MODULES)
    if whole:
        raise ValueError(f"{KEY}.target_modules: {', '.join(whole)} would be saved whole beside the adapters (peft keeps the "
                         f"vocabulary layers' base weights); adapt the attention / MLP layers only")
    dtype = load_dtype(opts.precision, device)
    kwargs: dict[str, object] = {}  # from_pretrained's: the quantization config, the device map
    if opts.load_in_4bit:
        if device.type != "cuda":
            raise ValueError(f"{KEY}.load_in_4bit: 4-bit base weights (bitsandbytes) need a CUDA device, and this run has "
                             f"{device} ({KEY}.device: {opts.device}); set load_in_4bit: false")
        if opts.save_merged:
            raise ValueError(f"{KEY}.save_merged: merging adapters into 4-bit weights is lossy; load the base in bf16 "
                             f"(load_in_4bit: false) to save a merged model, or keep only the adapters")
        try:
            __import__("bitsandbytes")  # CUDA only: imported only when asked for
        except ImportError as e:
            raise RuntimeError(f"{KEY}.load_in_4bit needs the bitsandbytes package (pip install bitsandbytes)") from e
        from transformers import BitsAndBytesConfig

        kwargs["quantization_config"] = BitsAndBytesConfig(load_in_4bit=True, bnb_4bit_quant_type="nf4", bnb_4bit_use_double_quant=True,
                                                           bnb_4bit_compute_dtype=dtype)
    if device.type == "cuda":  # a 70B model is spread over every visible GPU (one GPU: all on it)
        kwargs["device_map"] = "auto" if device.index is None else {"": device.index}
    tokenizer = AutoTokenizer.from_pretrained(opts.model)
    model = AutoModelForCausalLM.from_pretrained(opts.model, dtype=dtype, **kwargs)
    model.config.use_cache = False
    if opts.load_in_4bit:
        from peft import prepare_model_for_kbit_training

        model = prepare_model_for_kbit_training(model, use_gradient_checkpointing=opts.gradient_checkpointing)
    elif opts.gradient_checkpointing:
        model.gradient_checkpointing_enable()
        model.enable_input_require_grads()
    set_seed(opts.seed)  # the adapters' initialisation
    lora = LoraConfig(r=opts.lora_r, lora_alpha=opts.lora_alpha, lora_dropout=opts.lora_dropout,
                      target_modules=list(opts.target_modules), bias="none", task_type="CAUSAL_LM")
    model = get_peft_model(model, lora)
    trainable = sum(p.numel() for p in model.parameters() if p.requires_grad)
    total = sum(p.numel() for p in model.parameters())
    log.info("%s: LoRA r=%d on %s: %d trainable of %d parameters", opts.model, opts.lora_r, list(opts.target_modules), trainable, total)
    return model, tokenizer, {"trainable_parameters": trainable, "parameters": total}


def save_adapters(model, directory: str | os.PathLike, card: CardFields | None = None) -> Path:
    """The adapters only (no base weights), with ``card`` as their ``medfc_model.json``, renamed into place whole."""
    out = Path(directory)
    with atomic_directory(out) as tmp:
        model.save_pretrained(tmp, safe_serialization=True)
        if card is not None:
            keep_fitted(None, tmp, {**card, "kind": "lora"})
    return out


def run_fine_tuned(split_csvs: dict[str, str | os.PathLike], opts: FineTuneOptions, *, threads: int | None = None,
                   report: SkipReport | None = None) -> tuple[list[PairPrediction], RunInfo]:
    """LoRA fine-tuning on train (lowest validation cross-entropy kept), ``predict_splits`` scored."""
    report = report or SkipReport("clinifact-fine-tuned")
    # the kept adapters' card: the base model as the config names it (resolved again where it is loaded)
    card = {"dataset": "clinifact", "system": "fine_tuned", "model": opts.model,
            "labels": list(answer_options().values()), "answer_options": answer_options(),
            "input_fields": ["claim", "evidence"], "optional_fields": ["title"],
            "options": {"max_prompt_tokens": opts.max_prompt_tokens, "lora_r": opts.lora_r,
                        "target_modules": list(opts.target_modules)}}
    opts = opts.replace(model=resolve_model(opts.model))
    placement = Placement.resolve(opts.device, opts.precision, threads)
    model, tokenizer, sizes = load_lora_model(opts, placement.device)
    pad_id = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else (tokenizer.eos_token_id or 0)
    collate = LeftPadCollator(pad_id)
    splits = {s: load_pairs(split_csvs[s], report) for s in dict.fromkeys(("train", "validation", *opts.predict_splits))}
    train_feats, trimmed_train = answer_features(splits["train"], tokenizer, opts.max_prompt_tokens)
    val_feats, trimmed_val = answer_features(splits["validation"], tokenizer, opts.max_prompt_tokens)
    if not val_feats:
        raise ValueError("clinifact fine-tuning: the validation split has no pairs, and the kept epoch is the one with the lowest validation loss")
    cfg = opts.train_config()
    on_eval = placement if not getattr(model, "hf_device_map", None) else placement.on(model.get_input_embeddings().weight.device)

    def evaluate(m: torch.nn.Module) -> dict[str, float]:
        return {"val_loss": validation_loss(m, val_feats, collate, opts.eval_batch_size, on_eval)}

    result = train(model, train_feats, cfg, placement=placement, collate=collate, loss_fn=answer_nll, evaluate=evaluate, checkpoint_dir=None,
                   desc="clinifact-lora", trainable_only=True)
    log.info("clinifact-lora: kept epoch %s (validation cross-entropy %.4f)", result.best_epoch, result.best_metric or float("nan"))

    scorer = TransformersLM.from_loaded(opts.model, model, tokenizer, batch_size=opts.eval_batch_size)
    start = time.perf_counter()
    predicted = {s: splits[s] for s in opts.predict_splits}
    records, trimmed, no_option = score_pairs(scorer, tokenizer, predicted, "fine_tuned", opts.max_prompt_tokens,
                                              opts.eval_batch_size, report)
    predict_seconds = time.perf_counter() - start

    saved: dict[str, str] = {}
    if opts.save_dir and opts.save_adapters:
        saved["adapters"] = str(save_adapters(model, Path(opts.save_dir) / "adapters", card))
    if opts.save_dir and opts.save_merged:
        merged_dir = Path(opts.save_dir) / "merged"
        merged = model.merge_and_unload()
        merged.config.use_cache = True
        with atomic_directory(merged_dir) as tmp:
            merged.save_pretrained(tmp, safe_serialization=True)
            tokenizer.save_pretrained(tmp)
        saved["merged"] = str(merged_dir)
    info: RunInfo = {
        "system": "fine_tuned", "model": opts.model, "options": answer_options(),
        "lora": {"r": opts.lora_r, "alpha": opts.lora_alpha, "dropout": opts.lora_dropout, "target_modules": list(opts.target_modules),
                 "load_in_4bit": opts.load_in_4bit, **sizes},
        "train": result.as_dict(), "kept_epoch": result.best_epoch, "val_loss": [h["val_loss"] for h in result.history],
        "n_prompts_trimmed": {"train": trimmed_train, "validation": trimmed_val, "predicted": trimmed}, "n_no_option": no_option,
        "predict_seconds": round(predict_seconds, 3), "saved": saved, "sizes": {k: len(v) for k, v in splits.items()},
        "scores": scores_by_split(records, opts.predict_splits), "skips": report.as_dict(),
    }
    return records, info

