"""The named files a workflow step receives: ``step(inputs, outputs, options)``.

workflow/scripts/step.py hands a rule's named inputs and outputs over as one path or a list of paths per
name (``medfc run --in name=path`` one path each; the tests may pass :class:`pathlib.Path`). A step reads a
single-file name as a path and a many-file one with :func:`medfc.common.io.input_paths`.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import TypeAlias

FilePath: TypeAlias = str | os.PathLike[str]
StepFiles: TypeAlias = Mapping[str, FilePath | Sequence[FilePath]]
