"""`snakemake --report report.html` for the tiny config, opened in a real headless Chromium.

Snakemake 9's report is one self-contained HTML file (React app; every result embedded as a data: URI;
no network). It has no URL routing (no hash or query parameters: the view lives in the React state of
the global `app`), so the test drives the real UI: it appends a small probe script to a copy of the
report that clicks the navbar entries (category → subcategory → the result's eye button) as a user
would, and records what the page shows in a <pre id="medfc-probe">. Chromium then
- dumps the DOM (--dump-dom after --virtual-time-budget): every result of the report must be listed
  in the results table of its category, and the figure clicked last must be an <img> that decoded
  (naturalWidth > 0) with no JS error;
- takes a screenshot of the same page: the area where the figure is drawn must not be blank (many
  distinct colours, enough non-white pixels).
Needs Chromium (`sudo bash scripts/ci/services.sh start` installs it, as .ci/run does); without it the
browser tests skip and say so (fail under MEDFC_REQUIRE_SERVICES=1). The test never installs anything.
"""

from __future__ import annotations

import html
import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.helpers.browser import WINDOW, chromium_run


pytestmark = pytest.mark.workflow

IMAGE_TYPES = ("image/png", "image/jpeg", "image/svg+xml")


def _browser(chromium: str, profile_dir: Path, *args: str, timeout: int = 180) -> subprocess.CompletedProcess:
    return chromium_run(chromium, profile_dir, *args, timeout=timeout, window=WINDOW)


def _js_var(page: str, name: str) -> dict:
    m = re.search(rf"var {name} = (\{{.*?\}});\s*\n", page, re.S)
    assert m, f"no `var {name} = ...` in the report"
    return json.loads(m.group(1))


# Clicks through the real navbar like a user; reads only the report's own `categories`/`results` globals
# to know what to look for. Records into <pre id="medfc-probe"> and sets the title when done.
PROBE = r"""
<script id="medfc-probe-script">
(function () {
  const out = { errors: [], steps: [], listed: {}, figure: null, table: null, done: false };
  window.addEventListener("error", (e) => out.errors.push(String(e.message)));
  const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
  const navLinks = () => [...document.querySelectorAll("nav a")];
  function click(label) {
    const a = navLinks().find((el) => el.textContent.trim() === label);
    out.steps.push((a ? "clicked " : "MISSING ") + label);
    if (a) a.click();
    return !!a;
  }
  async function home() {
    const a = document.querySelector("nav ol a"); // first breadcrumb: the home icon
    if (a) { a.click(); out.steps.push("home"); } else { out.steps.push("MISSING home"); }
    await sleep(300);
  }
  async function open(cat, sub) {
    await home();
    // one category: the menu shows it as "Results"; several: one entry per category name
    click(Object.keys(categories).length > 1 ? cat : "Results"); await sleep(300);
    if (Object.keys(categories[cat]).length > 1) { click(sub); await sleep(300); }
  }
  const rows = () => [...document.querySelectorAll("tbody tr")];
  async function openByEye(path) {  // its category's list, then the eye of its row
    const [cat, sub] = Object.entries(categories).flatMap(([c, subs]) =>
      Object.entries(subs).filter(([, ps]) => ps.includes(path)).map(([s]) => [c, s]))[0];
    await open(cat, sub);
    const row = rows().find((tr) => tr.textContent.includes(path));
    const eye = row && row.querySelector("a[type=button]");
    out.steps.push(eye ? "clicked eye of " + path : "MISSING eye of " + path);
    if (eye) eye.click();
    await sleep(1500);
  }
  async function main() {
    await sleep(1000);
    for (const cat of Object.keys(categories)) {
      for (const sub of Object.keys(categories[cat])) {
        await open(cat, sub);
        out.listed[cat + " / " + sub] = rows().map((tr) => tr.textContent.trim());
      }
    }
    const figs = Object.keys(results).filter((p) => IMAGE_TYPES.includes(results[p].mime_type)).sort();
    if (figs.length) {
      const path = figs[0];
      await openByEye(path);
      const img = [...document.querySelectorAll("img")].find((i) => i.src.startsWith("data:image") && i.getAttribute("src") === results[path].data_uri);
      if (img) {
        const r = img.getBoundingClientRect();
        out.figure = { path, complete: img.complete, naturalWidth: img.naturalWidth, naturalHeight: img.naturalHeight,
                       rect: [Math.round(r.left), Math.round(r.top), Math.round(r.right), Math.round(r.bottom)] };
      } else {
        out.figure = { path, missing: true };
      }
    }
    // a paper's table: its eye opens the HTML page in the report's viewer (an iframe of its data URI)
    const table = Object.keys(results).find((p) => p.endsWith("/healthfc_table3.html"));
    if (table) {
      await openByEye(table);
      const frame = [...document.querySelectorAll("iframe")].find((f) => f.getAttribute("src") === results[table].data_uri);
      if (frame) {
        const r = frame.getBoundingClientRect();
        out.table = { path: table, rect: [Math.round(r.left), Math.round(r.top), Math.round(r.right), Math.round(r.bottom)] };
      } else {
        out.table = { path: table, missing: true, frames: document.querySelectorAll("iframe").length };
      }
    }
    out.done = true;
    const pre = document.createElement("pre");
    pre.id = "medfc-probe";
    pre.style.display = "none";
    pre.textContent = JSON.stringify(out);
    document.body.appendChild(pre);
    document.title = "medfc-probe-done";
  }
  window.addEventListener("load", () => main().catch((e) => { out.errors.push("probe: " + e); }));
})();
</script>
""".replace("IMAGE_TYPES", json.dumps(list(IMAGE_TYPES)))


