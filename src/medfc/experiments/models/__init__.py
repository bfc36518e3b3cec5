"""The model kinds and what trains them: each kind's typed config and the pairs datasets' options
(:mod:`~medfc.experiments.models.options`, a light module the plan reads), the registry of kinds and the one model
interface (:mod:`~medfc.experiments.models.kinds`), the model aliases, each kind's module (``encoder``, ``tfidf``,
``gbm`` with its hand-written ``features``, ``frozen`` with its cached ``embeddings``), the one training loop, what
the scikit-learn kinds share, how a fitted model is kept for ``medfc predict`` (``keeper``) and the validation
scores a model chooses by. Nothing here knows a dataset's systems or runs."""
