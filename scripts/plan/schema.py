"""JSON Schema errors as one line each: the path, what is wrong, and what to write instead."""
from __future__ import annotations

from typing import Any

import jsonschema

from .yamlsafe import Located


def fmt_path(path: tuple[Any, ...]) -> str:
    out = ""
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out or "(top level)"


def branch_error(error: jsonschema.ValidationError) -> jsonschema.ValidationError:
    """oneOf (entry | axes group) hides the useful part: the error of the branch the item meant to be."""
    if error.validator != "oneOf" or not error.context:
        return error
    meant = 0 if isinstance(error.instance, dict) and "axes" in error.instance else 1   # index in images.items.oneOf
    branch = [e for e in error.context if e.relative_schema_path and e.relative_schema_path[0] == meant] or error.context
    return max(branch, key=lambda e: (len(e.absolute_path), e.validator != "required"))


def extra_keys(error: jsonschema.ValidationError) -> list[Any]:
    """The keys an additionalProperties error is about, sorted even when they are of mixed types."""
    if error.validator != "additionalProperties" or not isinstance(error.instance, dict):
        return []
    allowed = set(_properties(error))
    return sorted((k for k in error.instance if k not in allowed), key=lambda k: (type(k).__name__, str(k)))


def _properties(error: jsonschema.ValidationError) -> dict[str, Any]:
    schema = error.schema
    return dict(schema.get("properties", {})) if isinstance(schema, dict) else {}


def explain(error: jsonschema.ValidationError, doc: Located, path: tuple[Any, ...]) -> str:
    if error.validator == "additionalProperties":
        allowed = sorted(_properties(error))
        extra = extra_keys(error)
        return f"unknown key {', '.join(map(repr, extra))}; allowed: {', '.join(allowed)}"
    if error.validator == "propertyNames":
        return f"key {error.instance!r} is not allowed here ({error.message})"
    wants_string = error.validator == "pattern" or (error.validator == "type" and error.validator_value == "string")
    if wants_string and isinstance(error.instance, (int, float)) and not isinstance(error.instance, bool):
        written = doc.text(path) or str(error.instance)
        return f"{written} is a number; versions are strings: write it quoted, \"{written}\""
    if error.validator == "enum":
        choices = error.validator_value if isinstance(error.validator_value, list) else []
        return f"{error.instance!r} is not one of {', '.join(map(str, choices))}"
    if error.validator == "required" and isinstance(error.validator_value, list) and "torch" in error.validator_value:
        return f"{error.message}; an image entry needs torch, cuda, flavor and distro (or an `axes:` block)"
    if error.validator == "uniqueItems":
        return f"{error.instance!r} lists an item more than once; list each once"
    if error.validator == "oneOf":
        return "neither an image entry (torch, cuda, flavor, distro) nor an axes group (`axes:` with those four lists)"
    if error.validator == "pattern":
        return f"{error.instance!r} does not have the expected form ({error.validator_value})"
    return error.message


def error_line(error: jsonschema.ValidationError, doc: Located) -> tuple[tuple[Any, ...], int | None]:
    """The path and line to report: an unknown key at its own line, not at its parent's."""
    path = tuple(error.absolute_path)
    extra = extra_keys(error)
    if extra:
        return path, doc.line(path + (str(extra[0]),))
    return path, doc.line(path)
