"""How one kind of kept model is written beside its weights and read back (:class:`Keeper`), and what the keepers
share. A kept directory opens without running code: JSON, safetensors, and skops files loaded only when every type
they name is in :data:`LOADABLE_TYPES`; pickles are refused. A light module (no torch, no scikit-learn).
"""

from __future__ import annotations

import io
import json
import os
import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from medfc.common.io import atomic_write, read_json, write_json
from medfc.experiments.records import CardFields, ModelCard

CARD = "medfc_model.json"
CARD_FORMAT = 1
SKLEARN_STATE = "model.json"  # a scikit-learn kind's plain values: its options, labels, ...
SKLEARN_ESTIMATORS = "model.skops"  # its fitted estimators (skops.io)
PICKLE_SUFFIXES = (".pkl", ".pickle", ".joblib", ".pt", ".pth")  # files whose opening can run code: never read
#: The only types a kept model's ``.skops`` file may hold (``module.Class``): the scikit-learn kinds' estimators and
#: their parts, and the builtin and NumPy values inside them.
LOADABLE_TYPES = frozenset({
    *(f"builtins.{t}" for t in ("dict", "list", "tuple", "str", "int", "float", "bool", "NoneType", "set", "frozenset")),
    *(f"numpy.{t}" for t in ("ndarray", "dtype", "float64", "float32", "float16", "int64", "int32", "int16", "int8",
                             "uint64", "uint32", "uint16", "uint8", "bool_", "bool", "intp", "str_", "object_")),
    "numpy.random._generator.Generator", "numpy.random.mtrand.RandomState", "numpy.random._pcg64.PCG64",
    "numpy.random._mt19937.MT19937",
    "sklearn.linear_model._logistic.LogisticRegression",
    "sklearn.preprocessing._data.StandardScaler", "sklearn.preprocessing._label.LabelEncoder",
    "sklearn.ensemble._hist_gradient_boosting.gradient_boosting.HistGradientBoostingClassifier",
    "sklearn.ensemble._hist_gradient_boosting.binning._BinMapper",
    "sklearn.ensemble._hist_gradient_boosting.predictor.TreePredictor",
    *(f"sklearn._loss.loss.Half{t}Loss" for t in ("Binomial", "Multinomial")),
    *(f"sklearn._loss._loss.CyHalf{t}Loss" for t in ("Binomial", "Multinomial")),
    "sklearn._loss.link.Interval", "sklearn._loss.link.LogitLink", "sklearn._loss.link.MultinomialLogit",
})
TRANSFORMERS_DIR = "transformers"


@dataclass(frozen=True)
class Keeper:
    """How one kind of kept model is written and read back: ``keep(fitted, directory)`` returns what it adds to the
    card; ``load(directory, card, device, batch_size)`` is the fitted model again (None: not loaded whole)."""

    keep: Callable[[Any, Path], CardFields]
    load: Callable[[Path, ModelCard, str, int | None], Any] | None


def keep_checkpoint(result: object, config: Any, tokenizer: Any, directory: Path, what: str) -> CardFields:
    """An encoder's keep: ``config`` and ``tokenizer`` in ``transformers/``, and the checkpoint (relative) for the card."""
    checkpoint = getattr(result, "checkpoint", None)
    if not checkpoint:
        raise ValueError(f"{directory}: {what} wrote no checkpoint to keep")
    relative = os.path.relpath(checkpoint, directory)
    config.save_pretrained(directory / TRANSFORMERS_DIR)
    tokenizer.save_pretrained(directory / TRANSFORMERS_DIR)
    return {"checkpoint": relative}


class UnsafeModelError(ValueError):
    """A kept directory holds something that could run code when opened: refused, never loaded."""


def refuse_pickles(directory: Path) -> None:
    """A kept directory (at any depth) holding a pickle is refused in one line naming the file."""
    found = sorted(p for p in Path(directory).rglob("*") if p.suffix in PICKLE_SUFFIXES and p.is_file())
    if found:
        raise UnsafeModelError(f"{found[0]}: a pickle, which medfc never opens (loading one can run any code it holds); "
                               "keep the model again with this version of medfc (its kept models are JSON, skops and safetensors)")


def _skops_types(payload: bytes, path: Path) -> set[str]:
    """Every ``module.Class`` the schema of a skops ``payload`` names (its nodes, at any depth)."""
    found: set[str] = set()

    def note(node: dict[str, object]) -> dict[str, object]:
        if isinstance(node.get("__class__"), str) and isinstance(node.get("__module__"), str):
            found.add(f"{node['__module__']}.{node['__class__']}")
        return node

    try:
        with zipfile.ZipFile(io.BytesIO(payload)) as archive:
            json.loads(archive.read("schema.json"), object_hook=note)
    except (zipfile.BadZipFile, KeyError, ValueError) as exc:
        raise UnsafeModelError(f"{path}: not a skops file ({exc})") from None
    return found


def dump_estimators(path: Path, estimators: dict[str, object]) -> None:
    """Fitted scikit-learn objects by name, written with ``skops.io``; only :data:`LOADABLE_TYPES`."""
    import skops.io

    payload = skops.io.dumps(estimators, compression=zipfile.ZIP_DEFLATED, compresslevel=6)
    outside = sorted(_skops_types(payload, path) - LOADABLE_TYPES)
    if outside:
        raise UnsafeModelError(f"{path}: {outside[0]} is not among the types a kept model may hold "
                               "(medfc.experiments.models.keeper.LOADABLE_TYPES)")
    atomic_write(path, payload)


def load_estimators(path: Path) -> dict[str, Any]:
    """What :func:`dump_estimators` wrote, its schema checked first: only :data:`LOADABLE_TYPES` load."""
    import skops.io
    from skops.io.exceptions import UntrustedTypesFoundException

    payload = Path(path).read_bytes()
    named = _skops_types(payload, path)  # every node's type: a function or a method is one too
    outside = sorted(named - LOADABLE_TYPES)
    if outside:
        raise UnsafeModelError(f"{path}: holds a {outside[0]} object, a type a kept model may not hold "
                               f"(medfc.experiments.models.keeper.LOADABLE_TYPES); refused without loading it")
    try:  # skops trusts exactly these (it refuses anything else it meets on its own)
        loaded = skops.io.loads(payload, trusted=sorted(named))
    except UntrustedTypesFoundException as exc:
        raise UnsafeModelError(f"{path}: {exc}; refused") from None
    if not isinstance(loaded, dict):
        raise UnsafeModelError(f"{path}: holds a {type(loaded).__name__}, not the estimators by name a kept model keeps")
    return loaded


def keep_state(directory: Path, state: dict[str, object], estimators: dict[str, object]) -> CardFields:
    """A scikit-learn kind's keep: ``state`` (plain values) as JSON, ``estimators`` with skops; nothing added to the card."""
    (directory / "model.pkl").unlink(missing_ok=True)  # a pickle an earlier version kept here
    write_json(directory / SKLEARN_STATE, state)
    dump_estimators(directory / SKLEARN_ESTIMATORS, estimators)
    return {}


def read_state(directory: Path, options: type[Any]) -> tuple[Any, dict[str, Any], dict[str, Any]]:
    """What :func:`keep_state` wrote: the kind's ``options`` (its class given), the plain values and the estimators."""
    state = read_json(directory / SKLEARN_STATE)
    if not isinstance(state, dict):
        raise ValueError(f"{directory / SKLEARN_STATE}: not a JSON object")
    estimators = load_estimators(directory / SKLEARN_ESTIMATORS)
    return options.from_mapping(state["options"], where=f"{directory}: options"), state, estimators