@pytest.fixture(scope="module")
def report(full_demo_run):
    """The report of the full demo run: both datasets and the experiments."""
    full_demo_run.run("--report", "report.html", *full_demo_run.args[2:])
    return full_demo_run.path("report.html")


@pytest.fixture(scope="module")
def probed(report, chromium, tmp_path_factory):
    page = report.read_text(encoding="utf-8")
    tmp = tmp_path_factory.mktemp("browser")
    probe_html = tmp / "probe.html"
    i = page.rindex("</body>")
    probe_html.write_text(page[:i] + PROBE + page[i:], encoding="utf-8")
    dom = _browser(chromium, tmp / "profile-dom", "--dump-dom", probe_html.as_uri())
    m = re.search(r'<pre id="medfc-probe"[^>]*>(.*?)</pre>', dom.stdout, re.S)
    assert m, f"the probe did not finish in Chromium (rc {dom.returncode}):\n{dom.stdout[-2000:]}\n{dom.stderr[-3000:]}"
    shot = tmp / "report.png"
    cap = _browser(chromium, tmp / "profile-shot", f"--screenshot={shot}", probe_html.as_uri())
    assert shot.exists(), f"no screenshot (rc {cap.returncode}):\n{cap.stderr[-3000:]}"
    keep = os.environ.get("MEDFC_REPORT_SCREENSHOT")  # e.g. for looking at it by hand
    if keep:
        shutil.copy(shot, keep)
    return {
        "page": page,
        "probe": json.loads(html.unescape(m.group(1))),
        "screenshot": shot,
        "results": _js_var(page, "results"),
        "categories": _js_var(page, "categories"),
        "root": report.parent,
        "report": report,
    }


def test_report_is_one_self_contained_html_file(report):
    page = report.read_text(encoding="utf-8")
    assert page.lstrip().lower().startswith("<!doctype html>")
    external = re.findall(r"<(?:script|link|img)[^>]+(?:src|href)=[\"'](?:https?:)?//[^\"']+", page)
    assert not external, f"the report loads from the network: {external[:5]}"
    results = _js_var(page, "results")
    assert results, "the report lists no results"
    assert all(r["data_uri"].startswith("data:") for r in results.values())


def test_every_result_is_listed_in_its_category(probed):
    probe, results, categories = probed["probe"], probed["results"], probed["categories"]
    assert probe["done"] and not probe["errors"], probe
    assert not [s for s in probe["steps"] if s.startswith("MISSING")], probe["steps"]
    # the embedded results are the workflow's report() files, all present in the run
    assert sorted(results) == sorted(p for subs in categories.values() for ps in subs.values() for p in ps)
    assert all((probed["root"] / p).is_file() for p in results), [p for p in results if not (probed["root"] / p).is_file()]
    for cat, subs in categories.items():
        for sub, paths in subs.items():
            listed = probe["listed"][f"{cat} / {sub}"]
            for path in paths:
                assert any(path in row for row in listed), f"{path} not listed under {cat} / {sub}: {listed}"
            assert len(listed) == len(paths), (cat, sub, listed)


