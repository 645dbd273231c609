"""Libfabric's `fi_info` (verify/FACTS.md, `ofi_providers`, `ofi_query`): its listing's `provider: efa` lines (each
followed by `fabric:`, `domain: efa_0-rdm`, ...; `efa;ofi_rxd` is a utility provider over a core one: both named),
`fi_info -l`'s `efa:` / `    version: 2.0` lines, and its answer when no provider matched, `fi_getinfo: -61 (No data
available)` (libfabric util/info.c). Real output: ofiwg/libfabric#5689 (`fi_info -p efa` on an EFA instance),
v6d-io/v6d#2051 (`FI_PROVIDER=verbs fi_info` answering -61 on an EFA node by design, then `FI_PROVIDER=efa fi_info`
listing a domain per device). What was asked is read from the command line where it is shown (`$ fi_info -p efa`,
`FI_PROVIDER=efa fi_info`); a listing asked of another provider alone is left out. Libfabric's own log lines
(`libfabric:...:fi_getinfo_():...<warn> fi_getinfo: provider efa output empty list`) and aws-ofi-nccl's (`OFI
fi_getinfo() call failed`) are no listing: not read here."""
from __future__ import annotations

import re
from typing import Any

_COMMAND = re.compile(r"^.*?\bfi_info\b([^\n|]*)", re.MULTILINE)
_PROVIDER = re.compile(r"^[ \t]*provider:[ \t]*([\w;]+)[ \t]*\n[ \t]*fabric:", re.MULTILINE)
_LISTED = re.compile(r"^([a-z][\w;]*):\s*$\n\s+version:\s*\d", re.MULTILINE)          # fi_info -l
_NODATA = re.compile(r"^[ \t]*fi_getinfo:\s*-61\b[^\n]*", re.MULTILINE)
_ASKED = re.compile(r"(?:-p|--provider)[ =]?\s*([\w;]+)")
_ENV = re.compile(r"FI_PROVIDER=[\"']?([\w;^,]+)")


def _query(command: str, line: str) -> str:
    """What one fi_info invocation asked for: `list`, `all` or the provider named (its core provider)."""
    if re.search(r"(?:^|\s)(?:-l|--list)\b", command):
        return "list"
    named = _ASKED.search(command) or _ENV.search(line)
    return named.group(1).split(";")[0].split(",")[0].lower() if named else "all"


def _segments(text: str) -> list[tuple[str | None, str]]:
    """(query, output) per fi_info invocation shown; the whole text, query unknown, where none is shown."""
    commands = [m for m in _COMMAND.finditer(text) if not re.search(r"fi_getinfo|libfabric:", m.group(0))]
    if not commands:
        return [(None, text)]
    cuts = [m.start() for m in commands] + [len(text)]
    return [(_query(m.group(1), m.group(0)), text[m.end():cuts[n + 1]]) for n, m in enumerate(commands)]


# a provider's name as libfabric spells them (`efa`, `ofi_rxd`, `tcp`): `\w` also takes any script's letters, and a
# name past this is no provider (the facts hold only such names)
_NAME = re.compile(r"[A-Za-z0-9_]{1,32}")


def _providers(output: str, query: str | None) -> list[str] | None:
    names = [n for m in _PROVIDER.finditer(output) for n in m.group(1).split(";") if _NAME.fullmatch(n)]
    if query == "list":         # `efa:` above `version:` is a listing only where `fi_info -l` was shown asking
        names += [n for m in _LISTED.finditer(output) for n in m.group(1).split(";") if _NAME.fullmatch(n)]
    if names:
        return list(dict.fromkeys(names))
    return [] if _NODATA.search(output) else None


def detect(text: str) -> bool:
    return bool(parse(text))


def parse(text: str) -> dict[str, Any]:
    read = [(query, found) for query, output in _segments(text) if (found := _providers(output, query)) is not None]
    # a listing of the built-in providers, or of one other than EFA, says nothing of what the devices answer: the
    # listings asked of every provider or of EFA decide, else `fi_info -l`'s
    asked = [r for r in read if r[0] in (None, "all", "efa")] or [r for r in read if r[0] == "list"]
    if not asked:
        return {}
    queries = {q for q, _ in asked}
    query = "all" if "all" in queries else next(iter(queries)) if len(queries) == 1 else None
    providers = list(dict.fromkeys(p for _, found in asked for p in found))
    return {"ofi_providers": providers, "ofi_query": query}
