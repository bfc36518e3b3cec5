"""The CliniFact systems beside the discriminative one (:mod:`medfc.experiments.pairs`); no runner imports another."""
