"""``import nltk`` without the optional libraries its package ``__init__`` pulls in and no step of ours uses.

``import nltk`` (any ``nltk.*`` module runs the package's ``__init__`` first) imports nearly all of NLTK,
and with it ``scipy.stats`` (``nltk.metrics``: Fisher's exact test, an incomplete beta function; ``nltk.
translate.gale_church``: the normal distribution) and scikit-learn (``nltk.classify.scikitlearn``,
``nltk.parse.transitionparser``), which loads pandas. That is about 1.2 of the 1.6 s of CPU the import
costs, paid by every job that tokenises or splits sentences or scores METEOR, none of which calls those
parts. NLTK imports each of them inside ``try: ... except ImportError``, so it works without them (as it
does where they are not installed): :func:`import_nltk` runs the first ``import nltk`` of a process with
those two packages marked unimportable, then unmarks them, so a later ``import sklearn`` or
``import scipy.stats`` anywhere in the process works as usual. Only the few NLTK functions that wrap
them (``SklearnClassifier``, ``fisher_exact`` collocation scores, the transition parser's SVM) are
unavailable in that process; tokenisation, Punkt, WordNet, stemming and METEOR do not depend on them and
give the same answers (tests/unit/scoring/test_scoring_meteor_loading.py).

When nltk is already imported, or scipy.stats / scikit-learn already are (they cost nothing more then),
it is a plain ``import nltk``.

Used by METEOR (``medfc.scoring``) and MedSNIP's stemmer, whose jobs are cheap to rerun. The HealthFC
sentence splitter (``medfc.healthfc.sentences``) keeps its plain import on purpose: an edit there changes
the code version of every HealthFC dataset step, so every existing run would retrain its HealthFC models,
to save about a second in one job.
"""

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
