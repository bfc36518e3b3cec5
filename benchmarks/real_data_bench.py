"""Our numbers on the real releases next to the papers', with the wall time of every system.

Reads what `snakemake --configfile config/cpu.yaml` made (the tables in runs/cpu/tables/ and the job
timings in runs/cpu/timings/experiments/), or runs it first with --run:

    python benchmarks/real_data_bench.py [--run] [--workdir .] [--clinifact DIR] [--healthfc FILE|URL] [--cores 2]
        [--overlay config/cpu-gbm-embeddings.yaml ...]

--clinifact / --healthfc point the run at local copies of the releases (default: the URLs in
config/cpu.yaml); --no-healthfc leaves HealthFC out (no release file at hand). It prints, per dataset, each
of our systems (macro-F1, accuracy, wall time of training + prediction summed over folds) beside the
papers' rows, and the CPU targets of the project (CliniFact macro-F1 ≥ 75; HealthFC oracle ≥ 78, claims
only ≥ 48, gold explanations ≥ 60, and every Table 5 row above the paper's, from
resources/papers/numbers.yaml) as met or not, each row's and each system's best row's.
"""

from __future__ import annotations

import argparse
import csv
import json
import re
import subprocess
import sys
import tempfile
from pathlib import Path

RUN = "runs/cpu"  # config/cpu.yaml's results_dir

TARGETS = {("clinifact", "discriminative"): 75.0, ("healthfc", "oracle"): 78.0, ("healthfc", "claims_only"): 48.0,
           ("healthfc", "gold_explanations"): 60.0}
PAPERS = Path(__file__).resolve().parents[1] / "resources/papers/numbers.yaml"


def _above() -> dict[tuple[str, str], float]:
    """Every HealthFC Table 5 row above the paper's (DeBERTa's) row, from the papers' numbers."""
    import yaml

    table5 = yaml.safe_load(PAPERS.read_text(encoding="utf-8"))["healthfc"]["table5"]
    return {("healthfc", system): float(row["f1"]) for system, row in table5.items()}


ABOVE = _above()


def _rows(path: Path) -> list[dict[str, str]]:
    with open(path, encoding="utf-8", newline="") as fh:
        return list(csv.DictReader(fh))


def _mean(cell: str) -> float | None:
    m = re.match(r"\s*(-?[\d.]+)", cell or "")
    return float(m.group(1)) if m else None


def _wall(bench_dir: Path, pattern: str) -> float:
    """Seconds summed over the job benchmark files matching ``pattern`` (Snakemake's benchmark TSVs)."""
    total = 0.0
    for path in bench_dir.glob(pattern):
        with open(path, encoding="utf-8", newline="") as fh:
            rows = list(csv.DictReader(fh, delimiter="\t"))
        total += float(rows[0]["s"]) if rows else 0.0
    return total


def _target(dataset: str, system: str, f1: float | None) -> str:
    """The targets a row's macro-F1 (as the table prints it) meets or not."""
    if f1 is None:
        return ""
    out = []
    if (goal := TARGETS.get((dataset, system))) is not None:
        out.append(f"target ≥ {goal:g}: {'met' if f1 >= goal else 'NOT met'}")
    if (goal := ABOVE.get((dataset, system))) is not None:
        out.append(f"above the paper's {goal:g}: {'met' if f1 > goal else 'NOT met'}")
    return "; ".join(out)


def _best(dataset: str, rows: list[tuple[str, str, float | None]]) -> None:
    """Per system, our best row and its target: the row a reader of the table would quote."""
    best: dict[str, tuple[float, str]] = {}
    for system, model, f1 in rows:
        if f1 is not None and (system not in best or f1 > best[system][0]):
            best[system] = (f1, model)
    for system, (f1, model) in best.items():
        print(f"  best of ours, {system}: {model} {f1:.1f}  {_target(dataset, system, f1)}")


