"""The workflow step of a dataset declared by ``datasets.<name>`` (rule ``dataset_import`` in workflow/rules/datasets.smk)."""

from __future__ import annotations

import logging
from medfc.common.io import write_json, write_jsonl
from medfc.common.pinning import record_release
from medfc.common.report import SkipReport
from medfc.common.stepfiles import StepFiles
from medfc.datasets import card, records, sources, tables
from medfc.datasets.options import ImportOptions

log = logging.getLogger(__name__)


def import_dataset(inputs: StepFiles, outputs: StepFiles, options: ImportOptions) -> dict[str, int]:
    """The source's data files (downloaded once, checked against their SHA-256 pins: :func:`sources.fetch`) →
    ``train``/``validation``/``test`` (JSONL), the card folder (``readme``, ``source_<split>``, ``bigbio_<split>``) and
    ``report``. ``inputs``: a local source's files (only so that editing one reruns the step)."""
    report = SkipReport(f"datasets.import ({options.name})")
    files, record = sources.fetch(options)
    record_release(record)
    folder = sources.saved_folder(options)
    read = tables.read_saved(folder) if folder else {f.key: tables.read_table(f.local, f.location) for f in files}
    by_split: dict[str, str] = {}
    for key in read:
        split = "train" if key == sources.SINGLE else sources.split_of(key, options)
        if split not in sources.SPLITS:
            raise ValueError(f"config: {options.key}: the data's split {key!r} is none of {', '.join(sources.SPLITS)}: rename it "
                             f"with {options.key}.splits.names ({key}: validation)")
        if split in by_split:
            raise ValueError(f"config: {options.key}: two of the data's splits are its {split} split (rename one with {options.key}.splits.names)")
        by_split[split] = key
    mapper = records.RowMapper(options, report)
    made_from_train = not {"validation", "test"} <= set(by_split)  # a split the import makes is made of train's rows
    given = {split: mapper.map(read[key], key if key == sources.SINGLE else split, split_here=made_from_train and split == "train")
             for split, key in sorted(by_split.items(), key=lambda item: sources.SPLITS.index(item[0]))}  # train's rows first
    mapper.check_labels()
    splits, how = records.make_splits(given, options.splits, options.classes, options.key)
    for split in sources.SPLITS:
        write_jsonl(outputs[split], splits[split])
        report.count(f"rows_{split}", len(splits[split]))
    card.write_card(outputs, options, splits, how, report, record)
    counts = {split: {c: sum(1 for r in rows if r["label"] == c) for c in options.classes} for split, rows in splits.items()}
    absent = [c for c in options.classes if not counts["train"][c]]
    if absent:
        log.warning("%s: the train split has no row of the class%s %s", options.key, "es" if len(absent) > 1 else "", ", ".join(absent))
        report.count("classes_absent_from_train", len(absent))
    write_json(outputs["report"], {**report.as_dict(), "dataset": options.name, "classes": options.classes,
                                   "splits": {s: {"rows": len(splits[s]), "classes": counts[s], "from": how[s]} for s in sources.SPLITS},
                                   "source": record})
    log.info("%s: %s", options.key, ", ".join(f"{s} {len(splits[s])}" for s in sources.SPLITS))
    return {split: len(rows) for split, rows in splits.items()}
