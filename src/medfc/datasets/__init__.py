"""Claim-verification datasets declared by a config entry (``datasets.<name>``): imported from their data files
into the run's three splits and a dataset card (rule ``dataset_import``, :func:`medfc.datasets.steps.import_dataset`).

:mod:`~medfc.datasets.options` (the step's options), :mod:`~medfc.datasets.sources` (where the data files are:
a local path, a URL or a Hugging Face repository at a commit; downloads and their SHA-256), :mod:`~medfc.datasets.tables`
(the rows of a CSV, TSV, JSON, JSONL, Parquet file or a ``save_to_disk`` folder), :mod:`~medfc.datasets.records`
(fields and labels mapped, rows skipped with their reasons, the splits made) and :mod:`~medfc.datasets.card`
(the card folder ``datasets.load_dataset`` reads). docs/datasets.md.
"""