def clinifact(root: Path) -> None:
    table = root / RUN / "tables/clinifact_table8.csv"
    if not table.exists():
        print(f"no {table}: run with --run (or snakemake --configfile config/cpu.yaml) first")
        return
    bench = root / RUN / "timings/experiments/clinifact"
    print("\nCliniFact, test split (394 pairs of the release)")
    print(f"{'source':<28} {'model':<30} {'macro-F1':>9} {'95% CI':>12} {'accuracy':>9} {'wall s':>8}  ")
    ranked = []
    for r in _rows(table):
        ours = r["source"] == "ours"
        wall = f"{_wall(bench, r['model'] + '.tsv'):.0f}" if ours else ""
        f1 = _mean(r["macro F1"])
        print(f"{r['source']:<28} {r['model']:<30} {r['macro F1']:>9} {r.get('macro F1 95% CI', ''):>12} {r['accuracy']:>9} {wall:>8}  "
              f"{_target('clinifact', r['system'], f1) if ours else ''}")
        if ours:
            ranked.append((r["system"], r["model"], f1))
    _best("clinifact", ranked)


def healthfc(root: Path) -> None:
    bench = root / RUN / "timings/experiments/healthfc"
    for name in ("healthfc_table3", "healthfc_table5"):
        table = root / RUN / f"tables/{name}.csv"
        if not table.exists():
            continue
        key = "system" if name == "healthfc_table3" else "experiment"
        print(f"\nHealthFC {name[-6:].replace('_', ' ')} (5-fold mean ± std; wall time summed over the folds)")
        print(f"{'source':<28} {'model':<18} {'system':<20} {'macro-F1':>13} {'wall s':>8}")
        ranked = []
        for r in _rows(table):
            ours = r["source"] == "ours"
            f1_col = "veracity F1" if key == "system" else "F1"
            pattern = "/".join((r["lang"], r["model"], r[key], "fold*.tsv"))
            wall = f"{_wall(bench, pattern):.0f}" if ours else ""
            print(f"{r['source']:<28} {r['model']:<18} {r[key]:<20} {r[f1_col]:>13} {wall:>8}  "
                  f"{_target('healthfc', r[key], _mean(r[f1_col])) if ours else ''}")
            if ours:
                ranked.append((r[key], r["model"], _mean(r[f1_col])))
        _best("healthfc", ranked)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--run", action="store_true", help="run snakemake --configfile config/cpu.yaml first")
    ap.add_argument("--workdir", default=".", help="the workflow directory (default: here)")
    ap.add_argument("--clinifact", default=None, help="a local directory with the CliniFact release CSVs")
    ap.add_argument("--healthfc", default=None, help="a local path or URL of the HealthFC release (Datensatz.csv)")
    ap.add_argument("--no-healthfc", action="store_true", help="leave HealthFC out")
    ap.add_argument("--cores", default="2")
    ap.add_argument("--overlay", nargs="*", default=[], help="config files after config/cpu.yaml, e.g. config/cpu-gbm-embeddings.yaml")
    args = ap.parse_args()
    root = Path(args.workdir)
    if args.run:
        overrides = {}
        if args.clinifact:
            overrides["clinifact"] = {"release": {"source": str(Path(args.clinifact).resolve())}}
        if args.healthfc:
            overrides["healthfc"] = {"release": {"source": args.healthfc}}
        if args.no_healthfc:
            overrides["stages"] = {"healthfc": False}
            # no HealthFC experiments (an empty model list alone is refused), and none of its rows kept
            import yaml

            final = yaml.safe_load((root / "config" / "cpu.yaml").read_text(encoding="utf-8"))["experiments"].get("final") or []
            overrides["experiments"] = {"healthfc": {"langs": []}, "final": [r for r in final if r["dataset"] != "healthfc"]}
        cmd = [str(Path(sys.executable).with_name("snakemake")), "--cores", args.cores, "--configfile", "config/cpu.yaml", *args.overlay]
        with tempfile.TemporaryDirectory() as tmp:
            if overrides:  # a config file, not --config: its values keep their YAML types
                extra = Path(tmp) / "overrides.yaml"
                extra.write_text(json.dumps(overrides, indent=1), encoding="utf-8")  # JSON is YAML
                print(f"# {extra}: {json.dumps(overrides)}")
                cmd.append(str(extra))
            print("$", " ".join(cmd), flush=True)
            subprocess.run(cmd, cwd=root, check=True)
    clinifact(root)
    healthfc(root)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
