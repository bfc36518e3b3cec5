"""The papers' path in miniature on a GPU: config/paper.yaml's experiments with every model alias pointed at
a tiny random model of its family, run through the workflow's own plan and steps on CUDA (bf16 where the
GPU has it), and one QLoRA step (4-bit base weights, ``bitsandbytes``). Part of the prepared GPU check:

    bash benchmarks/gpu_check.sh --paper .gpu_carry_paper     # there (device run, carry: [".gpu_carry_paper"])

What a user would meet first on a GPU box — a tokenizer, precision or device problem of one model
family — shows here in a few minutes. The configuration is built as the workflow builds it (the schema's
defaults < config/config.yaml < config/paper.yaml < the miniature's overrides below); each job's options
come from the same plan (``medfc.plan.experiments.ExperimentsPlan``) and go to the same step functions
(``medfc.experiments.steps``) through the same option parsing (``medfc.cli.step_arguments``) as under
Snakemake, which the GPU machine does not have. HealthFC runs fold 0 of every planned (lang, model,
system), CliniFact every planned discriminative, zero-shot and fine-tuned model. The tiny models are built
here (tests/helpers/tiny_models.py), in their hub layouts. The data: the demo's HealthFC dataset,
folds and web evidence (made by the workflow in --prepare), the CliniFact release splits (carried; sampled to ``--pairs`` pairs
per split). Prints each part's wall time and the precision every run trained in; exits 1 if a run failed.

``--cpu`` runs it on the CPU (to try the script anywhere; the 4-bit step is then skipped, as bitsandbytes
needs CUDA).
"""

from __future__ import annotations

import argparse
import copy
import csv
import json
import shutil
import sys
import tempfile
import time
import traceback
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(REPO / "src"), str(REPO)]

# each alias of config/paper.yaml → the family of its real model (tests/helpers/tiny_models.py builds each)
FAMILY = {
    "deberta-v3-large": "deberta-v3", "bert-large": "bert", "biobert-large": "biobert", "biobert": "biobert",
    "pubmedbert": "biobert", "xlm-r-large": "xlm-r", "roberta": "roberta",
    "openbiollm-8b": "llama3", "llama3-8b": "llama3", "openbiollm-70b": "llama3", "llama3-70b": "llama3",
}


def builders() -> dict[str, Any]:
    import functools

    from tests.helpers import tiny_models as tm

    return {
        "deberta-v3": tm.build_tiny_deberta_v2,
        "bert": tm.build_tiny_bert_family,
        "biobert": functools.partial(tm.build_tiny_bert_family, vocab_txt_only=True),
        "roberta": tm.build_tiny_roberta,
        "xlm-r": tm.build_tiny_xlm_roberta,
        # hidden 64: bitsandbytes' 4-bit blocks (64 values) fit its layers
        "llama3": functools.partial(tm.build_tiny_llama, hidden_size=64),
    }


def merge(base: dict[str, Any], update: dict[str, Any]) -> dict[str, Any]:
    """``update`` merged into ``base`` (nested mappings merged, everything else replaced), as Snakemake
    merges config files."""
    for key, value in update.items():
        if isinstance(value, dict) and isinstance(base.get(key), dict):
            merge(base[key], value)
        else:
            base[key] = copy.deepcopy(value)
    return base


def paper_config(models: dict[str, Path], device: str, four_bit: bool) -> dict[str, Any]:
    import yaml

    from medfc.common.schema import defaults

    cfg = defaults()
    for path in ("config/config.yaml", "config/paper.yaml"):
        merge(cfg, yaml.safe_load((REPO / path).read_text(encoding="utf-8")) or {})
    train = {"epochs": 1, "max_length": 128, "batch_size": 4, "eval_batch_size": 32, "device": device, "precision": "auto"}
    merge(cfg, {
        "models": {"aliases": {alias: str(models[family]) for alias, family in FAMILY.items() if alias in cfg["models"]["aliases"]}},
        "experiments": {
            "smoke": {"max_steps": 2, "max_examples": 16},
            "healthfc": {"folds": [0], "train": train},
            "clinifact": {
                "train": train,
                # every zero-shot row through a local model here (paper.yaml sends the 70B ones to vLLM)
                "zero_shot": {"backend": "transformers", "device": device, "max_prompt_tokens": 512, "batch_size": 8},
                # paper.yaml's QLoRA: 4-bit base weights where bitsandbytes is installed, else bf16 / fp32
                "fine_tune": {"device": device, "max_prompt_tokens": 512, "batch_size": 2, "grad_accum": 1, "progress": False,
                              "load_in_4bit": four_bit},
            },
        },
    })
    cfg["experiments"]["clinifact"]["model_zero_shot"] = {}  # (merged above, so replaced here)
    return cfg


