"""torch's own answers in an interactive session, as IPython (`In [7]: torch.cuda.device_count()` ... `Out[7]: 0`) and
the Python prompt (`>>> torch.cuda.is_available()` then `False`) print them: into the gpu facts' `torch_devices`
(`torch.cuda.device_count()`) and `cuda_available` (`torch.cuda.is_available()`); a tensor the session printed on a
CUDA device (`tensor([...], device='cuda:0')`) is CUDA initialised (`cuda_init_error` "none": a context was made);
the `CUDA_VISIBLE_DEVICES=...` the session was started under (one value across the text; several: unknown) and
`torch.utils.collect_env`'s `Nvidia driver version:` line. Only a prompt's answer makes the text this kind: a
command's source or a sentence that names the calls answers nothing."""
from __future__ import annotations

import re
from typing import Any

from ..facts import NONE

_IN = re.compile(r"^In \[(\d+)\]: (.+)$")
_OUT = re.compile(r"^Out\[(\d+)\]: (.+)$")
# the Python prompt's `>>> ` is gone by the time a parser reads the text (pasted.py takes it for a nested markdown
# quote): its call is a line that holds the call alone, its answer the next line
_COUNT = re.compile(r"^(?:>>> )?(?:print\()?torch\.cuda\.device_count\(\)\)?\s*$")
_AVAILABLE = re.compile(r"^(?:>>> )?(?:print\()?torch\.cuda\.is_available\(\)\)?\s*$")
_ON_CUDA = re.compile(r"^(?:Out\[\d+\]: )?tensor\(.*\bdevice='cuda(?::\d+)?'")
_VISIBLE = re.compile(r"^(?:\$ )?(?:export )?CUDA_VISIBLE_DEVICES=(?:\"([^\"]*)\"|'([^']*)'|(\S*))(?:\s|$)")
_DRIVER = re.compile(r"^Nvidia driver version: (\d+\.\d+(?:\.\d+)?)\s*$")


def _answers(text: str) -> list[tuple[str, str]]:
    """(call, answer) for each prompt whose answer the session printed: IPython's by its cell number, the Python
    prompt's (a line that is the call alone) on the line after it."""
    lines = [line.strip() for line in text.splitlines()]
    calls: dict[str, str] = {}
    found: list[tuple[str, str]] = []
    for n, line in enumerate(lines):
        if m := _IN.match(line):
            calls[m.group(1)] = m.group(2).strip()
        elif (m := _OUT.match(line)) and m.group(1) in calls:
            found.append((calls.pop(m.group(1)), m.group(2).strip()))
        elif (_COUNT.match(line) or _AVAILABLE.match(line)) and n + 1 < len(lines) and lines[n + 1] and \
                not lines[n + 1].startswith((">>>", "...")):
            found.append((line, lines[n + 1]))
    return found


def _one(values: list[Any]) -> Any:
    """The value where the session printed one (the same each time), else None (unknown)."""
    return values[0] if values and len(set(values)) == 1 else None


def _asked(text: str) -> tuple[list[int], list[bool]]:
    answers = _answers(text)
    counts = [int(a) for c, a in answers if _COUNT.match(c) and a.isdecimal()]
    available = [a == "True" for c, a in answers if _AVAILABLE.match(c) and a in ("True", "False")]
    return counts, available


def detect(text: str) -> bool:
    return ("device_count()" in text or "is_available()" in text) and any(_asked(text))


def parse(text: str) -> dict[str, Any]:
    counts, available = _asked(text)
    lines = [line.strip() for line in text.splitlines()]
    visible = [next(g for g in m.groups() if g is not None) for line in lines if (m := _VISIBLE.match(line))]
    driver = _one([m.group(1) for line in lines if (m := _DRIVER.match(line))])
    return {"torch": None, "devices": None, "torch_devices": _one(counts), "cuda_available": _one(available),
            "cuda_init_error": NONE if any(_ON_CUDA.match(line) for line in lines) else None,
            "cuda_visible_devices": _one(visible), "driver": driver}
