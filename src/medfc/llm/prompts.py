"""Prompts as versioned files, loaded by name: ``<prompt_dir>/<name>.txt``, a ``# name:`` and ``# version:`` header
and ``=== system ===`` / ``=== user ===`` sections (docs/medsnip.md). Fields are ``{{field}}`` (single braces stay
literal); rendering raises naming the first field missing. ``sha256`` (of the file's bytes) goes into rules' params
and caches' keys."""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from medfc.llm.base import Message

FIELD_RE = re.compile(r"\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}")
SECTION_RE = re.compile(r"^=== (system|user) ===\s*$", re.MULTILINE)


class PromptError(ValueError):
    """A prompt file that is missing, malformed, or rendered without one of its fields."""


@dataclass(frozen=True)
class Prompt:
    name: str
    version: str
    system: str
    user: str
    sha256: str
    path: str

    @staticmethod
    def _fill(template: str, values: dict[str, str], name: str) -> str:
        def sub(m: re.Match) -> str:
            key = m.group(1)
            if key not in values:
                raise PromptError(f"prompt {name!r}: no value for field {key!r}")
            return str(values[key])

        return FIELD_RE.sub(sub, template)

    def render(self, **values: str) -> list[Message]:
        """[system, user] messages (no system message when the section is empty)."""
        msgs: list[Message] = []
        system = self._fill(self.system, values, self.name)
        if system.strip():
            msgs.append({"role": "system", "content": system})
        msgs.append({"role": "user", "content": self._fill(self.user, values, self.name)})
        return msgs


def parse_prompt(text: str, name: str, path: str = "") -> Prompt:
    lines = text.splitlines()
    body_start = next((i for i, line in enumerate(lines) if not line.startswith("#")), len(lines))  # after the header
    meta = {m.group(1).lower(): m.group(2).strip() for line in lines[:body_start]
            if (m := re.match(r"#\s*(\w+)\s*:\s*(.*)$", line))}
    parts = SECTION_RE.split("\n".join(lines[body_start:]))  # ['', 'system', text, 'user', text]
    sections = {parts[k]: parts[k + 1].strip("\n") for k in range(1, len(parts) - 1, 2)}
    if "user" not in sections:
        raise PromptError(f"prompt {name!r} ({path}): no '=== user ===' section")
    if "version" not in meta:
        raise PromptError(f"prompt {name!r} ({path}): no '# version:' line")
    if meta.get("name", name) != name:
        raise PromptError(f"prompt file {path} says name {meta['name']!r}, loaded as {name!r}")
    sha = hashlib.sha256(text.encode("utf-8")).hexdigest()
    return Prompt(name=name, version=meta["version"], system=sections.get("system", ""), user=sections["user"], sha256=sha, path=path)


def load_prompt(name: str, prompt_dir: str | os.PathLike) -> Prompt:
    if not re.fullmatch(r"[A-Za-z0-9_\-]+(/[A-Za-z0-9_\-]+)*", name):
        raise PromptError(f"not a prompt name: {name!r}")
    path = Path(prompt_dir) / f"{name}.txt"
    if not path.is_file():
        raise PromptError(f"prompt {name!r} not found at {path}")
    return parse_prompt(path.read_text(encoding="utf-8"), name, str(path))


def prompt_hashes(names: Iterable[str], prompt_dir: str | os.PathLike) -> dict[str, str]:
    """{name: sha256 of the file}: what a rule puts in its params."""
    return {n: load_prompt(n, prompt_dir).sha256 for n in sorted(set(names))}
