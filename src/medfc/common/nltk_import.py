"""``import nltk`` without the optional libraries its package ``__init__`` pulls in and no step of ours uses.

``import nltk`` imports ``scipy.stats`` (``nltk.metrics``, ``nltk.translate.gale_church``) and scikit-learn
(``nltk.classify.scikitlearn``, ``nltk.parse.transitionparser``, which loads pandas): about 1.2 of the 1.6 s of CPU
it costs. NLTK imports them inside ``try: ... except ImportError``, so :func:`import_nltk` runs the first import
with both marked unimportable, then unmarks them. Only the NLTK functions wrapping them (``SklearnClassifier``,
``fisher_exact`` collocation scores, the transition parser's SVM) are then unavailable in that process;
tokenisation, Punkt, WordNet, stemming and METEOR give the same answers
(tests/unit/scoring/test_scoring_meteor_loading.py). With nltk, scipy.stats or sklearn already imported it is a
plain ``import nltk``.

Used by METEOR and MedSNIP's stemmer. The HealthFC sentence splitter keeps its plain import on purpose: an edit
there would change the code version of every HealthFC dataset step (and retrain every HealthFC model)."""

from __future__ import annotations

import sys
from types import ModuleType

# the optional imports of nltk's package __init__ that no step of the workflow uses
OPTIONAL = ("sklearn", "scipy.stats")

__all__ = ["OPTIONAL", "import_nltk"]


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
