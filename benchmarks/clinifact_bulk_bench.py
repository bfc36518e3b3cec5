#!/usr/bin/env python
"""Bulk-zip extraction benchmark: studies/second and peak memory at 5k, 10k and 20k studies.

Builds synthetic bulk zips by varying the demo studies (fresh NCT ids, shuffled titles) and streams
them through medfc.clinifact.ctgov.read_bulk_zip (filter + gzipped JSONL out). Peak memory is the
tracemalloc peak of Python allocations during extraction. Usage:
    python benchmarks/clinifact_bulk_bench.py [--sizes 5000 10000 20000] [--workdir DIR]
"""

from __future__ import annotations

import argparse
import copy
import json
import logging
import tempfile
import time
import tracemalloc
import zipfile
from pathlib import Path

from medfc.clinifact.ctgov import iter_bulk_zip, read_bulk_zip
from medfc.common.report import SkipReport

DEMO = Path(__file__).resolve().parents[1] / "resources" / "demo" / "ctgov" / "studies.zip"


def build_zip(path: Path, n: int, templates: list[dict]) -> None:
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        for i in range(n):
            s = copy.deepcopy(templates[i % len(templates)])
            nct = f"NCT8{i:07d}"
            s["protocolSection"]["identificationModule"]["nctId"] = nct
            s["protocolSection"]["identificationModule"]["briefTitle"] += f" (variant {i})"
            zf.writestr(f"{nct}.json", json.dumps(s))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--sizes", type=int, nargs="+", default=[5000, 10000, 20000])
    ap.add_argument("--workdir", default=None)
    args = ap.parse_args()
    logging.disable(logging.WARNING)  # skipped members are counted in the report, not printed
    templates = list(iter_bulk_zip(DEMO))
    with tempfile.TemporaryDirectory(dir=args.workdir) as tmp:
        tmp = Path(tmp)
        print(f"{'studies':>8} {'zip MB':>7} {'seconds':>8} {'studies/s':>10} {'peak MiB':>9} {'zip dir MiB':>11} {'working MiB':>11}")
        for n in args.sizes:
            zpath = tmp / f"bulk_{n}.zip"
            build_zip(zpath, n, templates)
            report = SkipReport("bench")
            tracemalloc.start()  # cost of zipfile's central directory alone (ZipInfo per member)
            with zipfile.ZipFile(zpath) as zf:
                directory = tracemalloc.get_traced_memory()[0]
                del zf
            tracemalloc.stop()
            tracemalloc.start()
            t0 = time.perf_counter()
            kept = read_bulk_zip(zpath, tmp / f"out_{n}.jsonl.gz", report=report, progress=False)
            dt = time.perf_counter() - t0
            _, peak = tracemalloc.get_traced_memory()
            tracemalloc.stop()
            assert report.counts["members_read"] == n
            mib = 2**20
            print(f"{n:>8} {zpath.stat().st_size / 1e6:>7.1f} {dt:>8.2f} {n / dt:>10.0f} {peak / mib:>9.2f} {directory / mib:>11.2f} {(peak - directory) / mib:>11.2f}   (kept {kept}, skipped {len(report.skipped)})")
            zpath.unlink()
        print("peak = tracemalloc peak during read_bulk_zip; zip dir = zipfile's in-memory central directory;")
        print("working = peak - zip dir: the per-study extraction working set (should stay flat).")


if __name__ == "__main__":
    main()
