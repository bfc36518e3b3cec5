"""The options of the table steps (:mod:`medfc.tables.steps`: the experiments' tables, the example tables and
CliniFact Fig. 3), in a light module (no pandas) the plan reads when Snakemake plans the DAG;
:data:`TABLE_OPTIONS` is each table's class (the ``table`` rule's ``{table}``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from medfc.common.options import Options


@dataclass(frozen=True)
class TableOptions(Options):
    """The runs behind the table, one entry per input file, and what their numbers are
    (``experiments.scale``: smoke, cpu or paper)."""

    entries: tuple[dict[str, Any], ...]
    scale: Literal["smoke", "cpu", "paper"]


@dataclass(frozen=True)
class DatasetTableOptions(Options):
    """A declared dataset's table: the dataset, its name in the caption, its runs and their scale."""

    dataset: str
    title: str
    entries: tuple[dict[str, Any], ...]
    scale: Literal["smoke", "cpu", "paper"]


@dataclass(frozen=True)
class SignificanceOptions(Options):
    """The runs, the configured pairs of systems and the ``scoring`` keys of the tests."""

    entries: tuple[dict[str, Any], ...]
    scale: Literal["smoke", "cpu", "paper"]
    comparisons: tuple[tuple[str, str], ...]
    metric: Literal["ff1", "tf1", "macro_f1", "accuracy"]
    n_resamples: int
    seed: int
    abstain: Literal["drop", "as_false", "as_true"]


@dataclass(frozen=True)
class TimesOptions(Options):
    """The runs behind the table, their scale, and each ensemble's members (whose jobs its row counts too)."""

    entries: tuple[dict[str, Any], ...]
    scale: Literal["smoke", "cpu", "paper"]
    ensembles: dict[str, Any]


@dataclass(frozen=True)
class DocumentOptions(Options):
    """The run's ``main.tex`` (:mod:`medfc.tables.document`): its title."""

    title: str


@dataclass(frozen=True)
class ExampleClaimsOptions(Options):
    """HealthFC Table 1: the language of the claims and snippets, and the snippet's length in words."""

    lang: Literal["en", "de"]
    words: int


@dataclass(frozen=True)
class WrongClaimsOptions(Options):
    """HealthFC Table 4: its runs (one entry per fold), the wrong claims shown, the evidence's cut (words), scale."""

    entries: tuple[dict[str, Any], ...]
    shown: int
    words: int
    scale: Literal["smoke", "cpu", "paper"]


@dataclass(frozen=True)
class ExamplePairsOptions(Options):
    """CliniFact Tables 5 and 7: the split the example pairs come from and where an abstract is cut (words)."""

    split: Literal["train", "validation", "test"]
    words: int


@dataclass(frozen=True)
class Fig3Options(Options):
    """The CliniFact runs compared (one entry per ``predictions`` file: ``model``, ``system`` and, for a run shown
    in place of another, ``stands_for``), ``clinifact.stats.excluded_branches`` and the plan's notes on the pair."""

    entries: tuple[dict[str, Any], ...]
    excluded_branches: tuple[str, ...]
    notes: tuple[str, ...]


# each table's options class (the ``table`` rule runs ``tables.steps:<table>``)
TABLE_OPTIONS: dict[str, type[Options]] = {"healthfc_table3": TableOptions, "healthfc_table3_extra": TableOptions, "healthfc_table5": TableOptions,
                                           "healthfc_table5_extra": TableOptions, "healthfc_open_domain": TableOptions,
                                           "healthfc_significance": SignificanceOptions, "clinifact_table8": TableOptions,
                                           "clinifact_table8_extra": TableOptions, "clinifact_significance": TableOptions,
                                           "healthfc_times": TimesOptions, "clinifact_times": TimesOptions}
