"""Final models and ``medfc predict``: a table's row trained, kept and applied."""
