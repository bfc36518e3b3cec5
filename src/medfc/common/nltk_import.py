"""``import nltk`` without scipy.stats and scikit-learn, which its ``__init__`` tries to import (1.2 of its 1.6 s)
and no step of ours uses; tokenisation, Punkt, WordNet, stemming and METEOR give the same answers."""

from __future__ import annotations

import sys
from types import ModuleType

# the optional imports of nltk's package __init__ that no step of the workflow uses
OPTIONAL = ("sklearn", "scipy.stats")


def import_nltk() -> ModuleType:
    """``nltk``, imported (the first time in a process) without :data:`OPTIONAL`."""
    if "nltk" in sys.modules:
        return sys.modules["nltk"]
    hidden = [name for name in OPTIONAL if name not in sys.modules]
    for name in hidden:
        sys.modules[name] = None  # type: ignore[assignment]  # "import name" raises ImportError
    try:
        import nltk
    finally:
        for name in hidden:
            if name in sys.modules and sys.modules[name] is None:
                del sys.modules[name]
    return nltk
