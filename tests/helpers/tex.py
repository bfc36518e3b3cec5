"""Compiling the workflow's LaTeX with a real TeX engine (pdflatex from Debian's TeX Live), never installed here:
`sudo bash scripts/ci/services.sh start` installs it, as .ci/run does. Without it the tests that compile skip
naming that command, and fail under MEDFC_REQUIRE_SERVICES=1 (:func:`tests.helpers.services.unavailable`)."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

from medfc.common import latex
from tests.helpers.services import unavailable

TEX_HINT = ("install TeX Live with `sudo bash scripts/ci/services.sh start` (Debian's texlive-latex-base, "
            "texlive-latex-recommended, texlive-latex-extra, texlive-fonts-recommended)")
OVERFULL = re.compile(r"Overfull \\[hv]box \((\d+(?:\.\d+)?)pt too (?:wide|high)\)")


def pdflatex() -> str:
    path = shutil.which("pdflatex")
    if not path:
        unavailable("pdflatex is not installed", TEX_HINT)
    return str(path)


def compile_document(tex: Path, timeout: int = 120) -> str:
    """pdflatex ``tex`` in its folder (twice: references); fail with the log's first error. Returns the log."""
    exe = pdflatex()
    for _ in range(2):
        proc = subprocess.run([exe, "-interaction=nonstopmode", "-halt-on-error", "-file-line-error", tex.name],
                              cwd=tex.parent, capture_output=True, text=True, timeout=timeout)
        log = tex.with_suffix(".log").read_text(encoding="latin-1")
        if proc.returncode != 0:
            errors = [line for line in log.splitlines() if line.startswith("!") or ":" in line and " error" in line.lower()]
            raise AssertionError(f"pdflatex {tex} failed ({proc.returncode}): {errors[:5] or log[-2000:]}")
    return log


def compile_fragments(fragments: list[Path], workdir: Path, name: str = "fragments.tex") -> str:
    """Every fragment ``\\input`` into one document under the workflow's own preamble; the log."""
    workdir.mkdir(parents=True, exist_ok=True)
    body = "\n".join(rf"\input{{{f.resolve().with_suffix('').as_posix()}}}" + "\n\\clearpage" for f in fragments)
    doc = workdir / name
    doc.write_text(latex.preamble() + "\\begin{document}\n" + body + "\n\\end{document}\n", encoding="utf-8")
    return compile_document(doc)


def overfull_boxes(log: str) -> list[float]:
    """The points by which each overfull box of a log sticks out."""
    return [float(m.group(1)) for m in OVERFULL.finditer(log)]


def tex_problems(root: Path, workdir: Path, limit_pt: float = 1.0) -> list[str]:
    """Each ``.tex`` under ``root`` (a run's results; its ``main.tex`` aside) compiled as a document of its own under the
    workflow's preamble: ``"<path>: <what failed>"`` for each that does not compile or has an overfull box over
    ``limit_pt``; empty when every one compiles and fits."""
    problems = []
    for frag in sorted(p for p in root.rglob("*.tex") if p.name != "main.tex"):
        name = frag.relative_to(root).as_posix()
        try:
            log = compile_fragments([frag], workdir / name.replace("/", "__"))
        except AssertionError as exc:
            problems.append(f"{name}: {exc}")
            continue
        wide = [b for b in overfull_boxes(log) if b > limit_pt]
        if wide:
            problems.append(f"{name}: overfull boxes of {wide} pt")
    return problems
