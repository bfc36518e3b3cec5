"""Model aliases every config has, and the local models behind ``offline:`` names. Kept free of heavy
imports (no torch, no scikit-learn): the workflow reads it at start-up, before any job runs."""

from __future__ import annotations

import os
import re
from collections.abc import Iterable

from medfc.common.offline_models import resolve_offline

# ``models.aliases`` adds to these (and may redefine one).
BUILTIN_ALIASES = {"minilm": "offline:minilm", "mpnet": "offline:mpnet", "tfidf": "sklearn:tfidf", "gbm": "sklearn:gbm",
                   "frozen-minilm": "frozen:offline:minilm", "frozen-mpnet": "frozen:offline:mpnet"}


# a Hugging Face model id: ``org/name`` (also the shape of a local directory one level down)
HUB_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*/[A-Za-z0-9][A-Za-z0-9_.-]*$")
_PATH_PART = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.+-]*$")

# what an error about a name that is no model says, after the names it lists
ALIAS_HINT = ("; a Hugging Face model id (org/name) or a relative directory may be named as it is, any other model "
              "through an alias: models: {aliases: {NAME: <hub name, directory or offline:minilm>}}")


def direct_model_name(name: str) -> bool:
    """Whether a model list may name ``name`` without an alias: a hub id or a clean relative directory."""
    if not isinstance(name, str) or "\\" in name:
        return False
    if HUB_ID.match(name) and ".." not in name:
        return True
    parts = name.split("/")
    return len(parts) > 1 and all(_PATH_PART.match(p) and p not in (".", "..") for p in parts) and os.path.isdir(name)


def model_aliases(configured: dict[str, str], named: Iterable[str] = ()) -> dict[str, str]:
    """The built-in aliases, a config's own on top, and each :func:`direct_model_name` of ``named``."""
    aliases = {**BUILTIN_ALIASES, **configured}
    for name in named:
        if name not in aliases and direct_model_name(name):
            aliases[name] = name
    return aliases


def resolve_model(name: str) -> str:
    """A config model name → a path or hub name (``offline:`` names: the packaged models), in the job."""
    return resolve_offline(name) if name.startswith("offline:") else name
