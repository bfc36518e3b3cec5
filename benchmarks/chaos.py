"""The chaos run: the live-shaped workflow against local fakes of every service on a bad day, killed at
random moments, rerun until it completes, and compared with a clean run.

    python benchmarks/chaos.py [--seed 0] [--fault-rate 0.2] [--kills 3] [--size 1] [--kill-window 5 40] [--together]
                               [--work DIR] [--keep]

One local server (tests/helpers/chaos.py) plays the portal, the HealthFC release, ClinicalTrials.gov's
search API, PubMed's efetch and esearch, a Serper-compatible web search, a MediaWiki API and an
OpenAI-compatible LLM server. The run crawls the portal, rebuilds both datasets (PubMed abstracts
fetched), searches the three evidence sources for every HealthFC claim, scores CliniFact's test split
zero-shot through the LLM server (a tiny Llama's tokenizer trims the prompts) and runs MedSNIP on both of
its datasets through it.

First a clean run (no faults, no kills); then, in a second copy with empty caches, the chaos run: the
server answers a seeded random share of requests (``--fault-rate``) with a fault — 500, 503, 429 with
Retry-After 1 s, 429 with Retry-After 3600 s (above every client's cap: the job fails at once saying when
to rerun), a body cut short, the service's error sent with HTTP 200, a connection reset, a slow answer —
and the first ``--kills`` attempts are killed with SIGKILL (Snakemake and every job, as a lost login
session or an OOM killer leaves them) at a random moment. After a killed or failed attempt the run is
unlocked and started again, as a user would, until Snakemake exits 0.

Printed: the faults injected by kind and service, the kills, failed attempts and reruns, the answers the
chaos run got again that the clean run needed once (calls re-paid, per service), and the result files
that differ from the clean run's (logs, benchmarks and run statistics — fetch times, cache hits, request
and retry counts — aside). ``--size`` scales the MedSNIP claims (4 per size, up to the demo's HealthFC
claims) and the number of ClinicalTrials.gov search pages and efetch batches (12 / size studies or PMIDs
each, at least 2): past 8 the demo data (44 studies, 52 PubMed records) adds nothing.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # repo root, for tests.helpers

from tests.helpers.chaos import chaos_run  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--fault-rate", type=float, default=0.2, help="share of requests answered with a fault")
    ap.add_argument("--kills", type=int, default=3, help="attempts killed with SIGKILL at a random moment")
    ap.add_argument("--size", type=int, default=1, help="scales MedSNIP's claims, search pages and efetch batches")
    ap.add_argument("--cores", type=int, default=2)
    ap.add_argument("--kill-window", type=float, nargs=2, default=(5.0, 40.0), metavar=("FROM", "TO"),
                    help="a kill comes this many seconds after an attempt's start")
    ap.add_argument("--together", action="store_true", help="run the clean run beside the chaos run (each with its own fake services)")
    ap.add_argument("--work", type=Path, default=None, help="where the two workflow copies go (default: a temporary folder)")
    ap.add_argument("--keep", action="store_true", help="keep the work folder")
    args = ap.parse_args(argv)
    work = args.work or Path(tempfile.mkdtemp(prefix="medfc-chaos-"))
    start = time.monotonic()
    try:
        result = chaos_run(work, seed=args.seed, fault_rate=args.fault_rate, kills=args.kills, size=args.size, cores=args.cores,
                           kill_window=tuple(args.kill_window), together=args.together, progress=lambda s: print(f"[{time.monotonic() - start:6.0f} s] {s}", flush=True))
    finally:
        if not args.keep and args.work is None:
            shutil.rmtree(work, ignore_errors=True)
    summary = result.summary()
    print(json.dumps(summary, indent=2))
    print(f"\nchaos run: {summary['faults']} faults injected in {summary['requests']['chaos']} requests, {summary['kills']} kills, "
          f"{summary['failed_runs']} failed attempts, {summary['reruns']} reruns; calls re-paid: {summary['calls_repaid'] or 'none'}; "
          f"differing files: {len(result.differ)} of {len(result.same) + len(result.volatile) + len(result.differ)} "
          f"({time.monotonic() - start:.0f} s in all)")
    return 0 if not result.differ else 1


if __name__ == "__main__":
    raise SystemExit(main())
