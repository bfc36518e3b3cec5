"""Ensembles of runs: the members' predictions combined into one, by weighted average
(:mod:`~medfc.experiments.ensembles.ensemble`, with the ensembles' options) or by learned stacking — the members'
out-of-fold predictions from inner cross-validation (:mod:`~medfc.experiments.ensembles.stacking`) and the choice of
what the stack combines, made on predictions none of its choices was tuned on
(:mod:`~medfc.experiments.ensembles.stack_selection`)."""
