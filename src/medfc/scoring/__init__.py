"""Scoring library: label metrics, AVeriTeC (HU-METEOR evidence, AVeriTeC score), MedSNIP (FF1, OR-FALSE, paired
bootstrap); definitions and the CLI in docs/scoring.md. Importing the package loads neither numpy nor NLTK data.
"""
