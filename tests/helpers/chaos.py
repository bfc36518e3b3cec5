"""The chaos run's world: every live service of the workflow as one local fake on a bad day.

:class:`ChaosWorld` serves, on one 127.0.0.1 port, what a live run talks to:

- the Medizin Transparent portal (the demo snapshot's files; the crawl reaches it through
  ``healthfc.crawl.mirror_url``) and the HealthFC release file (``/release/Datensatz.csv``);
- ClinicalTrials.gov's v2 search (``/ctgov/studies``: the demo studies, paged with opaque page tokens);
- PubMed E-utilities (``/eutils/efetch.fcgi`` with the demo records, ``/eutils/esearch.fcgi`` ranking them
  by a hash of the query);
- a Serper-compatible web search (``/serper/search``) and a MediaWiki API (``/wiki/api.php``);
- an OpenAI-compatible server (``/v1/chat/completions`` answering MedSNIP's prompts as
  :func:`tests.helpers.medsnip.scripted` does, ``/v1/completions`` the zero-shot options' log-probabilities).

With ``fault_rate`` > 0 a seeded random share of the requests gets a fault instead of its answer: HTTP 500
or 503, 429 with a short Retry-After, 429 with a Retry-After far above every client's cap, a body cut
short, the service's own error sent with HTTP 200 (where the real service has one), a connection reset,
or a slow answer (the answer, late). ``faults`` counts them per service and kind; ``answered`` counts the
answers per request (its service, method, path, query and body, contact and key parameters left out; an
efetch answer per PMID), so two runs can be compared call by call: what the chaos run got more often than
the clean run is a call re-paid.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import os
import random
import re
import signal
import socket
import struct
import subprocess
import threading
import time
import zipfile
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

from tests.helpers.fake_openai import hashed_logprobs, words
from tests.helpers.medsnip import scripted
from tests.helpers.workflow import JOB_BLOCKS

REPO = Path(__file__).resolve().parents[2]
DEMO = REPO / "resources" / "demo"
SITE = DEMO / "site"

#: the kinds of fault, each with its weight; "error_200" only where the service has an error shape of its own
FAULTS = {"http_500": 2, "http_503": 2, "http_429": 2, "http_429_long": 1, "cut": 2, "error_200": 2, "reset": 2, "slow": 2}
#: request parameters that are no part of what was asked (contact, keys)
UNASKED = frozenset({"email", "tool", "api_key"})
#: each service's error sent with HTTP 200, as the real one (or a proxy in front of it) sends it
ERRORS_200: dict[str, tuple[str, bytes]] = {
    "openai": ("application/json", json.dumps({"error": {"message": "Provider returned error", "code": 502}}).encode()),
    "ctgov": ("application/json", json.dumps({"message": "Service temporarily unavailable"}).encode()),
    "efetch": ("text/xml", b"<?xml version='1.0'?><eFetchResult><ERROR>Unable to obtain query #1</ERROR></eFetchResult>"),
    "esearch": ("application/json", json.dumps({"esearchresult": {"ERROR": "Search Backend failed: read timeout"}}).encode()),
    "serper": ("application/json", json.dumps({"message": "Internal server error", "statusCode": 500}).encode()),
    "wiki": ("application/json", json.dumps({"error": {"code": "maxlag", "info": "Waiting for a database server: 1 seconds lagged", "lag": 1}}).encode()),
}


def demo_studies() -> list[dict[str, Any]]:
    with zipfile.ZipFile(DEMO / "ctgov" / "studies.zip") as zf:
        return [json.loads(zf.read(n)) for n in sorted(zf.namelist()) if n.endswith(".json")]


def demo_records() -> dict[str, bytes]:
    """PMID -> its <PubmedArticle> element (the demo's one-article sets unwrapped)."""
    out = {}
    for path in sorted((DEMO / "pubmed").glob("*.xml")):
        raw = path.read_bytes()
        start, end = raw.index(b"<PubmedArticleSet>") + len(b"<PubmedArticleSet>"), raw.rindex(b"</PubmedArticleSet>")
        out[path.stem] = raw[start:end].strip()
    return out


def _stable(text: str) -> int:
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "big")


