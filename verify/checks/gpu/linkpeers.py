"""NVLink links inactive on two or more GPUs of one node: the one transient rule's "the same reading on its peers"
(FACTS.md). A link joins two GPUs and a broken one reads inactive from both of its ends; a retrain that a single read
caught half-way is one GPU's moment, never a pattern across the board. So some (not all) links inactive on two or
more GPUs confirm each other in one read, as a slowdown on two GPUs does. Only on a model whose NVLinks are wired on
its board (verify/baselines.json `nvlink`): a bridged PCIe SKU's fixed pattern of inactive links is its design
(gpuhealth.nvlink), and a model the table does not know may be one."""
from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any


def partly_down(devices: Iterable[Mapping[str, Any]], wired: Callable[[Any], bool]) -> set[Any]:
    """The indices of the GPUs of a `wired` model that show some, not all, of their NVLink links inactive in a read."""
    def reads(dev: Mapping[str, Any]) -> list[Any]:
        return [dev.get("nvlink")] + [s.get("nvlink") for s in dev.get("samples") or [] if isinstance(s, dict)]
    return {d.get("index") for d in devices if wired(d)
            and any(isinstance(r, list) and False in r and True in r for r in reads(d))}
