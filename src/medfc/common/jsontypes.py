"""Types of JSON-shaped data: what :func:`json.load` returns and what :func:`json.dump` writes.

``JSONValue`` is the recursive type of a parsed JSON document; ``JSONObject`` one object of it (a JSONL
record as read, an options mapping from the config). A value the code only passes on (into a record it
writes, to :func:`medfc.common.io.write_json`) is ``object``; these are for data parsed from JSON.
"""

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