class ChaosWorld:
    """The fake services on one port (``url``); ``start()``/``stop()`` or a ``with`` block."""

    def __init__(self, fault_rate: float = 0.0, seed: int = 0, slow_s: float = 0.5, port: int = 0) -> None:
        self.fault_rate = fault_rate
        self.rng = random.Random(seed)
        self.slow_s = slow_s
        self.lock = threading.Lock()
        self.faults: Counter = Counter()
        self.answered: Counter = Counter()
        self.requests = 0
        self.studies = demo_studies()
        self.records = demo_records()
        world = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_GET(self) -> None:  # noqa: N802
                world._serve(self, b"")

            def do_POST(self) -> None:  # noqa: N802
                world._serve(self, self.rfile.read(int(self.headers.get("Content-Length") or 0)))

            def log_message(self, *args: Any) -> None:
                pass

        class Server(ThreadingHTTPServer):
            daemon_threads = True

            def handle_error(self, request: Any, client_address: Any) -> None:
                pass  # a client killed mid-request (the point of the run): nothing to print

        self.server = Server(("127.0.0.1", port), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)

    # -- life ---------------------------------------------------------------------------------------
    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def start(self) -> ChaosWorld:
        self.thread.start()
        return self

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()

    def __enter__(self) -> ChaosWorld:
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()

    def reset_counts(self) -> None:
        with self.lock:
            self.faults.clear()
            self.answered.clear()
            self.requests = 0

    # -- the services --------------------------------------------------------------------------------
    def _route(self, method: str, path: str, query: dict[str, list[str]], body: bytes) -> tuple[str, Callable[[], tuple[int, str, bytes]]]:
        """(service, a function giving the answer's status, content type and body)."""
        if path.startswith("/v1/"):
            return "openai", lambda: self._openai(path, json.loads(body))
        if path == "/ctgov/studies":
            return "ctgov", lambda: self._ctgov(query)
        if path == "/eutils/efetch.fcgi":
            form = parse_qs(body.decode()) if body else query
            return "efetch", lambda: self._efetch(form)
        if path == "/eutils/esearch.fcgi":
            return "esearch", lambda: self._esearch(query)
        if path == "/serper/search":
            return "serper", lambda: self._serper(json.loads(body))
        if path == "/wiki/api.php":
            return "wiki", lambda: self._wiki(query)
        if path.startswith("/release/"):
            return "release", lambda: self._file(DEMO / "healthfc_release" / path.removeprefix("/release/"))
        return "site", lambda: self._site(path)

    def _openai(self, path: str, body: dict[str, Any]) -> tuple[int, str, bytes]:
        if path.endswith("/chat/completions"):
            text = scripted(body)
            doc = {"id": "chaos", "object": "chat.completion", "model": body.get("model"),
                   "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
                   "usage": {"prompt_tokens": words(body), "completion_tokens": len(text.split())}}
        else:
            top = hashed_logprobs(body)
            best = max(top, key=top.get)
            doc = {"id": "chaos", "object": "text_completion", "model": body.get("model"),
                   "choices": [{"index": 0, "text": best, "finish_reason": "length",
                                "logprobs": {"tokens": [best], "token_logprobs": [top[best]], "top_logprobs": [top]}}],
                   "usage": {"prompt_tokens": len(str(body.get("prompt", "")).split()), "completion_tokens": 1}}
        return 200, "application/json", json.dumps(doc).encode()

    def _ctgov(self, query: dict[str, list[str]]) -> tuple[int, str, bytes]:
        size = int(query.get("pageSize", ["10"])[0])
        token = query.get("pageToken", [""])[0]
        start = int(token.removeprefix("tok")) if token else 0
        page: dict[str, Any] = {"studies": self.studies[start : start + size]}
        if start == 0:
            page["totalCount"] = len(self.studies)
        if start + size < len(self.studies):
            page["nextPageToken"] = f"tok{start + size}"
        return 200, "application/json", json.dumps(page).encode()

    def _efetch(self, form: dict[str, list[str]]) -> tuple[int, str, bytes]:
        ids = [i for i in ",".join(form.get("id", [""])).split(",") if i]
        inner = b"\n".join(self.records[i] for i in ids if i in self.records)
        return 200, "text/xml", b'<?xml version="1.0" ?>\n<PubmedArticleSet>\n' + inner + b"\n</PubmedArticleSet>\n"

    def _esearch(self, query: dict[str, list[str]]) -> tuple[int, str, bytes]:
        term, k = query.get("term", [""])[0], int(query.get("retmax", ["5"])[0])
        pmids = sorted(self.records, key=lambda p: _stable(f"{term}|{p}"))[: min(k, 3)]
        return 200, "application/json", json.dumps({"esearchresult": {"count": str(len(pmids)), "idlist": pmids}}).encode()

    def _serper(self, body: dict[str, Any]) -> tuple[int, str, bytes]:
        q, n = body["q"], int(body.get("num", 10))
        organic = [{"title": f"Result {i} on {q[:30]}", "snippet": f"What source {i} says about: {q}", "position": i,
                    "link": f"https://r.example/{_stable(q) % 10**8}/{i}"} for i in range(1, min(n, 4) + 1)]
        return 200, "application/json", json.dumps({"searchParameters": {"q": q}, "organic": organic}).encode()

    def _wiki(self, query: dict[str, list[str]]) -> tuple[int, str, bytes]:
        if query.get("list") == ["search"]:
            term = query.get("srsearch", [""])[0]
            ids = sorted(range(1, 40), key=lambda p: _stable(f"{term}|{p}"))[:3]
            doc: dict[str, Any] = {"query": {"search": [{"pageid": p, "title": f"Page {p}", "snippet": f"<span>Page</span> {p}"} for p in ids]}}
        else:
            ids = [int(p) for p in query.get("pageids", [""])[0].split("|") if p]
            doc = {"query": {"pages": [{"pageid": p, "title": f"Page {p}", "extract": f"The introduction of page {p}."} for p in ids]}}
        return 200, "application/json", json.dumps(doc).encode()

    def _file(self, path: Path) -> tuple[int, str, bytes]:
        if path.is_file():
            return 200, "application/octet-stream", path.read_bytes()
        return 404, "text/plain", b"not found"

    def _site(self, path: str) -> tuple[int, str, bytes]:
        rel = path.split("?", 1)[0].lstrip("/")
        target = (SITE / rel).resolve()
        if not str(target).startswith(str(SITE.resolve())):
            return 404, "text/plain", b"not found"
        if target.is_dir():
            target = target / "index.html"
        kind = "text/html; charset=utf-8" if target.suffix == ".html" else ("text/plain" if target.suffix == ".txt" else "application/xml")
        status, _, data = self._file(target)
        return status, kind, data

    # -- faults ---------------------------------------------------------------------------------------
    def _fault(self, service: str) -> str | None:
        with self.lock:
            self.requests += 1
            if self.rng.random() >= self.fault_rate:
                return None
            kinds = [k for k in FAULTS if k != "error_200" or service in ERRORS_200]
            return self.rng.choices(kinds, weights=[FAULTS[k] for k in kinds])[0]

    def _units(self, service: str, method: str, path: str, query: dict[str, list[str]], body: bytes) -> list[str]:
        """What an answer gave, as the units a run pays for: one per PMID of an efetch answer (its batching
        depends on what other jobs had fetched first), else the request (contact and key parameters left out)."""
        if service == "efetch":
            form = parse_qs(body.decode()) if body else query
            return [f"efetch {pmid}" for pmid in ",".join(form.get("id", [""])).split(",") if pmid]
        asked = sorted((k, v) for k, v in query.items() if k not in UNASKED)
        return [f"{service} {method} {path} {asked} {hashlib.sha256(body).hexdigest()[:16] if body else ''}"]

    def _serve(self, handler: BaseHTTPRequestHandler, body: bytes) -> None:
        parts = urlsplit(handler.path)
        query = parse_qs(parts.query, keep_blank_values=True)
        service, answer = self._route(handler.command, parts.path, query, body)
        fault = self._fault(service)
        if fault is not None:
            with self.lock:
                self.faults[(service, fault)] += 1
        if fault == "slow":
            time.sleep(self.slow_s)
            fault = None
        if fault == "reset":
            handler.close_connection = True
            handler.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            return
        if fault in ("http_500", "http_503"):
            return self._reply(handler, int(fault[-3:]), "text/plain", b"Internal trouble", close=True)
        if fault == "http_429":
            return self._reply(handler, 429, "text/plain", b"Too many requests", {"Retry-After": "1"})
        if fault == "http_429_long":
            return self._reply(handler, 429, "text/plain", b"Too many requests", {"Retry-After": "3600"})
        if fault == "error_200":
            kind, data = ERRORS_200[service]
            return self._reply(handler, 200, kind, data)
        status, kind, data = answer()
        if fault == "cut" and len(data) > 1:
            handler.close_connection = True
            handler.send_response(status)
            handler.send_header("Content-Type", kind)
            handler.send_header("Content-Length", str(len(data)))
            handler.send_header("Connection", "close")
            handler.end_headers()
            handler.wfile.write(data[: len(data) // 2])
            handler.wfile.flush()
            return
        if status == 200:
            with self.lock:
                self.answered.update(self._units(service, handler.command, parts.path, query, body))
        self._reply(handler, status, kind, data)

    @staticmethod
    def _reply(handler: BaseHTTPRequestHandler, status: int, kind: str, data: bytes, headers: dict[str, str] | None = None,
               close: bool = False) -> None:
        handler.send_response(status)
        for k, v in {"Content-Type": kind, "Content-Length": str(len(data)), **(headers or {})}.items():
            handler.send_header(k, v)
        if close:
            handler.close_connection = True
            handler.send_header("Connection", "close")
        handler.end_headers()
        handler.wfile.write(data)

    # -- the config of a run against it ----------------------------------------------------------------
    def config(self, tokenizer: str, size: int = 1) -> dict[str, Any]:
        """The live-shaped run's config on top of config/config.yaml: every source is this world; ``size``
        scales the MedSNIP claims and the number of ClinicalTrials.gov and efetch requests."""
        u = self.url
        email = "chaos@example.org"
        return {
            "results_dir": "results",
            "stages": {"healthfc": True, "clinifact": True, "experiments": True, "medsnip": True},
            "healthfc": {
                "crawl": {"mirror_dir": None, "mirror_url": u, "contact": email, "retry_times": 3, "download_delay": 0.0},
                "release": {"source": f"{u}/release/Datensatz.csv", "sha256": None},  # the world's own file: its hash recorded
                "retrieval": {"progress": False, "max_retries": 4,
                              "web": {"url": f"{u}/serper/search", "file": "", "requests_per_second": 50},
                              "pubmed": {"eutils_url": f"{u}/eutils/", "email": email},
                              "wikipedia": {"url": f"{u}/wiki/api.php", "requests_per_second": 50}},
            },
            "clinifact": {
                "studies": {"source": "api", "api_url": f"{u}/ctgov/studies", "page_size": max(2, 12 // size),
                            "requests_per_minute": 60, "progress": False},
                "pubmed": {"offline": False, "extra_cache_dirs": [], "email": email, "eutils_url": f"{u}/eutils/",
                           "batch_size": max(2, 12 // size), "progress": False},
            },
            "models": {"aliases": {"served-llm": tokenizer}, "clinifact": {"zero_shot": ["served-llm"]}},
            "experiments": {"clinifact": {"zero_shot": {"splits": ["test"], "max_prompt_tokens": 256},
                                          "model_zero_shot": {"served-llm": {"backend": "openai", "base_url": f"{u}/v1",
                                                                             "tokenizer": tokenizer, "api_key_env": ""}}}},
            "medsnip": {
                "llm": {"model": "served-llm", "base_url": f"{u}/v1", "api_key_env": "", "max_tokens": 256, "timeout_s": 60,
                        "max_retries": 4},
                "datasets": {"healthfc": {"limit": 4 * size}, "bench": {"enabled": True},
                             "medhallu": {"enabled": True, "path": "resources/demo/medsnip/medhallu_demo.json"}},
                "verifiers": [{"name": "served", "kind": "claim_only"}],
                "score": {"n_resamples": 200, "fidelity_embedding_model": "none"},
            },
        }


def targets(results: str = "results", small: bool = False) -> list[str]:
    """What the chaos run asks for: both datasets, the three sources' evidence, the zero-shot predictions and
    the MedSNIP tables (every rule that talks to a service, and what follows from their answers); ``small``
    leaves out MedSNIP-Bench, the demo MedHallu file and the HealthFC diff (no service of their own)."""
    return [f"{results}/healthfc/dataset/healthfc.jsonl", *([] if small else [f"{results}/healthfc/diff/diff.md"]),
            *(f"{results}/healthfc/evidence/{s}.jsonl" for s in ("web", "pubmed", "wikipedia")),
            f"{results}/clinifact/pairs/test_set.csv",
            f"{results}/experiments/clinifact/zero_shot/served-llm/scores.json",
            f"{results}/medsnip/healthfc/table.csv",
            *([] if small else [f"{results}/medsnip/bench/table.csv", f"{results}/medsnip/medhallu/table.csv"])]


def gunzipped(path: Path) -> bytes:
    data = path.read_bytes()
    return gzip.decompress(data) if path.suffix == ".gz" else data


#: files no rerun can make identical: the run's statistics, logs and timings
SKIPPED_PARTS = ("logs", "timings", "provenance", "index.md", "index.html")  # runs.jsonl: a line per run; the index names the runs
#: keys whose values are run statistics or times (what was fetched now or came from a cache, how long it took,
#: how many requests and retries it needed): left out when two JSON files are compared
VOLATILE_KEYS = frozenset({
    "fetched_at", "from_cache", "fetched", "resumed", "requests", "network_requests", "cache_hits", "cache_damaged",
    "retries", "retry_slept", "errors", "seconds", "elapsed_s", "wall_s", "duration_s", "started", "finished",
    "mirror_requests", "scrapy", "urls", "partial_torn_lines", "searches", "cached", "calls", "paid_calls",
    "cached_calls", "cost_usd", "usage", "pmids_cached",
    # which job paid for an answer that two jobs share (MedSNIP's atoms and group modes extract the same atoms,
    # its modes verify some of the same units): the order the jobs ran in, not what they wrote
    "cache", "extract_cached", "searches_run", "unit_cache_damaged",
    "requests_sent", "efetch_requests", "pmids_fetched", "answers_cached", "searches_sent",
    "provenance",  # the run that wrote it (medfc.common.provenance.job_record)
})


def volatile(key: str) -> bool:
    """A run statistic: one of :data:`VOLATILE_KEYS`, or a count of answers that came from a cache (``*_cached``)."""
    return key in VOLATILE_KEYS or key.endswith("_cached")


def normalised(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: normalised(v) for k, v in value.items() if not volatile(k)}
    if isinstance(value, list):
        return [normalised(v) for v in value]
    return value


def _parsed(data: bytes, name: str) -> Any:
    text = data.decode("utf-8")
    if name.endswith(".jsonl"):
        return [normalised(json.loads(line)) for line in text.splitlines() if line.strip()]
    return normalised(json.loads(text))


def result_files(root: Path) -> dict[str, Path]:
    return {str(p.relative_to(root)): p for p in sorted(root.rglob("*"))
            if p.is_file() and p.relative_to(root).parts[0] not in SKIPPED_PARTS}


def compare(clean: Path, chaos: Path, addresses: dict[str, str] | None = None) -> tuple[list[str], list[str], list[str]]:
    """(files byte-identical, files identical but for run statistics and timings, files that differ or
    exist in one run only) of two results folders; ``addresses``: text replaced in both first (each run's
    world has its own port)."""
    a, b = result_files(clean), result_files(chaos)
    same, volatile, differ = [], [], []
    for rel in sorted(set(a) | set(b)):
        if rel not in a or rel not in b:
            differ.append(rel)
            continue
        x, y = gunzipped(a[rel]), gunzipped(b[rel])
        for address, same_for_both in (addresses or {}).items():
            x, y = x.replace(address.encode(), same_for_both.encode()), y.replace(address.encode(), same_for_both.encode())
        if x == y:
            same.append(rel)
            continue
        name = rel.removesuffix(".gz")
        try:
            equal = name.endswith((".json", ".jsonl")) and _parsed(x, name) == _parsed(y, name)
        except ValueError:
            equal = False
        (volatile if equal else differ).append(rel)
    return same, volatile, differ


@dataclass
class Attempt:
    seconds: float
    returncode: int
    killed: bool
    failed_jobs: list[str] = field(default_factory=list)


def snakemake_command(configs: list[str], results: str = "results", cores: int = 2, small: bool = False) -> list[str]:
    return [*JOB_BLOCKS, "--cores", str(cores), "--rerun-incomplete", "--keep-going", "--configfile", *configs, "--", *targets(results, small)]


def run_once(snakemake: str, cwd: Path, args: list[str], env: dict[str, str], kill_after: float | None,
             log: Path) -> Attempt:
    """One ``snakemake`` run in ``cwd`` (its own process group), killed with SIGKILL, with every job it started,
    after ``kill_after`` seconds (None: never)."""
    start = time.monotonic()
    with log.open("a", encoding="utf-8") as out:
        out.write(f"\n===== snakemake {' '.join(args)} (kill after {kill_after})\n")
        out.flush()
        proc = subprocess.Popen([snakemake, *args], cwd=cwd, env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
        try:
            rc = proc.wait(timeout=kill_after)
            killed = False
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            rc = proc.wait()
            killed = True
    failed = []
    if not killed and rc != 0:
        failed = sorted(set(re.findall(r"Error in rule (\w+):", log.read_text(encoding="utf-8").rsplit("===== snakemake", 1)[-1])))
    return Attempt(time.monotonic() - start, rc, killed, failed)


def unlock(snakemake: str, cwd: Path, args: list[str], env: dict[str, str]) -> None:
    """What a user does after a killed run: release the lock the dead Snakemake left."""
    subprocess.run([snakemake, "--unlock", *args], cwd=cwd, env=env, capture_output=True, check=False)


def run_until_complete(snakemake: str, cwd: Path, args: list[str], env: dict[str, str], rng: random.Random, kills: int,
                       kill_window: tuple[float, float], log: Path, max_attempts: int = 30) -> list[Attempt]:
    """Run until Snakemake finishes with exit 0: the first ``kills`` attempts are killed after a random time in
    ``kill_window`` (seconds) unless they end first; every failed or killed attempt is followed by
    ``--unlock`` and a rerun."""
    attempts: list[Attempt] = []
    killed = 0
    while True:
        kill_after = rng.uniform(*kill_window) if killed < kills else None
        attempt = run_once(snakemake, cwd, args, env, kill_after, log)
        attempts.append(attempt)
        killed += attempt.killed
        if attempt.returncode == 0 and not attempt.killed:
            return attempts
        if len(attempts) >= max_attempts:
            raise RuntimeError(f"the chaos run did not complete in {max_attempts} attempts (see {log})")
        unlock(snakemake, cwd, args, env)


def repaid(clean: Counter, chaos: Counter) -> Counter:
    """Per service: the answers the chaos run got more often than the clean run got the same request."""
    out: Counter = Counter()
    for key, n in chaos.items():
        extra = n - clean.get(key, 0)
        if extra > 0:
            out[key.split(" ", 1)[0]] += extra
    return out


def by_service(counts: Counter) -> Iterator[tuple[str, int]]:
    out: Counter = Counter()
    for key, n in counts.items():
        out[key.split(" ", 1)[0] if isinstance(key, str) else key[0]] += n
    return iter(sorted(out.items()))


@dataclass
class ChaosResult:
    clean_seconds: float
    chaos_attempts: list[Attempt]
    faults: Counter
    requests_clean: int
    requests_chaos: int
    answered_clean: Counter
    answered_chaos: Counter
    same: list[str]
    volatile: list[str]
    differ: list[str]

    @property
    def kills(self) -> int:
        return sum(a.killed for a in self.chaos_attempts)

    @property
    def failed_runs(self) -> int:
        return sum(1 for a in self.chaos_attempts if not a.killed and a.returncode != 0)

    @property
    def repaid(self) -> Counter:
        return repaid(self.answered_clean, self.answered_chaos)

    def summary(self) -> dict[str, Any]:
        faults: Counter = Counter()
        for (service, kind), n in self.faults.items():
            faults[kind] += n
        return {
            "clean_run_s": round(self.clean_seconds, 1),
            "chaos_run_s": round(sum(a.seconds for a in self.chaos_attempts), 1),
            "requests": {"clean": self.requests_clean, "chaos": self.requests_chaos},
            "faults": sum(self.faults.values()), "faults_by_kind": dict(sorted(faults.items())),
            "faults_by_service": dict(by_service(self.faults)),
            "kills": self.kills, "failed_runs": self.failed_runs, "reruns": len(self.chaos_attempts) - 1,
            "failed_rules": sorted({r for a in self.chaos_attempts for r in a.failed_jobs}),
            "answers": {"clean": sum(self.answered_clean.values()), "chaos": sum(self.answered_chaos.values())},
            "calls_repaid": dict(sorted(self.repaid.items())),
            "calls_repaid_first": sorted(k for k, n in self.answered_chaos.items() if n > self.answered_clean.get(k, 0))[:12],
            "files": {"identical": len(self.same), "identical_but_run_statistics": len(self.volatile), "differing": len(self.differ)},
            "differing_files": self.differ,
        }


def workflow_env(root: Path) -> dict[str, str]:
    """The environment of a run in a workflow copy (its library first on PYTHONPATH; the checkout's NLTK data)."""
    env = dict(os.environ)
    if "NLTK_DATA" not in env and (REPO / ".nltk_data").is_dir():
        env["NLTK_DATA"] = str(REPO / ".nltk_data")
    env["PYTHONPATH"] = os.pathsep.join([str(root / "src"), *filter(None, [env.get("PYTHONPATH")])])
    # fake keys: the web search needs one; with NCBI's, PubMed's client may send 10 requests/s instead of 3
    env.update({"SERPER_API_KEY": "chaos-fake-serper-key", "NCBI_API_KEY": "chaos-fake-ncbi-key"})
    return env


def chaos_run(work: Path, seed: int = 0, fault_rate: float = 0.2, kills: int = 3, size: int = 1, cores: int = 2,
              kill_window: tuple[float, float] = (5.0, 40.0), small: bool = False, together: bool = False,
              progress: Callable[[str], None] = lambda s: None) -> ChaosResult:
    """A clean run and a chaos run of the live-shaped workflow in two copies under ``work``, each against its own
    :class:`ChaosWorld` (the clean one without faults), at the same time (``together``) or one after the other;
    the chaos run's results compared with the clean run's, the worlds' addresses aside. Kills come at a random
    moment in ``kill_window`` (seconds after an attempt's start)."""
    import yaml

    from tests.helpers.tiny_models import build_tiny_llama
    from tests.helpers.workflow import WorkflowCopy, snakemake_bin

    work.mkdir(parents=True, exist_ok=True)
    tokenizer = str(build_tiny_llama(work / "tiny-llama"))
    rng = random.Random(seed)
    with ChaosWorld(seed=seed) as clean_world, ChaosWorld(fault_rate=fault_rate, seed=seed) as chaos_world:
        roots = {}
        for name, world in (("clean", clean_world), ("chaos", chaos_world)):
            copy = WorkflowCopy(work / name)
            config = world.config(tokenizer, size=size)
            (copy.root / "config" / "chaos.yaml").write_text(yaml.safe_dump(config, sort_keys=False), encoding="utf-8")
            roots[name] = copy.root
        args = snakemake_command(["config/chaos.yaml"], cores=cores, small=small)
        clean_result: list[Attempt] = []

        def clean_run() -> None:
            clean_result.append(run_once(snakemake_bin(), roots["clean"], args, workflow_env(roots["clean"]), None, work / "clean.log"))

        progress("clean run" + (" and chaos run, side by side" if together else ""))
        thread = threading.Thread(target=clean_run)
        thread.start()
        if not together:
            thread.join()
            progress("chaos run")
        attempts = run_until_complete(snakemake_bin(), roots["chaos"], args, workflow_env(roots["chaos"]), rng, kills, kill_window,
                                      work / "chaos.log")
        thread.join()
        clean = clean_result[0]
        if clean.returncode != 0:
            raise RuntimeError(f"the clean run failed (see {work / 'clean.log'})")
        faults, answered_chaos, requests_chaos = Counter(chaos_world.faults), Counter(chaos_world.answered), chaos_world.requests
        answered_clean, requests_clean = Counter(clean_world.answered), clean_world.requests
        addresses = {clean_world.url: "http://WORLD", chaos_world.url: "http://WORLD"}
        for world in (clean_world, chaos_world):  # the release's cache file is named by a digest of its URL
            addresses[hashlib.sha256(f"{world.url}/release/Datensatz.csv".encode()).hexdigest()[:16]] = "RELEASE-DIGEST"
    same, volatile, differ = compare(roots["clean"] / "results", roots["chaos"] / "results", addresses)
    return ChaosResult(clean.seconds, attempts, faults, requests_clean, requests_chaos, answered_clean, answered_chaos,
                       same, volatile, differ)
