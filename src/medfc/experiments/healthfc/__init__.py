"""The HealthFC experiments: the registry of systems and their options (:mod:`~medfc.experiments.healthfc.systems`,
a light module the plan reads), the systems' runs and the cross-validation driver
(:mod:`~medfc.experiments.healthfc.runs`: one fold's training and predictions, a final model's training on every
claim) and the joint system's model (:mod:`~medfc.experiments.healthfc.joint`). The systems that read a claim and one
text run through the one discriminative path, :mod:`medfc.experiments.pairs`."""
