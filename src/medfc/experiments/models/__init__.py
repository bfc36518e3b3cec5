"""The model kinds and what trains them: typed configs (:mod:`~medfc.experiments.models.options`), the registry and one
model interface (:mod:`~medfc.experiments.models.kinds`), each kind's module, the training loop and the keepers.
Nothing here knows a dataset's systems or runs."""
