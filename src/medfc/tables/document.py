"""The run's ``main.tex``: one LaTeX document that inputs every table and includes every figure the run made, each
figure in a column when its PDF fits one, else across the page."""

from __future__ import annotations

import os
import re
from pathlib import Path

from medfc.common import latex
from medfc.common.io import atomic_write, input_paths
from medfc.common.stepfiles import StepFiles
from medfc.tables.options import DocumentOptions

BREAK = r"\allowbreak{}"  # where a file's path may break in a caption
_MEDIABOX = re.compile(rb"/MediaBox\s*\[\s*(-?[\d.]+)\s+(-?[\d.]+)\s+(-?[\d.]+)\s+(-?[\d.]+)\s*\]")


def pdf_width_pt(path: str | os.PathLike) -> float:
    """The width of a PDF's first page in points (its first MediaBox), 0 when none is found."""
    m = _MEDIABOX.search(Path(path).read_bytes())
    return float(m.group(3)) - float(m.group(1)) if m else 0.0


# the papers' names of the workflow's figures (by file name); another figure is named by its data table's caption or its file
FIGURE_TITLES = {"fig1_claims_per_year": "HealthFC Fig. 1: claims and articles per year.",
                 "fig2_top_topics": "HealthFC Fig. 2: the ten most frequent topics (a claim has several).",
                 "fig3_level_by_verdict": "HealthFC Fig. 3: level of evidence by verdict.",
                 "fig2_disease_classes": "CliniFact Fig. 2: claim-evidence pairs per disease class (a pair counts in each of its classes).",
                 "figS1_years": "CliniFact Fig. S1: publications per year.",
                 "clinifact_fig3": "CliniFact Fig. 3: per class, per statistical test type and per disease class, on the test split.",
                 "fig21_calls": "MedSNIP Fig. 21: verifier calls against false-class F1, per mode."}


def _caption_of(figure: Path) -> str:
    """The figure's title, else its data table's caption (its Markdown's first paragraph), else its file's name."""
    if figure.stem in FIGURE_TITLES:
        return FIGURE_TITLES[figure.stem]
    md = figure.with_suffix(".md")
    if md.exists():
        first = md.read_text(encoding="utf-8").split("\n\n", 1)[0].strip()
        if first and not first.startswith("|"):
            return first
    return figure.stem.replace("_", " ")


def figure_block(figure: Path, rel: str) -> str:
    """One figure's float: in a column when it fits one, else across the page."""
    width = pdf_width_pt(figure)
    env = "figure" if 0 < width <= latex.COLUMN_PT + 1 else "figure*"
    size = "" if 0 < width <= (latex.COLUMN_PT + 1 if env == "figure" else latex.TEXT_PT) else r"[width=\linewidth]"
    return "\n".join([rf"\begin{{{env}}}[tbp]", r"\centering", rf"\includegraphics{size}{{{rel}}}",
                      rf"\caption{{{latex.escape(_caption_of(figure))} File: \texttt{{{latex.escape(rel).replace('/', '/' + BREAK)}}}}}",
                      rf"\end{{{env}}}"])


def main_document(tables: list[str], figures: list[str], folder: str | os.PathLike, title: str) -> str:
    """``main.tex`` for the files of a run, their paths relative to ``folder`` (where main.tex lies)."""
    def rel(p: str) -> str:
        return Path(os.path.relpath(p, folder)).as_posix()

    # each part's heading across the page, above its floats (\twocolumn[...] starts a page with it)
    parts = [latex.preamble(), r"\captionsetup[figure]{justification=raggedright,singlelinecheck=false}", r"\begin{document}",
             rf"\twocolumn[\section*{{{latex.escape(title)}}}\subsection*{{Tables}}]"]
    parts += [rf"\input{{{rel(t)[:-len('.tex')] if t.endswith('.tex') else rel(t)}}}" for t in tables]
    parts += [r"\twocolumn[\subsection*{Figures}]"]
    parts += [figure_block(Path(f), rel(f)) for f in figures]
    parts += [r"\end{document}", ""]
    return "\n".join(parts)


def main_tex(inputs: StepFiles, outputs: StepFiles, options: DocumentOptions) -> dict[str, int]:
    """Write ``outputs.tex`` inputting every ``tables`` fragment and including every ``figures`` PDF."""
    tables, figures = input_paths(inputs, "tables"), input_paths(inputs, "figures")
    out = Path(outputs["tex"])
    atomic_write(out, main_document(tables, figures, out.parent, options.title))
    return {"tables": len(tables), "figures": len(figures)}