def sample_csv(src: Path, dst: Path, n: int) -> Path:
    """The first ``n`` rows of each label of a CliniFact split (a small, label-balanced sample)."""
    with src.open(encoding="utf-8", newline="") as f:
        reader = csv.DictReader(f)
        fields, rows = reader.fieldnames, list(reader)
    label = next(k for k in ("label", "Label") if k in (fields or []))
    by: dict[str, list[dict[str, str]]] = {}
    for r in rows:
        by.setdefault(r[label], []).append(r)
    keep = [r for group in by.values() for r in group[: max(1, n // max(len(by), 1))]]
    with dst.open("w", encoding="utf-8", newline="") as f:
        w = csv.DictWriter(f, fieldnames=fields)
        w.writeheader()
        w.writerows(keep)
    return dst


def _where(info: Any) -> str:
    """Where a run trained: the device and precision its info records (training runs), else nothing."""
    info = info if isinstance(info, dict) else {}
    train = info.get("train") if isinstance(info.get("train"), dict) else None
    if train is None and isinstance(info.get("model"), dict):
        train = info["model"].get("train")
    return f", {train.get('device')}/{train.get('precision')}" if isinstance(train, dict) and "device" in train else ""


class Runner:
    def __init__(self) -> None:
        self.parts: list[tuple[str, float, int, int]] = []
        self.failures: list[str] = []

    def run(self, part: str, jobs: list[tuple[str, Any]]) -> None:
        start, ok = time.perf_counter(), 0
        for name, job in jobs:
            t = time.perf_counter()
            try:
                info = job()
            except Exception:  # noqa: BLE001 - every failure is reported, the check goes on
                self.failures.append(f"{part} {name}")
                print(f"  FAILED {name}:\n{traceback.format_exc()}", flush=True)
                continue
            ok += 1
            print(f"  {name}: {time.perf_counter() - t:.1f} s{_where(info)}", flush=True)
        wall = time.perf_counter() - start
        self.parts.append((part, wall, ok, len(jobs)))
        print(f"{part}: {ok}/{len(jobs)} runs in {wall:.0f} s", flush=True)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("carry", nargs="?", default=str(REPO / ".gpu_carry_paper"), help="the folder gpu_check.sh --prepare made")
    ap.add_argument("--cpu", action="store_true", help="run on the CPU (to try the script without a GPU)")
    ap.add_argument("--pairs", type=int, default=48, help="CliniFact pairs per split (label-balanced sample)")
    ap.add_argument("--only", default="", help="comma-separated parts to run (healthfc, clinifact, zero_shot, fine_tuned)")
    args = ap.parse_args()
    import torch

    if not torch.cuda.is_available() and not args.cpu:
        print("gpu_paper_check: no GPU here (torch.cuda.is_available() is False): nothing to check.")
        return 0
    device = "cpu" if args.cpu else "cuda"
    try:
        import bitsandbytes  # noqa: F401

        four_bit = device == "cuda"
    except ImportError:
        four_bit = False
    if device == "cuda":
        print(f"gpu_paper_check: {torch.cuda.get_device_name(0)}, bf16 {'yes' if torch.cuda.is_bf16_supported() else 'no'}, "
              f"torch {torch.__version__}, bitsandbytes {'yes' if four_bit else 'no (the 4-bit step is skipped)'}", flush=True)

    from medfc.cli import step_arguments
    from medfc.common.options import Runtime
    from medfc.experiments import steps as exp_steps
    from medfc.plan.experiments import ExperimentsPlan

    carry = Path(args.carry)
    parts = set(filter(None, args.only.split(","))) or {"healthfc", "clinifact", "zero_shot", "fine_tuned"}
    runner = Runner()
    total = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp_s:
        tmp = Path(tmp_s)
        t = time.perf_counter()
        build = builders()
        families = sorted(set(FAMILY.values()))
        models = {fam: build[fam](tmp / "models" / fam) for fam in families}
        runner.parts.append(("tiny models", time.perf_counter() - t, len(models), len(families)))
        print(f"tiny models ({', '.join(families)}): {time.perf_counter() - t:.1f} s", flush=True)
        cfg = paper_config(models, device, four_bit)
        plan = ExperimentsPlan(cfg)

        def call(step, inputs: dict[str, Any], outputs: dict[str, Any], options: dict[str, Any]) -> Any:
            opts, extra = step_arguments(step, options, Runtime(threads=4, log_file=None))
            return step(inputs, outputs, opts, **extra)

        data = tmp / "data"
        data.mkdir()
        dataset, folds = carry / "healthfc" / "healthfc.jsonl", carry / "healthfc" / "folds.csv"
        # the retrieved evidence --prepare made with the workflow (the demo's web evidence file): the search
        # APIs are out of reach from the GPU machine, so the systems of other sources are left out
        evidence = {p.stem: p for p in (carry / "healthfc" / "evidence").glob("*.jsonl")}
        if "healthfc" in parts:
            jobs = []
            for run in plan.healthfc.healthfc_runs():
                source = next((s for s in ("web", "pubmed", "wikipedia") if run["system"].endswith("_" + s)), None)
                if source is not None and source not in evidence:
                    continue  # needs a search API: the demo ships the web evidence only
                out_dir = tmp / "healthfc" / run["lang"] / run["model"] / run["system"]
                inputs = {"dataset": str(dataset), "folds": str(folds), **({"evidence": str(evidence[source])} if source else {})}
                outputs = {"predictions": str(out_dir / "predictions.jsonl"), "info": str(out_dir / "info.json")}
                options = plan.healthfc.healthfc_experiment(run["lang"], run["model"], run["system"], run["fold"]).to_mapping()
                jobs.append((f"{run['lang']}/{run['model']}/{run['system']}",
                             lambda i=inputs, o=outputs, p=options: call(exp_steps.healthfc_experiment, i, o, p)))
            runner.run("HealthFC (fold 0 of every planned lang × model × system)", jobs)

        splits = {s: str(sample_csv(carry / "clinifact" / f"{s}_set.csv", data / f"{s}_set.csv", args.pairs))
                  for s in ("train", "validation", "test")}
        cf_runs = plan.experiments.clinifact_runs()
        kinds = {"discriminative": ("clinifact", exp_steps.pairs_experiment, lambda m: plan.experiments.pairs_experiment("clinifact", m)),
                 "zero_shot": ("zero_shot", exp_steps.clinifact_zero_shot, plan.experiments.clinifact_zero_shot_options),
                 "fine_tuned": ("fine_tuned", exp_steps.clinifact_fine_tune, plan.experiments.clinifact_fine_tune_options)}
        for system, (part, step, options_of) in kinds.items():
            if part not in parts:
                continue
            jobs = []
            for run in (r for r in cf_runs if r["system"] == system):
                out_dir = tmp / "clinifact" / system / run["model"]
                outputs = {"predictions": str(out_dir / "predictions.jsonl"), "info": str(out_dir / "info.json")}
                options = options_of(run["model"])
                jobs.append((run["model"], lambda o=outputs, p=options, s=step: call(s, dict(splits), o, p)))
            runner.run(f"CliniFact {system}" + (" (70B rows: 4-bit QLoRA)" if system == "fine_tuned" and four_bit else ""), jobs)
        shutil.rmtree(tmp / "models", ignore_errors=True)

    print("\npart                                                   wall s   runs")
    for part, wall, ok, n in runner.parts:
        print(f"{part:<54} {wall:7.1f}   {ok}/{n}")
    print(f"gpu_paper_check: done in {time.perf_counter() - total:.0f} s, {len(runner.failures)} failed"
          + (": " + ", ".join(runner.failures) if runner.failures else ""))
    print(json.dumps({"parts": [{"part": p, "wall_s": round(w, 1), "ok": ok, "n": n} for p, w, ok, n in runner.parts],
                      "failures": runner.failures}))
    return 1 if runner.failures else 0


if __name__ == "__main__":
    raise SystemExit(main())
