"""The error browser's size and load time at the datasets' real sizes, from a stand-in run.

    python benchmarks/error_browser_bench.py [--claims 750] [--pairs 394] [--repeats 3] [--keep DIR]

A made-up run (tests.helpers.error_browser.stand_in_run, seeded): ``--claims`` HealthFC claims, one article of
``--sentences`` sentences each, ``--models`` × ``--systems`` rows over 5 folds (the pipeline's selected sentence ids,
the oracle's gold sentences, retrieved snippets), and ``--pairs`` CliniFact test pairs (abstracts shared by two
pairs) predicted by four models. For each of three pages (HealthFC only, CliniFact only, both) it prints the page's
size and, opened from a file in headless Chromium (tests.helpers.browser, real time: no virtual time budget), the
time from navigation start to the end of the load event (the page draws before it), the time the reader's first
filter change takes (wrong only), and the time to draw one article's sentences; each the median of ``--repeats``
fresh browser starts. Also the step's own time to build each page.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from medfc.tables.errors import ErrorsOptions, read_embedded, write_error_browser  # noqa: E402
from tests.helpers.browser import probe_page  # noqa: E402
from tests.helpers.error_browser import stand_in_run  # noqa: E402
from tests.helpers.services import chromium_path  # noqa: E402

TIMING_PROBE = r"""
<script id="medfc-probe-script">
window.addEventListener("load", function () {
  setTimeout(function () {
    var out = {errors: []}, nav = performance.getEntriesByType("navigation")[0];
    try {
      out.ready = document.documentElement.getAttribute("data-ready");
      out.dom_content_loaded_ms = nav.domContentLoadedEventEnd;
      out.load_ms = nav.loadEventEnd;
      out.cards = document.querySelectorAll("#list article.item").length;
      out.preds = +document.getElementById("shown-preds").textContent;
      var t0 = performance.now(), box = document.getElementById("f-wrong");
      box.click();
      out.filter_ms = performance.now() - t0;
      out.wrong = +document.getElementById("shown-preds").textContent;
      var details = document.querySelector("#list details.doc");
      t0 = performance.now();
      details.open = true; details.dispatchEvent(new Event("toggle"));
      out.article_ms = performance.now() - t0;
      out.article_sentences = details.querySelectorAll("li").length;
    } catch (e) { out.errors.push(String(e)); }
    var pre = document.createElement("pre");
    pre.id = "medfc-probe"; pre.style.display = "none"; pre.textContent = JSON.stringify(out);
    document.body.appendChild(pre);
  }, 0);
});
</script>
"""

BLANK_PROBE = r"""
<script>
window.addEventListener("load", function () {
  setTimeout(function () {
    var pre = document.createElement("pre");
    pre.id = "medfc-probe";
    pre.textContent = JSON.stringify({load_ms: performance.getEntriesByType("navigation")[0].loadEventEnd});
    document.body.appendChild(pre);
  }, 0);
});
</script>
"""


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--claims", type=int, default=750)
    ap.add_argument("--sentences", type=int, default=45)
    ap.add_argument("--pairs", type=int, default=394)
    ap.add_argument("--models", default="tfidf,minilm,tfidf+minilm")
    ap.add_argument("--systems", default="pipeline,oracle,claims_only,retrieved_web")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--keep", type=Path, help="keep the stand-in run and the pages in this folder")
    args = ap.parse_args()
    chromium = chromium_path()
    if not chromium:
        print("chromium is not installed", file=sys.stderr)
        return 2
    root = args.keep or Path(tempfile.mkdtemp(prefix="error-browser-bench-"))
    try:
        inputs, options = stand_in_run(root / "run", claims=args.claims, sentences=args.sentences, pairs=args.pairs,
                                       models=args.models.split(","), systems=args.systems.split(","))
        pages = {"healthfc": ({k: inputs[k] for k in ("healthfc", "dataset")}, {**options, "clinifact": []}),
                 "clinifact": ({k: inputs[k] for k in ("clinifact", "pairs")}, {**options, "healthfc": []}),
                 "both": (inputs, options)}
        print(f"stand-in run: {args.claims} HealthFC claims ({len(options['healthfc'])} prediction files: "
              f"{len(args.models.split(','))} models x {len(args.systems.split(','))} systems x 5 folds), "
              f"{args.pairs} CliniFact pairs ({len(options['clinifact'])} rows); Chromium {chromium}")
        blank = [probe_page(chromium, "<!DOCTYPE html><html><body><p>blank</p></body></html>", BLANK_PROBE, root / f"probe-blank-{i}",
                            virtual_time_ms=None)["load_ms"] for i in range(args.repeats)]
        print(f"a blank page's load event: {statistics.median(blank):.0f} ms (the browser's own share of the times below)")
        print("| page | predictions | size | build (step) | load event | first filter | one article |")
        print("| --- | --- | --- | --- | --- | --- | --- |")
        for name, (page_inputs, page_options) in pages.items():
            html = root / f"errors_{name}.html"
            t0 = time.perf_counter()
            counts = write_error_browser(page_inputs, {"html": html}, ErrorsOptions.from_mapping(page_options))
            build = time.perf_counter() - t0
            text = html.read_text(encoding="utf-8")
            first = sum(len(row["preds"]) for row in read_embedded(text)["datasets"][0]["rows"])  # the dataset the page opens with
            runs = []
            for i in range(args.repeats):
                out = probe_page(chromium, text, TIMING_PROBE, root / f"probe-{name}-{i}", virtual_time_ms=None)
                assert not out["errors"] and out["ready"] == "1" and out["preds"] == first, out
                runs.append(out)
            med = {k: statistics.median(r[k] for r in runs) for k in ("load_ms", "filter_ms", "article_ms")}
            print(f"| {name} | {counts['predictions']} | {html.stat().st_size / 1e6:.2f} MB | {build:.2f} s | {med['load_ms']:.0f} ms | "
                  f"{med['filter_ms']:.0f} ms | {med['article_ms']:.1f} ms |")
            print(json.dumps({"page": name, "counts": counts, "runs": runs}), file=sys.stderr)
    finally:
        if not args.keep:
            shutil.rmtree(root, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
