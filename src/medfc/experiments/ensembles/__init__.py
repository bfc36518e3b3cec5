"""Ensembles of runs: the weighted average, and learned stacking (inner-CV predictions, then the stack chosen)."""
