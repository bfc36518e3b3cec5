"""What a final model costs to keep and to apply: each kept row of a run's ``final/`` folder, its size on disk and
``medfc predict``'s speed on claims as the workflow writes them.

    python benchmarks/final_models_bench.py [--results-dir runs/cpu] [--rows 2000] [--threads 2] [--rounds 3]

For each folder with a ``medfc_model.json`` under ``<results-dir>/final/`` (a row of ``experiments.final``): the
bytes of every file in it, the seconds to open it as ``medfc predict`` does (its card and every model it applies
loaded, nothing predicted), then ``medfc predict`` (:func:`medfc.experiments.final.predict.predict_file`, on ``--threads``
CPU threads, the device CPU) on ``--rows`` claims, the run's own records repeated: CliniFact's test pairs
(``clinifact/release/test_set.csv`` or ``clinifact/pairs/test_set.csv``), HealthFC's dataset
(``healthfc/dataset/healthfc.jsonl``). A round's figure is claims predicted per second of wall time, the model's
loading included; the median and the range of ``--rounds`` rounds are printed. Needs a finished run with
``experiments.final`` (``config/cpu.yaml`` names its best two rows).
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path


def size_of(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())


def claims_file(results: Path, dataset: str, rows: int, out: Path) -> Path:
    """``rows`` claims of the run's own records, repeated, in the format the workflow writes them."""
    if dataset == "clinifact":
        source = next(p for p in (results / "clinifact/release/test_set.csv", results / "clinifact/pairs/test_set.csv") if p.is_file())
        with open(source, encoding="utf-8", newline="") as fh:
            reader = csv.DictReader(fh)
            header, records = reader.fieldnames or [], list(reader)
        path = out / "claims.csv"
        with open(path, "w", encoding="utf-8", newline="") as fh:
            writer = csv.DictWriter(fh, fieldnames=header)
            writer.writeheader()
            for i in range(rows):
                writer.writerow({**records[i % len(records)], **({"index": str(i)} if "index" in header else {})})
        return path
    records = [json.loads(line) for line in (results / "healthfc/dataset/healthfc.jsonl").read_text(encoding="utf-8").splitlines() if line]
    path = out / "claims.jsonl"
    with open(path, "w", encoding="utf-8") as fh:
        for i in range(rows):
            fh.write(json.dumps({**records[i % len(records)], "id": f"c{i}"}) + "\n")
    return path


def load_seconds(folder: Path) -> float:
    """Seconds to open a kept row as ``medfc predict`` does, without predicting: its card, then every model it applies
    (an ensemble's members and its stack) loaded on the CPU."""
    from medfc.experiments.final.kept import find_model_dir, load_fitted, read_card
    from medfc.experiments.final.predict import applied_models

    start = time.perf_counter()
    directory = find_model_dir(folder)
    for model in applied_models(directory, read_card(directory)):
        load_fitted(model.directory, model.card, "cpu")
    return time.perf_counter() - start


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--results-dir", default="runs/cpu")
    parser.add_argument("--rows", type=int, default=2000)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args(argv)
    os.environ.setdefault("OMP_NUM_THREADS", str(args.threads))
    import torch

    torch.set_num_threads(args.threads)
    from medfc.experiments.models.keeper import CARD
    from medfc.experiments.final.predict import predict_file

    results = Path(args.results_dir)
    kept = sorted(p.parent for p in (results / "final").rglob(CARD) if p.parent.parent.name != "members" and "members" not in p.parts)
    if not kept:
        print(f"{results}/final holds no kept row: run a config with experiments.final (config/cpu.yaml)", file=sys.stderr)
        return 1
    print(f"{'row':44} {'kept MB':>8} {'load s':>7} {'cold':>6} {'claims/s':>9} {'range':>15}  (on {args.threads} threads, "
          f"{args.rows} claims a round; load: the median of the rounds, cold: the first, imports included)")
    for folder in kept:
        card = json.loads((folder / CARD).read_text(encoding="utf-8"))
        dataset = card["dataset"]
        rates = []
        loads = [load_seconds(folder) for _ in range(args.rounds)]
        with tempfile.TemporaryDirectory() as tmp:
            claims = claims_file(results, dataset, args.rows, Path(tmp))
            for _ in range(args.rounds):
                start = time.perf_counter()
                summary = predict_file(folder, claims, Path(tmp) / "out.jsonl", device="cpu")
                rates.append(summary["predicted"] / (time.perf_counter() - start))
        name = f"{dataset} {card.get('final', {}).get('row', folder.name)}"
        print(f"{name:44} {size_of(folder) / 1e6:8.2f} {statistics.median(loads):7.3f} {loads[0]:6.2f} {statistics.median(rates):9.0f} "
              f"{min(rates):7.0f}–{max(rates):<7.0f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
