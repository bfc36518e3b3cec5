"""The named files a step receives, ``step(inputs, outputs, options)``: one path or a list of paths per name
(read a many-file name with :func:`medfc.common.io.input_paths`)."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import TypeAlias

FilePath: TypeAlias = str | os.PathLike[str]
StepFiles: TypeAlias = Mapping[str, FilePath | Sequence[FilePath]]
