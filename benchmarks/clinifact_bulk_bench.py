#!/usr/bin/env python
"""Bulk-zip extraction benchmark: studies/second and peak memory at 5k, 10k, 20k and 40k studies.

Builds synthetic bulk zips by varying the demo studies (fresh NCT ids, varied titles) and streams
them through medfc.clinifact.ctgov.read_bulk_zip (the zip read one member at a time + filter + gzipped JSONL out).
Each extraction runs in a fresh Python process, so its memory figures are its own:

* ``tracemalloc peak``: peak of Python allocations during read_bulk_zip (a second, traced run);
* ``maxrss delta``: peak resident set during an untraced run minus the resident set before it
  (VmHWM after resetting it, since a subprocess's ru_maxrss inherits its parent's peak; else ru_maxrss);
* ``report``: of that peak, the SkipReport still alive afterwards (one entry per skipped study, by design);
* ``zipfile dir``: what zipfile.ZipFile would hold for the same zip (its central directory), for contrast.

Memory must stay flat as the zip grows: the last line gives the largest/smallest peak ratios (≈1.0).
``--compare-zipfile`` also measures a zipfile-based reader of the same studies. Usage:
    python benchmarks/clinifact_bulk_bench.py [--sizes 5000 10000 20000 40000] [--workdir DIR] [--compare-zipfile]
"""

from __future__ import annotations

import argparse
import copy
import json
import logging
import subprocess
import sys
import tempfile
import time
import tracemalloc
import zipfile
from pathlib import Path

from medfc.clinifact.ctgov import iter_bulk_zip, read_bulk_zip
from medfc.common.report import SkipReport
from rss import peak_rss, reset_peak_rss  # noqa: E402 (benchmarks/rss.py)

DEMO = Path(__file__).resolve().parents[1] / "resources" / "demo" / "ctgov" / "studies.zip"
MIB = 2**20


def build_zip(path: Path, n: int, templates: list[dict]) -> None:
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        for i in range(n):
            s = copy.deepcopy(templates[i % len(templates)])
            nct = f"NCT8{i:07d}"
            s["protocolSection"]["identificationModule"]["nctId"] = nct
            s["protocolSection"]["identificationModule"]["briefTitle"] += f" (variant {i})"
            zf.writestr(f"{nct}.json", json.dumps(s))


def _zipfile_reader(zpath: Path, out: Path, report: SkipReport) -> int:
    """A zipfile-based reader, for contrast: zipfile.ZipFile (whole central directory in memory) + the same filter."""
    from medfc.clinifact.ctgov import passes_clinifact_filter
    from medfc.common.io import write_jsonl

    def studies():
        with zipfile.ZipFile(zpath) as zf:
            for info in zf.infolist():
                study = json.loads(zf.read(info))
                report.count("members_read")
                reason = passes_clinifact_filter(study)
                if reason:
                    report.skip(study["protocolSection"]["identificationModule"]["nctId"], reason)
                    continue
                yield study

    return write_jsonl(out, studies())


def measure(zpath: Path, out: Path, reader: str) -> dict:
    """One extraction, untraced (time, maxrss), then traced (tracemalloc peak). Run in a fresh process."""

    def extract(report: SkipReport) -> int:
        if reader == "stream":
            return read_bulk_zip(zpath, out, report=report, progress=False)
        return _zipfile_reader(zpath, out, report)

    report = SkipReport("bench")
    rss0 = reset_peak_rss()
    t0 = time.perf_counter()
    kept = extract(report)
    seconds = time.perf_counter() - t0
    rss_delta = peak_rss() - rss0
    del report.skipped[:]
    traced_report = SkipReport("bench")
    tracemalloc.start()
    extract(traced_report)
    retained, peak = tracemalloc.get_traced_memory()  # what is still alive afterwards is the skip report
    tracemalloc.stop()
    return {
        "members": report.counts["members_read"], "kept": kept, "skipped": len(traced_report.skipped), "seconds": seconds,
        "rss_delta": rss_delta, "peak": peak, "report": retained,
    }


