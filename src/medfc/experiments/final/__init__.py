"""Final models and ``medfc predict``: training (:mod:`~medfc.experiments.final.train`), keeping
(:mod:`~medfc.experiments.final.kept`) and applying (:mod:`~medfc.experiments.final.predict`) a table's row."""
