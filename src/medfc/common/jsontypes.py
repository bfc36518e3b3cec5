"""Types of data parsed from JSON: ``JSONValue`` (a parsed document) and ``JSONObject`` (one object of it, e.g. a
JSONL record). A value the code only passes on to a writer is ``object``."""

from __future__ import annotations

from typing import TYPE_CHECKING, ForwardRef, TypeAlias, Union

JSONScalar: TypeAlias = str | int | float | bool | None
if TYPE_CHECKING:
    JSONValue: TypeAlias = Union[JSONScalar, list["JSONValue"], dict[str, "JSONValue"]]
else:  # the same, with the recursion bound to this module: typing.get_type_hints of an annotation that
    # names it elsewhere (medfc.cli reads a step's) resolves it here, not in the annotating module
    _SELF = ForwardRef("JSONValue", module=__name__)
    JSONValue = Union[JSONScalar, list[_SELF], dict[str, _SELF]]
JSONObject: TypeAlias = dict[str, JSONValue]
