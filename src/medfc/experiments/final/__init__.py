"""Final models and ``medfc predict``: a table's row trained once more on all the data its recipe allows
(:mod:`~medfc.experiments.final.train`), kept in a folder with its model card and loaded back without running code
from it (:mod:`~medfc.experiments.final.kept`), and applied to new claims (:mod:`~medfc.experiments.final.predict`,
reading its input files through :mod:`~medfc.experiments.final.predict_inputs`)."""
