"""The fine-tuned generative CliniFact system: LoRA adapters on a tiny random Llama, trained on the demo-style
pairs through the one training loop, the lowest validation cross-entropy kept, adapters alone saved,
predictions in the zero-shot format."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch

from medfc.experiments import pairs as CD
from medfc.experiments.clinifact import prompts as CP
from medfc.experiments.clinifact import zero_shot as ZS
from medfc.experiments.clinifact import fine_tune as FT
from medfc.common.device import Placement
from medfc.common.report import SkipReport
from medfc.experiments.models.options import FineTuneOptions, ZeroShotOptions
from tests.helpers.config import section


def fine_tune_options(model, save_dir, **kw) -> FineTuneOptions:
    """experiments.clinifact.fine_tune as the rule passes it (schema defaults + model + save_dir) with tiny settings."""
    tiny = {"lr": 5e-2, "epochs": 4, "batch_size": 2, "target_modules": ["q_proj", "v_proj", "o_proj", "down_proj"], "eval_batch_size": 8, "grad_accum": 1, "max_prompt_tokens": 120, "device": "cpu",
            "seed": 3, "lora_r": 4, "lora_alpha": 8, "lora_dropout": 0.0, "warmup_ratio": 0.0}
    return FineTuneOptions.from_mapping(section("experiments.clinifact.fine_tune", **{**tiny, "model": str(model), "save_dir": str(save_dir), **kw}))


def test_the_training_config_takes_length_grouping_from_the_section(tmp_path):
    """length_grouping and group_factor are keys of experiments.clinifact.fine_tune (defaults true and 50, the
    values the loop had before they were keys), not constants of the options class."""
    default = fine_tune_options("m", tmp_path).train_config()
    assert (default.length_grouping, default.group_factor, default.eval_metric) == (True, 50, "val_loss")
    plain = fine_tune_options("m", tmp_path, length_grouping=False, group_factor=7).train_config()
    assert (plain.length_grouping, plain.group_factor) == (False, 7)


def test_lora_fine_tuning_keeps_the_lowest_validation_loss_saves_adapters_only_and_predicts_like_zero_shot(clinifact_data, tiny_llama, tmp_path):
    opts = fine_tune_options(tiny_llama, tmp_path / "ck", predict_splits=["validation", "test"])
    records, info = FT.run_fine_tuned(clinifact_data, opts)

    # the validation cross-entropy of the answer tokens after each epoch; before training it is the random model's
    losses = info["val_loss"]
    assert len(losses) == 4 and info["train"]["epochs_run"] == 4
    model, tok, _ = FT.load_lora_model(opts, torch.device("cpu"))
    feats, _ = FT.answer_features(CD.load_pairs(clinifact_data["validation"]), tok, opts.max_prompt_tokens)
    collate = FT.LeftPadCollator(tok.pad_token_id)
    before = FT.validation_loss(model, feats, collate, 8, Placement.resolve("cpu", "fp32"))
    assert min(losses) < before - 1.0  # training lowered it (the random model starts near log(vocabulary size))
    # the kept epoch is the argmin of the recorded losses ...
    assert info["kept_epoch"] == int(np.argmin(losses)) == info["train"]["best_epoch"]
    assert info["train"]["best_metric"] == pytest.approx(min(losses))

    # ... and the saved adapters are that epoch's: loaded onto the base they give its validation loss
    adapters = tmp_path / "ck" / "adapters"
    assert info["saved"] == {"adapters": str(adapters)}
    names = {p.name for p in adapters.iterdir()}
    assert {"adapter_model.safetensors", "adapter_config.json"} <= names
    assert not names & {"model.safetensors", "pytorch_model.bin", "model.safetensors.index.json", "config.json"}
    from peft import PeftModel
    from safetensors.torch import load_file
    from transformers import AutoModelForCausalLM

    saved = load_file(adapters / "adapter_model.safetensors")
    assert saved and all("lora_" in k for k in saved)  # adapter weights only, no base weight
    assert json.loads((adapters / "adapter_config.json").read_text())["r"] == 4
    reloaded = PeftModel.from_pretrained(AutoModelForCausalLM.from_pretrained(tiny_llama), adapters).eval()
    assert FT.validation_loss(reloaded, feats, collate, 8, Placement.resolve("cpu", "fp32")) == pytest.approx(min(losses), abs=1e-4)

    # predictions: the zero-shot record format (same keys, labels, option mapping), system fine_tuned
    assert [r["split"] for r in records] == ["validation"] * 6 + ["test"] * 6
    test = CD.load_pairs(clinifact_data["test"])
    assert [r["id"] for r in records if r["split"] == "test"] == [p.id for p in test]
    zs, zs_info = ZS.run_zero_shot(clinifact_data, ZeroShotOptions.from_mapping(section(
        "experiments.clinifact.zero_shot", model=str(tiny_llama), device="cpu", max_prompt_tokens=120, cache_dir=str(tmp_path / "c"))))
    assert info["options"] == zs_info["options"] == {"TRUE": "evidence", "FALSE": "inconclusive", "NONE": "NEI"}
    for r in records:
        assert set(r) == set(zs[0]) and r["system"] == "fine_tuned"
        assert list(r["probs"]) == list(zs[0]["probs"]) == CD.CLINIFACT_LABELS
        assert sum(r["probs"].values()) == pytest.approx(1.0, abs=1e-5)
        assert r["pred_label"] == max(r["probs"], key=r["probs"].get)
    # the same scorer as zero-shot: the reloaded adapters score the test prompts to the same probabilities
    from medfc.llm.local import TransformersLM

    scorer = TransformersLM.from_loaded("tiny", reloaded, tok, batch_size=4)
    again, _, _ = CP.score_pairs(scorer, tok, {"test": test}, "fine_tuned", opts.max_prompt_tokens, 4, SkipReport("t"))
    ours = [r for r in records if r["split"] == "test"]
    for a, b in zip(again, ours):
        assert [a["probs"][k] for k in CD.CLINIFACT_LABELS] == pytest.approx([b["probs"][k] for k in CD.CLINIFACT_LABELS], abs=1e-4)
    assert info["scores"]["test"]["accuracy"] == pytest.approx(np.mean([r["label"] == r["pred_label"] for r in ours]))


def test_the_answer_is_the_only_target(clinifact_data, tiny_llama):
    from transformers import AutoTokenizer

    tok = AutoTokenizer.from_pretrained(tiny_llama)
    pairs = CD.load_pairs(clinifact_data["train"])[:3]
    feats, trimmed = FT.answer_features(pairs, tok, 120)
    assert trimmed == 3  # the long abstracts are trimmed as zero-shot trims them
    for p, f in zip(pairs, feats):
        target = [t for t in f["labels"] if t != -100]
        assert tok.convert_ids_to_tokens(target) == [FT.LABEL_TO_OPTION[p.label]]  # evidence → TRUE, inconclusive → FALSE, NEI → NONE
        assert f["labels"][-1] == f["input_ids"][-1] and len(f["input_ids"]) <= 120
    batch = FT.LeftPadCollator(tok.pad_token_id)(feats)
    assert (batch["labels"][:, -1] != -100).all() and (batch["labels"][:, :-1] == -100).all()


def test_4bit_base_weights_on_a_cpu_and_adapters_on_the_output_layer_stop_naming_the_key(tiny_llama, tmp_path):
    opts = fine_tune_options(tiny_llama, tmp_path, load_in_4bit=True)
    with pytest.raises(ValueError, match=r"experiments\.clinifact\.fine_tune\.load_in_4bit: .*CUDA"):
        FT.load_lora_model(opts, torch.device("cpu"))
    opts = fine_tune_options(tiny_llama, tmp_path, target_modules=["q_proj", "lm_head"])
    with pytest.raises(ValueError, match=r"experiments\.clinifact\.fine_tune\.target_modules: lm_head"):
        FT.load_lora_model(opts, torch.device("cpu"))


def test_the_rule_step_runs_the_plans_options_under_smoke_caps(clinifact_data, tiny_llama, tmp_path):
    from medfc.experiments import steps
    from medfc.plan import Plan
    from tests.helpers.config import call_step, defaults

    cfg = defaults()
    cfg["models"]["aliases"]["tinyllama"] = str(tiny_llama)
    cfg["models"]["clinifact"]["fine_tuned"] = ["tinyllama"]
    cfg["experiments"]["smoke"] = {"max_steps": 1, "max_examples": 4}
    cfg["experiments"]["checkpoint_dir"] = str(tmp_path / "ck")
    cfg["experiments"]["clinifact"]["model_fine_tune"] = {"tinyllama": {"device": "cpu", "max_prompt_tokens": 96, "batch_size": 4, "epochs": 2}}
    options = Plan(cfg).experiments.clinifact_fine_tune("tinyllama").to_mapping()
    out = {"predictions": str(tmp_path / "p.jsonl"), "info": str(tmp_path / "info.json")}
    info = call_step(steps.clinifact_fine_tune, {k: str(v) for k, v in clinifact_data.items()}, out, options)
    assert info["train"]["steps"] == 1 and info["train"]["examples_seen"] == 4  # the smoke caps
    assert info["model_config_name"] == str(tiny_llama) and info["kept_epoch"] == 0  # max_steps 1: one epoch, one evaluation
    assert json.loads((tmp_path / "info.json").read_text())["system"] == "fine_tuned"
    recs = [json.loads(line) for line in (tmp_path / "p.jsonl").read_text().splitlines()]
    assert len(recs) == 6 and {r["split"] for r in recs} == {"test"} and {r["system"] for r in recs} == {"fine_tuned"}
    assert (tmp_path / "ck" / "clinifact" / "fine_tuned" / "tinyllama" / "adapters" / "adapter_model.safetensors").exists()
