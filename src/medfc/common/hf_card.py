"""Hugging Face dataset-card front matter (licence, task, languages, size, and each split's file as
``configs: [{config_name, data_files: [{split, path}]}]``); https://huggingface.co/docs/hub/datasets-cards."""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from pathlib import Path

# the Hub's size_categories buckets (upper bounds, exclusive)
_SIZES = ((1_000, "n<1K"), (10_000, "1K<n<10K"), (100_000, "10K<n<100K"), (1_000_000, "100K<n<1M"), (10_000_000, "1M<n<10M"))


def size_category(n: int) -> str:
    """The Hub's ``size_categories`` bucket of ``n`` rows."""
    return next((name for bound, name in _SIZES if n < bound), "n>10M")


def relative(path: str | os.PathLike, folder: str | os.PathLike) -> str:
    """A path relative to the card's folder, with forward slashes (as the Hub reads them)."""
    return Path(os.path.relpath(Path(path).resolve(), Path(folder).resolve())).as_posix()


def relative_files(card: str | os.PathLike, files: Mapping[str, str | os.PathLike]) -> dict[str, str]:
    """Split → its file's path relative to the card's folder."""
    return {split: relative(path, Path(card).resolve().parent) for split, path in files.items()}


def _yaml(value: object) -> str:
    return json.dumps(value, ensure_ascii=False)  # a JSON scalar is a YAML scalar (quoted strings stay strings)


def front_matter(*, license: str, languages: Sequence[str], task_categories: Sequence[str], n_rows: int, data_files: Mapping[str, str],
                 pretty_name: str, task_ids: Sequence[str] = (), tags: Sequence[str] = (),
                 extra_configs: Mapping[str, Mapping[str, str]] | None = None) -> str:
    """The ``---``-fenced YAML block of a dataset card (ends with a blank line): ``data_files`` are the splits of
    the ``default`` config; ``extra_configs`` (name → split files) follow it."""
    configs = {"default": data_files, **(extra_configs or {})}
    lists = {"language": languages, "task_categories": task_categories, "task_ids": task_ids, "tags": tags}
    lines = ["---", f"pretty_name: {_yaml(pretty_name)}", f"license: {_yaml(license)}"]
    for key, values in lists.items():  # a list without values is left out
        lines += [f"{key}:", *(f"- {_yaml(x)}" for x in values)] if values else []
    lines += ["size_categories:", f"- {_yaml(size_category(n_rows))}", "configs:"]
    for name, files in configs.items():
        lines += [f"- config_name: {_yaml(name)}", "  data_files:"]
        for split, path in files.items():
            lines += [f"  - split: {_yaml(split)}", f"    path: {_yaml(path)}"]
    return "\n".join([*lines, "---", "", ""])
