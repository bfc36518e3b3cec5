#!/usr/bin/env python
"""Memory of the zip reader on a STORED member with a data descriptor.

A STORED member whose sizes follow its data (general-purpose flag bit 3, what a writer on a pipe produces)
is held only while it is wanted and under the member cap (``clinifact.studies.max_member_bytes``). This
script builds zips with one such member of each size between two small study members, walks each with
``zipstream.iter_members`` under the cap in a fresh process and prints, per size:

* ``tracemalloc peak``: peak of Python allocations during the walk (a traced run);
* ``maxrss delta``: peak resident set during an untraced run minus the resident set before it (VmHWM after
  resetting it through /proc/self/clear_refs; else ru_maxrss);
* the peak as a multiple of the cap, and of the member.

The last line gives the largest/smallest peak ratio over the sizes (flat: about 1.0). Usage:
    python benchmarks/zip_stored_bench.py [--sizes-mib 16 64 128] [--cap-mib 4] [--workdir DIR]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
import tracemalloc
import zipfile
from pathlib import Path

from medfc.clinifact import zipstream
from rss import peak_rss, reset_peak_rss  # noqa: E402 (benchmarks/rss.py)

MIB = 2**20


class _Pipe:
    """A write-only stream without seek/tell: zipfile then writes a data descriptor after each member."""

    def __init__(self, fh) -> None:
        self.fh = fh

    def write(self, b: bytes) -> int:
        return self.fh.write(b)

    def flush(self) -> None:
        self.fh.flush()


def build_zip(path: Path, size: int) -> None:
    block = bytes((i * 2654435761) >> 13 & 0xFF for i in range(MIB))  # no zip signature inside
    with open(path, "wb") as fh, zipfile.ZipFile(_Pipe(fh), "w", compression=zipfile.ZIP_STORED) as zf:
        zf.writestr("NCT99110001.json", b'{"a": 1}')
        with zf.open("NCT99110002.json", "w", force_zip64=size >= 2**31) as member:
            for _ in range(size // MIB):
                member.write(block)
        zf.writestr("NCT99110003.json", b'{"b": 2}')



def measure(zpath: Path, cap: int) -> dict:
    """One walk untraced (time, maxrss), then one traced (tracemalloc peak). Run in a fresh process."""

    def walk() -> list:
        return [(m.name, m.error, m.file_size) for m in zipstream.iter_members(zpath, max_size=cap)]

    rss0 = reset_peak_rss()
    t0 = time.perf_counter()
    got = walk()
    seconds = time.perf_counter() - t0
    rss_delta = peak_rss() - rss0
    tracemalloc.start()
    walk()
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return {"members": got, "seconds": seconds, "rss_delta": rss_delta, "peak": peak}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes-mib", type=int, nargs="+", default=[16, 64, 128])
    ap.add_argument("--cap-mib", type=float, default=4.0)
    ap.add_argument("--workdir", default=None)
    ap.add_argument("--measure", nargs=2, metavar=("ZIP", "CAP"), help=argparse.SUPPRESS)  # child process
    args = ap.parse_args()
    if args.measure:
        print(json.dumps(measure(Path(args.measure[0]), int(args.measure[1]))))
        return
    cap = int(args.cap_mib * MIB)
    peaks = []
    print(f"{'member MiB':>10} {'cap MiB':>8} {'seconds':>8} {'MiB/s':>7} {'tracemalloc peak MiB':>21} {'maxrss delta MiB':>17} "
          f"{'peak/cap':>9} {'peak/member':>12}")
    with tempfile.TemporaryDirectory(dir=args.workdir) as tmp:
        for size_mib in args.sizes_mib:
            zpath = Path(tmp) / f"stored_{size_mib}.zip"
            build_zip(zpath, size_mib * MIB)
            child = subprocess.run([sys.executable, __file__, "--measure", str(zpath), str(cap)], check=True, capture_output=True, text=True)
            r = json.loads(child.stdout.strip().splitlines()[-1])
            zpath.unlink()
            assert [e for _, e, _ in r["members"]] == [None, "member_too_large", None], r["members"]
            assert r["members"][1][2] == size_mib * MIB, r["members"]
            peaks.append(r["peak"])
            print(f"{size_mib:>10} {cap / MIB:>8.1f} {r['seconds']:>8.2f} {size_mib / r['seconds']:>7.0f} {r['peak'] / MIB:>21.2f} "
                  f"{r['rss_delta'] / MIB:>17.2f} {r['peak'] / cap:>9.2f} {r['peak'] / (size_mib * MIB):>12.3f}", flush=True)
    print(f"peak memory {args.sizes_mib[-1]} vs {args.sizes_mib[0]} MiB member: "
          f"tracemalloc x{peaks[-1] / peaks[0]:.2f} (flat: nothing of the member is read past the cap)")


if __name__ == "__main__":
    main()
