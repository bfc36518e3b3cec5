"""The run's main.tex: one document that inputs every table and includes every figure of the demo, compiled by a
real pdflatex without an error or an overfull box over 1 pt (tests/helpers/tex.py: skips naming the install
command without TeX Live, fails under MEDFC_REQUIRE_SERVICES=1)."""

from __future__ import annotations

import re
import shutil

import pytest

from tests.helpers.tex import compile_document, overfull_boxes

pytestmark = pytest.mark.workflow


def test_main_tex_inputs_every_table_and_figure_and_compiles(full_demo_run, tmp_path):
    results = full_demo_run.path("results")
    main = (results / "main.tex").read_text(encoding="utf-8")
    inputs = set(re.findall(r"\\input\{([^}]+)\}", main))
    graphics = set(re.findall(r"\\includegraphics(?:\[[^]]*\])?\{([^}]+)\}", main))
    tables = {p.relative_to(results).with_suffix("").as_posix() for p in results.glob("tables/*.tex")}
    tables |= {p.relative_to(results).with_suffix("").as_posix() for p in results.glob("*/stats/table*.tex")}
    figures = {p.relative_to(results).with_suffix(".pdf").as_posix() for p in results.rglob("*.png")
               if not p.relative_to(results).as_posix().startswith(("experiments/", "final/"))}
    assert tables - {"tables/clinifact_fig3"} <= inputs  # Fig. 3's data table stands beside its figure
    assert figures == graphics
    assert "tables/healthfc_table3" in inputs and "figures/clinifact_fig3.pdf" in graphics
    copy = tmp_path / "results"
    shutil.copytree(results, copy, ignore=shutil.ignore_patterns("experiments", "final", "cache", "logs", "timings"))
    log = compile_document(copy / "main.tex")
    assert [b for b in overfull_boxes(log) if b > 1.0] == []
    assert (copy / "main.pdf").stat().st_size > 10_000
