"""Figures of the experiments (CliniFact Fig. 3), with the papers' values drawn beside ours."""
