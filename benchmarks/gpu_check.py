"""The prepared GPU check (at most about 8 minutes), run by benchmarks/gpu_check.sh on a lent GPU machine.

1. CliniFact: fine-tunes the default encoder (all-MiniLM-L6-v2, offline) on the real release's train
   split in bf16 on the GPU, best validation epoch, scores the test split;
2. HealthFC: one fold of the oracle system on the carried HealthFC dataset;
3. zero-shot: the CliniFact zero-shot path with a tiny causal LM built here, on the GPU.

It prints wall times, training examples per second on the GPU against the same training on the CPU
(a few optimizer steps with 2 threads, measured in the same run) and macro-F1. Nothing is downloaded:
the machine reaches no model hub. Without a GPU it says so and exits 0 (--cpu forces the CPU, to try the
script anywhere).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(REPO / "src"), str(REPO)]


QUICK: dict = {}  # --quick: capped training, to try the script's paths anywhere


def section(path: str, **overrides) -> dict:
    """A config section with the schema's defaults (medfc.common.schema: no Snakemake on the GPU machine)."""
    from medfc.common.schema import section as schema_section

    return {**schema_section(path), **overrides}


def _train_config(model: str, device: str, **kw):
    from medfc.experiments.models.options import CLINIFACT_PAIRS, TrainConfig

    return TrainConfig.from_mapping(section("experiments.clinifact.train", **{
        "model": model, "lr": 5e-5, "batch_size": 32, "eval_batch_size": 128, "epochs": 3, "max_length": 256,
        "warmup_ratio": 0.1, "device": device, "precision": "auto", **QUICK, **kw}))


def clinifact(carry: Path, device: str) -> dict:
    from medfc.experiments import pairs as CF
    from medfc.experiments.models.options import PairsTrainOptions

    data = carry / "clinifact"
    cfg = _train_config(str(carry / "minilm"), device)
    start = time.perf_counter()
    records, info = CF.run_discriminative(data / "train_set.csv", data / "validation_set.csv", data / "test_set.csv",
                                          PairsTrainOptions(CLINIFACT_PAIRS, cfg, include_title=True, predict_splits=("test",), checkpoint_dir=None))
    wall = time.perf_counter() - start
    cpu_cfg = _train_config(str(carry / "minilm"), "cpu", max_steps=4, max_examples=128, precision="fp32")
    import torch

    threads = torch.get_num_threads()
    torch.set_num_threads(2)
    _, cpu_info = CF.run_discriminative(data / "train_set.csv", data / "validation_set.csv", data / "test_set.csv",
                                        PairsTrainOptions(CLINIFACT_PAIRS, cpu_cfg, include_title=True, predict_splits=(), checkpoint_dir=None))
    torch.set_num_threads(threads)
    return {"wall_s": wall, "examples_per_s": info["train"]["examples_per_second"], "precision": info["train"]["precision"],
            "cpu_examples_per_s": cpu_info["train"]["examples_per_second"], "macro_f1": info["scores"]["test"]["macro_f1"],
            "accuracy": info["scores"]["test"]["accuracy"], "best_epoch": info["train"]["best_epoch"]}


def healthfc_fold(carry: Path, device: str) -> dict:
    from medfc.experiments.healthfc import runs as H
    from medfc.experiments.models.options import TrainConfig
    from medfc.experiments.healthfc.systems import HealthFCFoldOptions, SingleOptions

    cfg = TrainConfig.from_mapping(section("experiments.healthfc.train", model=str(carry / "minilm"), lr=5e-5, batch_size=16,
                                           epochs=4, max_length=256, device=device, precision="auto", **QUICK))
    start = time.perf_counter()
    options = HealthFCFoldOptions("oracle", "en", 0, cfg, SingleOptions(val_fraction=0.1), checkpoint_dir=None)
    records, info = H.run_fold(carry / "healthfc" / "healthfc.jsonl", carry / "healthfc" / "folds.csv", options)
    return {"wall_s": time.perf_counter() - start, "n_test": len(records), "macro_f1": info["scores"]["macro_f1"],
            "examples_per_s": info["model"]["train"]["examples_per_second"]}


def zero_shot(carry: Path, device: str) -> dict:
    from medfc.experiments.clinifact import zero_shot as ZS
    from medfc.experiments.models.options import ZeroShotOptions
    from tests.helpers.experiment_data import build_gpt2

    with tempfile.TemporaryDirectory() as tmp:
        lm = build_gpt2(Path(tmp) / "tiny-lm")
        opts = ZeroShotOptions.from_mapping(section("experiments.clinifact.zero_shot", model=str(lm), device=device,
                                                       cache_dir=str(Path(tmp) / "c"), max_prompt_tokens=1000, batch_size=32))
        start = time.perf_counter()
        records, info = ZS.run_zero_shot({"test": carry / "clinifact" / "test_set.csv"}, opts)
    return {"wall_s": time.perf_counter() - start, "n": len(records), "macro_f1": info["scores"]["test"]["macro_f1"]}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("carry", nargs="?", default=str(REPO / ".gpu_carry"), help="the folder gpu_check.sh --prepare made")
    ap.add_argument("--cpu", action="store_true", help="run on the CPU (to try the script without a GPU)")
    ap.add_argument("--quick", action="store_true", help="cap training at 2 steps on 64 examples (to try the script)")
    args = ap.parse_args()
    if args.quick:
        QUICK.update(max_steps=2, max_examples=64)
    import torch

    if not torch.cuda.is_available() and not args.cpu:
        print("gpu_check: no GPU here (torch.cuda.is_available() is False): nothing to check.")
        return 0
    device = "cpu" if args.cpu else "cuda"
    if device == "cuda":
        print(f"gpu_check: {torch.cuda.get_device_name(0)}, bf16 {'yes' if torch.cuda.is_bf16_supported() else 'no'}, torch {torch.__version__}")
    carry = Path(args.carry)
    total = time.perf_counter()
    cf = clinifact(carry, device)
    print(f"CliniFact fine-tuning (MiniLM, 3 epochs, 256 tokens, {cf['precision']}): {cf['wall_s']:.0f} s, "
          f"{cf['examples_per_s']:.1f} examples/s vs {cf['cpu_examples_per_s']:.1f} on 2 CPU threads "
          f"(x{cf['examples_per_s'] / max(cf['cpu_examples_per_s'], 1e-9):.1f}); test macro-F1 {100 * cf['macro_f1']:.1f}, "
          f"accuracy {100 * cf['accuracy']:.1f} (best epoch {cf['best_epoch']})")
    hf = healthfc_fold(carry, device)
    print(f"HealthFC oracle, fold 0 ({hf['n_test']} test claims): {hf['wall_s']:.0f} s, {hf['examples_per_s']:.1f} examples/s, "
          f"macro-F1 {100 * hf['macro_f1']:.1f}")
    zs = zero_shot(carry, device)
    print(f"CliniFact zero-shot (tiny random LM, {zs['n']} test pairs): {zs['wall_s']:.1f} s, macro-F1 {100 * zs['macro_f1']:.1f} (a random model)")
    print(f"gpu_check: done in {time.perf_counter() - total:.0f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
