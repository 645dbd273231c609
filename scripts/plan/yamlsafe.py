"""The one YAML loader: UTF-8 checked, one document, no duplicate keys, bounded nesting and aliases, and the
line (and source text) of every node, so that errors can say where a problem is and quote what was written."""
from __future__ import annotations

import codecs
import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from ..errors import UserError

Path_ = tuple[Any, ...]
MAX_DEPTH = 32           # matrix.yaml and compat.yaml need 5
MAX_ALIASES = 100        # anchors are allowed, but a handful is all a hand-written file uses
MAX_NODES = 100_000      # the expanded size of the document (an alias bomb expands to billions)
MAX_BYTES = 4_000_000

BOMS = {codecs.BOM_UTF32_LE: "UTF-32", codecs.BOM_UTF32_BE: "UTF-32", codecs.BOM_UTF16_LE: "UTF-16",
        codecs.BOM_UTF16_BE: "UTF-16"}


@dataclass
class Located:
    """A parsed document, the 1-based line of each path into it, and the source text of each scalar."""

    data: Any
    lines: dict[Path_, int] = field(default_factory=dict)
    texts: dict[Path_, str] = field(default_factory=dict)

    def line(self, path: Path_) -> int | None:
        """The line of `path`, or of its nearest ancestor that has one."""
        while path:
            if path in self.lines:
                return self.lines[path]
            path = path[:-1]
        return self.lines.get(())

    def text(self, path: Path_) -> str | None:
        """The scalar as written in the file (`2.10`, where the parsed value is the float 2.1)."""
        return self.texts.get(path)


class _Loader(yaml.SafeLoader):
    """SafeLoader that refuses duplicate keys (the last one would silently win)."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        seen: dict[Any, int] = {}
        for key_node, _ in node.value:
            key = self.construct_object(key_node, deep=True)
            try:
                hash(key)
            except TypeError:
                raise yaml.constructor.ConstructorError(None, None, "a mapping key that is a list or mapping",
                                                        key_node.start_mark) from None
            if key in seen:
                raise yaml.constructor.ConstructorError(
                    None, None, f"duplicate key {key!r} (first at line {seen[key]}); the last one would silently win",
                    key_node.start_mark)
            seen[key] = key_node.start_mark.line + 1
        return super().construct_mapping(node, deep=deep)


def _kind(mode: int) -> str:
    """What a non-regular file is, in words."""
    for test, words in ((stat.S_ISFIFO, "a FIFO (named pipe)"), (stat.S_ISCHR, "a character device"),
                        (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket")):
        if test(mode):
            return words
    return "a special file"


def _decode(path: Path, name: str) -> str:
    if path.is_dir():
        raise UserError(f"{name}: {path} is a directory; give the YAML file itself")
    try:
        mode = path.stat().st_mode      # stat, never open: opening a FIFO waits for a writer forever
    except FileNotFoundError:
        raise UserError(f"{name}: not found at {path}; create it (see docs/matrix.md)") from None
    except OSError as exc:
        raise UserError(f"{name}: cannot read {path} ({exc.strerror}); check its permissions") from None
    if not stat.S_ISREG(mode):
        raise UserError(f"{name}: {path} is {_kind(mode)}, not a regular file; give the YAML file itself")
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raise UserError(f"{name}: not found at {path}; create it (see docs/matrix.md)") from None
    except OSError as exc:
        raise UserError(f"{name}: cannot read {path} ({exc.strerror}); check its permissions") from None
    if len(raw) > MAX_BYTES:
        raise UserError(f"{name}: {len(raw)} bytes is far larger than a hand-written file; is it the right file?")
    for bom, encoding in BOMS.items():
        if raw.startswith(bom):
            raise UserError(f"{name}: the file is {encoding}; save it as UTF-8")
    if len(raw) >= 2 and (raw[0] == 0 or raw[1] == 0):
        raise UserError(f"{name}: the file looks like UTF-16 (NUL bytes); save it as UTF-8")
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = raw[:exc.start].count(b"\n") + 1
        raise UserError(f"{name}:{line}: byte 0x{raw[exc.start]:02x} is not UTF-8; save the file as UTF-8") from None


def _line(mark: Any) -> int:
    return mark.line + 1 if mark is not None else 1


def _check_events(text: str, name: str) -> None:
    """Nesting depth and aliases, from the event stream (no recursion, nothing expanded yet)."""
    depth, aliases = 0, 0
    open_anchors: list[str | None] = []
    for event in yaml.parse(text, Loader=yaml.SafeLoader):
        if isinstance(event, (yaml.MappingStartEvent, yaml.SequenceStartEvent)):
            depth += 1
            open_anchors.append(event.anchor)
            if depth > MAX_DEPTH:
                raise UserError(f"{name}:{_line(event.start_mark)}: nested more than {MAX_DEPTH} levels deep; "
                                f"this file needs at most 5")
        elif isinstance(event, (yaml.MappingEndEvent, yaml.SequenceEndEvent)):
            depth -= 1
            open_anchors.pop()
        elif isinstance(event, yaml.AliasEvent):
            aliases += 1
            if event.anchor in open_anchors:
                raise UserError(f"{name}:{_line(event.start_mark)}: alias *{event.anchor} refers to a collection "
                                f"that contains it (a recursive alias); write the value out")
            if aliases > MAX_ALIASES:
                raise UserError(f"{name}:{_line(event.start_mark)}: more than {MAX_ALIASES} aliases; "
                                f"write the values out")


def _walk(node: yaml.Node, name: str) -> tuple[dict[Path_, int], dict[Path_, str]]:
    """Lines and scalar texts of every path; refuses a document whose expansion exceeds MAX_NODES."""
    lines: dict[Path_, int] = {}
    texts: dict[Path_, str] = {}
    stack: list[tuple[yaml.Node, Path_]] = [(node, ())]
    count = 0
    while stack:
        current, path = stack.pop()
        count += 1
        if count > MAX_NODES:
            raise UserError(f"{name}: the document expands to more than {MAX_NODES} values (aliases of aliases?); "
                            f"write the values out")
        lines.setdefault(path, current.start_mark.line + 1)
        if isinstance(current, yaml.MappingNode):
            for key_node, value_node in current.value:
                key = key_node.value
                stack.append((value_node, path + (key,)))
                lines[path + (key,)] = key_node.start_mark.line + 1
        elif isinstance(current, yaml.SequenceNode):
            stack.extend((item, path + (index,)) for index, item in enumerate(current.value))
        elif isinstance(current, yaml.ScalarNode):
            texts[path] = current.value
    return lines, texts


def load_located(path: Path, name: str | None = None) -> Located:
    """Parse `path`; every problem (encoding, syntax, duplicates, depth, aliases) is a UserError with a line."""
    name = name or path.name
    text = _decode(path, name)
    try:
        _check_events(text, name)
        loader = _Loader(text)
        try:
            node = loader.get_single_node()
            lines, texts = _walk(node, name) if node is not None else ({}, {})
            data = loader.construct_document(node) if node is not None else None
        finally:
            loader.dispose()
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f":{mark.line + 1}" if mark else ""
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise UserError(f"{name}{where}: malformed YAML: {problem}; fix the syntax at that line") from None
    except RecursionError:
        raise UserError(f"{name}: nested too deeply to read; this file needs at most 5 levels") from None
    return Located(data, lines, texts)
