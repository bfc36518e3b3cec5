"""Model aliases every config has, and the local models behind ``offline:`` names. Kept free of heavy
imports (no torch, no scikit-learn): the workflow reads it at start-up, before any job runs."""

from __future__ import annotations

from medfc.common.offline_models import resolve_offline

# ``models.aliases`` adds to these (and may redefine one).
BUILTIN_ALIASES = {"minilm": "offline:minilm", "mpnet": "offline:mpnet", "tfidf": "sklearn:tfidf", "gbm": "sklearn:gbm",
                   "frozen-minilm": "frozen:offline:minilm", "frozen-mpnet": "frozen:offline:mpnet"}


def model_aliases(configured: dict[str, str]) -> dict[str, str]:
    """The built-in aliases with a config's own ``models.aliases`` on top."""
    return {**BUILTIN_ALIASES, **configured}


def resolve_model(name: str) -> str:
    """A config model name → a path or hub name: ``offline:minilm`` / ``offline:mpnet`` are the local
    all-MiniLM-L6-v2 / all-mpnet-base-v2 (:mod:`medfc.common.offline_models`). Resolved where a job loads
    the model, so that a config (and a rule's params) never holds a path of this installation."""
    return resolve_offline(name) if name.startswith("offline:") else name
