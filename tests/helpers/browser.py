"""Headless Chromium for the tests that open a page the workflow writes (the Snakemake report, the error browser):
the command line they share, and a probe: a small script appended to a copy of the page that drives it as a user
would and writes what it saw as JSON into ``<pre id="medfc-probe">``, read back from Chromium's ``--dump-dom``.
Offline: every host lookup fails, so a page that loads anything from the network shows it."""

from __future__ import annotations

import html
import json
import re
import subprocess
from pathlib import Path

WINDOW = (1400, 1000)


def chromium_run(chromium: str, profile_dir: Path, *args: str, timeout: int = 180, window: tuple[int, int] = WINDOW,
                 virtual_time_ms: int | None = 20000) -> subprocess.CompletedProcess:
    """Chromium headless, with a profile of its own, no network and no background services; ``args`` say what it
    does (``--dump-dom URL``, ``--screenshot=FILE URL``); ``virtual_time_ms``: how much virtual time the page's timers
    get before the dump (None: real time, the dump after the load event)."""
    cmd = [
        chromium, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync", "--disable-quic",
        "--disable-dev-shm-usage", "--hide-scrollbars", "--force-device-scale-factor=1",
        "--host-resolver-rules=MAP * ~NOTFOUND",  # a self-contained page needs no network: any host lookup fails
        f"--user-data-dir={profile_dir}", f"--window-size={window[0]},{window[1]}",
        *([f"--virtual-time-budget={virtual_time_ms}"] if virtual_time_ms is not None else []), *args,
    ]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)


def probe_page(chromium: str, page: str, probe_script: str, workdir: Path, **run: object) -> dict:
    """``page`` (an HTML text) with ``probe_script`` (a ``<script>`` element) appended to its body, opened from a file
    in ``workdir`` and dumped: the JSON the probe put into ``<pre id="medfc-probe">``."""
    workdir.mkdir(parents=True, exist_ok=True)
    i = page.rindex("</body>")
    probed = workdir / "probe.html"
    probed.write_text(page[:i] + probe_script + page[i:], encoding="utf-8")
    dom = chromium_run(chromium, workdir / "profile", "--dump-dom", probed.as_uri(), **run)  # type: ignore[arg-type]
    m = re.search(r'<pre id="medfc-probe"[^>]*>(.*?)</pre>', dom.stdout, re.S)
    assert m, f"the probe did not finish in Chromium (rc {dom.returncode}):\n{dom.stdout[-2000:]}\n{dom.stderr[-3000:]}"
    return json.loads(html.unescape(m.group(1)))
