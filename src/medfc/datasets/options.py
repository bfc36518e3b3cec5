"""The options of a declared dataset's import, in a light module (the plan builds them:
:meth:`medfc.plan.datasets.DatasetsPlan.dataset_import`)."""

from __future__ import annotations

from dataclasses import dataclass

from medfc.common.options import Options


@dataclass(frozen=True)
class SourceOptions(Options):
    """``datasets.<name>.source``: exactly one of ``path``, ``url``, ``hf`` (with ``revision``, and ``config``)."""

    path: str | None
    url: str | None
    hf: str | None
    config: str | None
    revision: str | None
    files: dict[str, str]  # the data's split name → its file, relative to path, url or the hf config folder
    sha256: dict[str, str]  # file key (a key of files, "data" for a single file) → its pinned SHA-256


@dataclass(frozen=True)
class FieldsOptions(Options):
    """``datasets.<name>.fields``: the data's field holding each part of a row (id and title: None when it has none)."""

    id: str | None
    claim: str
    evidence: str
    title: str | None
    label: str


@dataclass(frozen=True)
class SplitsOptions(Options):
    """``datasets.<name>.splits``: the shares of the splits made, their seed, and the data's split names renamed."""

    validation_size: float
    test_size: float
    seed: int
    names: dict[str, str]


@dataclass(frozen=True)
class ImportOptions(Options):
    """``datasets.<name>`` (less its models and training keys), its name and title, and ``cache_dir`` (downloads
    go to ``<cache_dir>/datasets``)."""

    name: str
    title: str
    source: SourceOptions
    fields: FieldsOptions
    labels: dict[str, str | None]  # raw label value as text → class (None: the row is dropped); the classes in this order
    splits: SplitsOptions
    card_notes: str
    cache_dir: str

    @property
    def key(self) -> str:
        """The entry's key in the config (``datasets.<name>``), for the messages."""
        return f"datasets.{self.name}"

    @property
    def classes(self) -> list[str]:
        """The classes, in the order ``labels`` first names them."""
        return list(dict.fromkeys(c for c in self.labels.values() if c is not None))
