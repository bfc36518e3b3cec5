"""Workflow steps of the figures stage (workflow/rules/figures.smk): figures of the experiments' results, each
with its table of numbers and the papers' values beside ours.
"""

from __future__ import annotations

import logging

from medfc.common.io import input_paths, table_stem, write_table
from medfc.common.papers import read_paper_numbers
from medfc.common.stepfiles import StepFiles
from medfc.figures import clinifact
from medfc.tables.options import Fig3Options

log = logging.getLogger(__name__)


def clinifact_fig3(inputs: StepFiles, outputs: StepFiles, options: Fig3Options) -> dict[str, object]:
    """``predictions`` (one per model), the ``test`` split, the optional ``studies`` (disease classes)
    and ``papers`` → ``png`` + ``pdf`` (the figure) and ``csv``/``md``/``tex`` (its numbers)."""
    from medfc.common.plots import WIDTHS  # matplotlib: imported by this step only

    predictions = input_paths(inputs, "predictions")
    papers = read_paper_numbers(inputs["papers"])
    df, notes = clinifact.fig3_table(predictions, options.entries, inputs["test"], inputs.get("studies"),
                                     options.excluded_branches, clinifact.paper_fig3(papers))
    notes = [*options.notes, *notes]
    for note in options.notes:
        log.warning("clinifact_fig3: %s", note)
    clinifact.plot_fig3(df, outputs["png"], notes, clinifact.legend_names(options.entries, papers))
    stem = table_stem(outputs)
    caption = (f"CliniFact Fig. 3 data: per class, per test type, per disease class (%); n = 0: no test pair in the group. "
               f"The figure is drawn {WIDTHS[clinifact.FIGURE_WIDTH]} in wide (text width).") + ("" if not notes else " " + " ".join(notes))
    write_table(df, stem, caption=caption)
    log.info("clinifact_fig3: %d rows%s", len(df), "; " + "; ".join(notes) if notes else "")
    return {"rows": len(df), "notes": notes}
