"""CliniFact on the real release: fine-tune the default CPU model and score the test split.

Trains the discriminative baseline (`medfc.experiments.steps:clinifact_train`, the workflow's step)
on the official train split, keeps the best validation macro-F1 epoch, predicts the full test split
and scores it (`medfc.scoring.steps:clinifact`), then prints accuracy and macro-F1 next to the paper's
BioBERT (80.2 / 74.7) with the wall time. Not a CI test: it reads the release from a local directory
(default ../shared/data/clinifact, holding train_set.csv, validation_set.csv, test_set.csv) and takes
minutes on a CPU.

    python benchmarks/clinifact_real_bench.py [DIR] [--model offline:minilm] [--epochs 2]
        [--max-length 128] [--max-examples 0] [--val-examples 0] [--lr 1e-4] [--batch-size 16]

The defaults (all 1,260 training pairs, 2 epochs, 128 tokens, lr 1e-4) take about 6 minutes on 2
shared CPU cores.

`--max-examples` caps the training pairs (a seeded sample) and `--val-examples` the validation pairs
used to pick the epoch, so a CPU run fits a time budget; the test split is always predicted in full.
"""

from __future__ import annotations

import argparse
import json
import logging
import tempfile
import time
from pathlib import Path

import sys

import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the repository root, for tests.helpers

from medfc.experiments import steps  # noqa: E402
from medfc.scoring import steps as scoring_steps  # noqa: E402
from tests.helpers.config import call_step, section  # noqa: E402

PAPER = {"model": "BioBERT (paper, Table 8)", "accuracy": 80.2, "macro_f1": 74.7}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("data", nargs="?", default="../shared/data/clinifact")
    ap.add_argument("--model", default="offline:minilm")
    ap.add_argument("--epochs", type=float, default=2.0)
    ap.add_argument("--max-length", type=int, default=128)
    ap.add_argument("--max-examples", type=int, default=0, help="training pairs (0 = all)")
    ap.add_argument("--val-examples", type=int, default=0, help="validation pairs (0 = all)")
    ap.add_argument("--lr", type=float, default=1e-4)
    ap.add_argument("--batch-size", type=int, default=16)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--seed", type=int, default=42)
    ap.add_argument("--out", default=None, help="directory for predictions / scores (default: a temporary one)")
    args = ap.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")

    data = Path(args.data)
    out = Path(args.out) if args.out else Path(tempfile.mkdtemp(prefix="clinifact_bench_"))
    out.mkdir(parents=True, exist_ok=True)
    validation = data / "validation_set.csv"
    if args.val_examples:
        df = pd.read_csv(validation, dtype=str, keep_default_na=False)
        if len(df) > args.val_examples:
            validation = out / "validation_subset.csv"
            df.sample(n=args.val_examples, random_state=args.seed).to_csv(validation, index=False)
    train = section("experiments.clinifact.train", model=args.model, lr=args.lr, batch_size=args.batch_size, eval_batch_size=64,
                    epochs=args.epochs, max_length=args.max_length, seed=args.seed, max_examples=args.max_examples or None)
    start = time.perf_counter()
    info = call_step(
        steps.clinifact_train,
        {"train": str(data / "train_set.csv"), "validation": str(validation), "test": str(data / "test_set.csv")},
        {"predictions": str(out / "predictions.jsonl"), "info": str(out / "info.json")},
        {"train": train, "include_title": True, "predict_splits": ["test"], "checkpoint_dir": None},
        threads=args.threads,
    )
    train_s = time.perf_counter() - start
    scores = call_step(scoring_steps.clinifact, {"predictions": str(out / "predictions.jsonl")},
                       {"scores": str(out / "scores.json"), "report": str(out / "scores.skipped.json")}, {"system": "discriminative"})
    wall = time.perf_counter() - start
    print()
    print(f"settings: {json.dumps(train)}; validation pairs {info['sizes']['validation']}, train pairs used "
          f"{min(info['sizes']['train'], args.max_examples or info['sizes']['train'])} of {info['sizes']['train']}")
    print(f"{'model':<28} {'n test':>7} {'accuracy':>9} {'macro-F1':>9}")
    print(f"{args.model:<28} {scores['n']:>7} {100 * scores['accuracy']:>9.1f} {100 * scores['macro_f1']:>9.1f}")
    print(f"{PAPER['model']:<28} {'':>7} {PAPER['accuracy']:>9.1f} {PAPER['macro_f1']:>9.1f}")
    per = scores["per_class"]
    print("per class F1: " + ", ".join(f"{k} {100 * v['f1']:.1f}" for k, v in per.items()))
    print(f"wall time: {wall:.0f} s (training + validation + test prediction {train_s:.0f} s); outputs in {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
