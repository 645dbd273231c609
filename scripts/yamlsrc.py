"""Load YAML keeping the line of every node, so that errors can say where a problem is."""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from .errors import UserError

Path_ = tuple[Any, ...]


@dataclass
class Located:
    """A parsed document and the 1-based line of each path into it (keys and list indexes)."""

    data: Any
    lines: dict[Path_, int] = field(default_factory=dict)

    def line(self, path: Path_) -> int | None:
        """The line of `path`, or of its nearest ancestor that has one."""
        while path:
            if path in self.lines:
                return self.lines[path]
            path = path[:-1]
        return self.lines.get(())


def _walk(node: yaml.Node, path: Path_, lines: dict[Path_, int]) -> None:
    lines[path] = node.start_mark.line + 1
    if isinstance(node, yaml.MappingNode):
        for key_node, value_node in node.value:
            key = key_node.value
            _walk(value_node, path + (key,), lines)
            lines[path + (key,)] = key_node.start_mark.line + 1
    elif isinstance(node, yaml.SequenceNode):
        for index, item in enumerate(node.value):
            _walk(item, path + (index,), lines)


def load_located(path: Path) -> Located:
    """Parse `path`; a missing file or malformed YAML becomes a UserError naming the file and line."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise UserError(f"{path.name}: not found at {path}; create it (see README.md, 'The matrix')") from None
    try:
        node = yaml.compose(text, Loader=yaml.SafeLoader)
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f":{mark.line + 1}" if mark else ""
        problem = getattr(exc, "problem", None) or str(exc)
        raise UserError(f"{path.name}{where}: malformed YAML: {problem}; fix the syntax at that line") from None
    lines: dict[Path_, int] = {}
    if node is not None:
        _walk(node, (), lines)
    return Located(data, lines)
