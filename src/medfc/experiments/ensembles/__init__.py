"""Ensembles of runs: weighted average (:mod:`~medfc.experiments.ensembles.ensemble`) or learned stacking (the members'
inner-CV predictions, :mod:`~medfc.experiments.ensembles.stacking`, and the choice of what the stack combines,
:mod:`~medfc.experiments.ensembles.stack_selection`)."""
