"""Model aliases every config has. Kept free of heavy imports (no torch, no scikit-learn): the workflow
reads it at start-up, before any job runs."""

from __future__ import annotations

# ``models.aliases`` adds to these (and may redefine one).
BUILTIN_ALIASES = {"minilm": "offline:minilm", "mpnet": "offline:mpnet", "tfidf": "sklearn:tfidf", "gbm": "sklearn:gbm"}


def model_aliases(configured: dict[str, str]) -> dict[str, str]:
    """The built-in aliases with a config's own ``models.aliases`` on top."""
    return {**BUILTIN_ALIASES, **configured}
