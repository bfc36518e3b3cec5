"""The HealthFC experiments: the registry of systems (:mod:`~medfc.experiments.healthfc.systems`), the
cross-validation driver (:mod:`~medfc.experiments.healthfc.runs`) and the joint system (:mod:`~medfc.experiments.healthfc.joint`)."""
