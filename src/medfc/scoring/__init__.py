"""Scoring library: label metrics, AVeriTeC, MedSNIP (docs/scoring.md). Importing the package loads neither numpy
nor NLTK data."""
