"""Scoring library: label metrics (:mod:`~medfc.scoring.classification`), AVeriTeC (HU-METEOR evidence, AVeriTeC
score), MedSNIP (FF1, OR-FALSE, paired bootstrap). Definitions and the CLI in docs/scoring.md. Importing the package
loads neither numpy nor NLTK data (only METEOR needs it: :func:`medfc.scoring.nltk_data.ensure_nltk_data`).
"""
