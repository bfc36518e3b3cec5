"""Claim-verification datasets declared by a config entry (``datasets.<name>``), imported into the run's three
splits and a dataset card (rule ``dataset_import``, :func:`medfc.datasets.steps.import_dataset`; docs/datasets.md)."""