def test_the_report_covers_both_datasets_and_the_experiments(probed):
    categories = probed["categories"]
    assert {"HealthFC", "CliniFact", "Experiments"} <= set(categories), sorted(categories)
    paths = set(probed["results"])
    for expected in ("results/healthfc/stats/table2.csv", "results/healthfc/stats/fig3_level_by_verdict.png",
                     "results/clinifact/stats/table6_labels.csv", "results/clinifact/stats/fig2_disease_classes.png"):
        assert expected in paths, f"{expected} is not in the report"
    assert any(p.startswith("results/tables/") for p in paths) and any(p.startswith("results/figures/") for p in paths)
    # the papers' tables as HTML pages the report shows (a CSV it only links)
    for table in ("healthfc_table3", "clinifact_table8"):
        assert probed["results"][f"results/tables/{table}.html"]["mime_type"] == "text/html", sorted(paths)
    # every entry carries its caption (which names the config values that made it)
    for path, res in probed["results"].items():
        assert res.get("caption"), f"{path} has no caption"


def test_a_figure_opens_and_is_not_blank(probed):
    from PIL import Image
    import numpy as np

    probe = probed["probe"]
    figures = sorted(p for p, r in probed["results"].items() if r["mime_type"] in IMAGE_TYPES)
    assert figures, f"the full demo run puts no figure in the report (results: {sorted(probed['results'])})"
    fig = probe["figure"]
    assert fig and not fig.get("missing"), f"the figure did not open: {probe['steps']}"
    assert fig["path"] == figures[0]
    assert fig["complete"] and fig["naturalWidth"] > 0, fig
    left, top, right, bottom = fig["rect"]
    assert right - left >= 50 and bottom - top >= 50, fig
    assert right <= WINDOW[0] and top < WINDOW[1], f"figure drawn outside the window: {fig}"

    shot = np.asarray(Image.open(probed["screenshot"]).convert("RGB"))
    crop = shot[max(top, 0):min(bottom, shot.shape[0]), max(left, 0):min(right, shot.shape[1])]
    colours = len(np.unique(crop.reshape(-1, 3), axis=0))
    non_white = float((crop.min(axis=2) < 235).mean())
    print(f"\nfigure {fig['path']}: drawn at {fig['rect']} ({fig['naturalWidth']}x{fig['naturalHeight']} px), "
          f"{colours} distinct colours, {non_white:.1%} non-white; screenshot {probed['screenshot']}")
    assert colours >= 16, f"the figure area has only {colours} colours"
    assert 0.01 <= non_white <= 0.99, f"the figure area is {non_white:.1%} non-white"
    # and the whole page is not blank either (navbar, figure)
    assert len(np.unique(shot.reshape(-1, 3), axis=0)) >= 32


def test_table_3_opens_as_a_table_with_its_rows(probed):
    """HealthFC Table 3 opens in the report's viewer (its eye, an iframe drawn in the window) as an HTML table whose
    rows are the CSV's, the paper's rows among them."""
    import base64
    import csv
    import io
    import urllib.parse

    table = probed["probe"]["table"]
    assert table and not table.get("missing"), f"Table 3 did not open: {probed['probe']['steps']} {table}"
    left, top, right, bottom = table["rect"]
    assert right - left >= 200 and bottom - top >= 100 and top < WINDOW[1], table
    head, data = probed["results"][table["path"]]["data_uri"].split(",", 1)
    page = base64.b64decode(data).decode("utf-8") if head.endswith(";base64") else urllib.parse.unquote(data)
    csv_rows = list(csv.reader(io.StringIO((probed["root"] / "results/tables/healthfc_table3.csv").read_text(encoding="utf-8"))))
    assert page.count("<tr") == len(csv_rows) and "paper" in page, page[:500]
