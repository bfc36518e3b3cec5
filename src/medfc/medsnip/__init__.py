"""MedSNIP: snippet-level verification of answers (decompose into units, verify each, score; docs/medsnip.md)."""
