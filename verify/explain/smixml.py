"""`nvidia-smi -q -x`: the same report as XML (what exporters such as telegraf read), its elements renamed to the text
layout's paths (`pci/pci_gpu_link_info/link_widths/current_link_width` -> `link width/current`) and judged by
smi.py's own reading, so one field is read one way whichever form was pasted. Read as a stream of elements: a
pasted excerpt cut mid-document keeps what came before the cut. A document type that declares entities is refused
(no expansion of what a hostile file declares); nvidia-smi's own `<!DOCTYPE ... SYSTEM "nvsmi_device_v12.dtd">`
declares none.

An excerpt of the report without its root (a GitHub comment quoting one section, `<clocks_event_reasons>` and the
lines under it) is read as the one GPU it belongs to, of unknown bus, where it holds an element only nvidia-smi's
dtd names (fragment.py); a `<gpu>` element it holds is that GPU."""
from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any, cast
from xml.etree.ElementTree import Element, ParseError, XMLPullParser

from . import smi
from .fragment import FRAGMENT, rooted, unorphaned

_ROOT = re.compile(r"<nvidia_smi_log\b")
_DOCTYPE = re.compile(r"<!DOCTYPE[^\[>]*>")
# the XML's names that the text layout words otherwise (nvidia-smi's own dtd against its -q text)
_RENAME = {"uuid": "gpu uuid", "pci_bus_id": "bus id", "gpu_temp": "gpu current temp",
           "gpu_temp_slow_threshold": "gpu slowdown temp", "pcie_gen": "pcie generation",
           "current_link_gen": "current", "max_link_gen": "max", "max_device_link_gen": "device max", "link_widths": "link width",
           "current_link_width": "current", "max_link_width": "max", "remapped_row_corr": "correctable error",
           "remapped_row_unc": "uncorrectable error", "remapped_row_pending": "pending",
           "remapped_row_failure": "remapping failure occurred", "pending_blacklist": "pending page blacklist",
           "pending_retirement": "pending", "current_ecc": "current", "pending_ecc": "pending", "gpu_idle": "idle", "display_clocks_setting": "display clock setting"}
_REASON = re.compile(r"^clocks_(?:event|throttle)_reason_")
_BUS = re.compile(r"[0-9A-Fa-f]{4,8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\.[0-7]")


def detect(text: str) -> bool:
    return bool(_ROOT.search(text) or FRAGMENT.search(text))


def _word(tag: str) -> str:
    tag = _REASON.sub("", tag)
    return _RENAME.get(tag, tag.replace("_", " "))


def _elements(text: str) -> tuple[dict[str, str], list[tuple[str, dict[str, str]]]]:
    """(the header's values, [(bus id, {path: value})]) from the elements parsed before the document ends or breaks."""
    header: dict[str, str] = {}
    gpus: list[tuple[str, dict[str, str]]] = []
    stack: list[str] = []
    parser: XMLPullParser[Element] = XMLPullParser(events=("start", "end"))
    try:
        parser.feed(_DOCTYPE.sub("", text, count=1))
        parser.close()
    except ParseError:
        pass                                      # an excerpt cut mid-element: what was read stands
    try:
        # events=("start", "end") yields (event, element) pairs only (typeshed types every event kind's tuple)
        for event, element in cast("Iterator[tuple[str, Element]]", parser.read_events()):
            if event == "start":
                stack.append(element.tag)
                if element.tag == "gpu" and len(stack) == 2:
                    gpus.append((str(element.get("id") or ""), {}))
                continue
            leaf = (element.text or "").strip()
            if len(stack) >= 2 and not len(element) and leaf:
                if stack[1] == "gpu" and gpus:
                    gpus[-1][1]["/".join(_word(t) for t in stack[2:])] = leaf
                elif len(stack) == 2:
                    header[_word(element.tag)] = leaf
            stack.pop()
    except ParseError:
        pass
    return header, gpus


def parse(text: str) -> dict[str, Any]:
    if "<!ENTITY" in text:
        return {"torch": None, "devices": None}   # never expanded: nothing read
    # a whole report a poster trimmed (`</pci>` left behind the elided PCI section: rtx4090-wsl-591.74-q-x-p0-...)
    # loses its end tags that close nothing, as an excerpt without its root does: XML stops at the first
    text = unorphaned(text) if _ROOT.search(text) else rooted(text)
    header: dict[str, str] = {}
    gpus: list[tuple[str, dict[str, str]]] = []
    starts = [m.start() for m in _ROOT.finditer(text)][:64]      # reports pasted one after another: each read
    for begin, end in zip(starts, [*starts[1:], len(text)], strict=True):
        more, found = _elements(text[begin:end])
        header.update(more)
        gpus += found
    return smi.from_tree(header, [(bus if _BUS.fullmatch(bus) else "", fields) for bus, fields in gpus])