def zipfile_directory(zpath: Path) -> int:
    """Bytes of Python objects zipfile.ZipFile keeps for the zip's central directory."""
    with zipfile.ZipFile(zpath):  # warm up one-off allocations
        pass
    tracemalloc.start()
    with zipfile.ZipFile(zpath) as zf:
        directory = tracemalloc.get_traced_memory()[0]
        del zf
    tracemalloc.stop()
    return directory


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", type=int, nargs="+", default=[5000, 10000, 20000, 40000])
    ap.add_argument("--workdir", default=None)
    ap.add_argument("--compare-zipfile", action="store_true", help="also measure a zipfile.ZipFile-based reader")
    ap.add_argument("--measure", nargs=3, metavar=("ZIP", "OUT", "READER"), help=argparse.SUPPRESS)  # child process
    args = ap.parse_args()
    logging.disable(logging.WARNING)  # skipped members are counted in the report, not printed
    if args.measure:
        zpath, out, reader = args.measure
        print(json.dumps(measure(Path(zpath), Path(out), reader)))
        return
    templates = list(iter_bulk_zip(DEMO))
    readers = ["stream", "zipfile"] if args.compare_zipfile else ["stream"]
    results: dict[str, list[dict]] = {r: [] for r in readers}
    with tempfile.TemporaryDirectory(dir=args.workdir) as tmp:
        tmp = Path(tmp)
        hdr = f"{'reader':>8} {'studies':>8} {'zip MB':>7} {'seconds':>8} {'studies/s':>10} {'tracemalloc peak MiB':>21} {'maxrss delta MiB':>17} {'report MiB':>11} {'zipfile dir MiB':>16}"
        print(hdr)
        for n in args.sizes:
            zpath = tmp / f"bulk_{n}.zip"
            build_zip(zpath, n, templates)
            directory = zipfile_directory(zpath)
            for reader in readers:
                child = subprocess.run(
                    [sys.executable, __file__, "--measure", str(zpath), str(tmp / f"out_{n}.jsonl.gz"), reader], check=True, capture_output=True, text=True
                )
                r = json.loads(child.stdout.strip().splitlines()[-1])
                assert r["members"] == n, r
                results[reader].append(r)
                print(
                    f"{reader:>8} {n:>8} {zpath.stat().st_size / 1e6:>7.1f} {r['seconds']:>8.2f} {n / r['seconds']:>10.0f} "
                    f"{r['peak'] / MIB:>21.2f} {r['rss_delta'] / MIB:>17.2f} {r['report'] / MIB:>11.2f} {directory / MIB:>16.2f}   (kept {r['kept']}, skipped {r['skipped']})",
                    flush=True,
                )
            zpath.unlink()
    lo, hi = args.sizes[0], args.sizes[-1]
    for reader, rs in results.items():
        peak_ratio = rs[-1]["peak"] / rs[0]["peak"]
        work_ratio = (rs[-1]["peak"] - rs[-1]["report"]) / (rs[0]["peak"] - rs[0]["report"])
        rss_ratio = max(rs[-1]["rss_delta"], 1) / max(rs[0]["rss_delta"], 1)
        rate = sum(args.sizes) / sum(r["seconds"] for r in rs)
        per_skip = (rs[-1]["report"] - rs[0]["report"]) / max(rs[-1]["skipped"] - rs[0]["skipped"], 1)
        print(
            f"{reader}: {rate:.0f} studies/s overall; peak memory {hi} vs {lo} studies: tracemalloc x{peak_ratio:.2f} "
            f"(x{work_ratio:.2f} without the skip report, which costs ~{per_skip:.0f} B per skipped study), maxrss delta x{rss_ratio:.2f}"
        )
    print("tracemalloc peak = Python allocations during read_bulk_zip (traced run); maxrss delta = peak RSS during")
    print("the untraced run minus RSS before it (fresh process per size); zipfile dir = the central directory")
    print("zipfile.ZipFile would keep in memory for the same zip (what zipstream avoids).")


if __name__ == "__main__":
    main()
