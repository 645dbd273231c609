"""The `Key: value` environment report of OpenMMLab's `collect_env` and the tools that copy it (sglang's
`python -m sglang.check_env`, lmdeploy's `check_env`, mmcv/mmengine): what torch answered about the GPUs, read into
the gpu facts (issue 35, batch 127: h800-x8-sglang-pd-mooncake-register-memory-bad-address-14-...):
- `PyTorch: 2.6.0+cu124`: `torch`, and its `+cuNNN` build tag `torch_cuda` (`12.4`; `+cpu`, a CPU build: `"none"`);
- `CUDA available: True`: `cuda_available`;
- `GPU 0,1,2,3,4,5,6,7: NVIDIA H800` (torch's device names, the GPUs of one name grouped on one line): each index
  one device, its index and name (the names an inventory gives, no health field);
- `CUDA Driver Version: 535.230.02` (sglang's word for the driver's version): `driver`.
`GPU ... Compute Capability`, `CUDA_HOME` and `NVCC` (the toolkit on the PATH, not what torch runs with) are not
read. The report holds no health field: the judge says the GPUs are not assessed, never healthy; beside a read of
the same GPUs (`nvidia-smi topo -m` under sglang's `NVIDIA Topology:`) it is an inventory that read answers
(explain/inventory.py). Only its own `CUDA available` line with its `PyTorch` line makes the text this kind
(torch's collect_env spells them `Is CUDA available` and `PyTorch version`: explain/collectenv.py)."""
from __future__ import annotations

import re
from typing import Any

from ..facts import NONE

_BOOL = {"True": True, "False": False}
_GPUS = re.compile(r"^GPU ((?:\d+,)*\d+): (.*\S)\s*$", re.MULTILINE)


def _value(text: str, key: str) -> str | None:
    m = re.search(rf"^{re.escape(key)}:[ \t]*(\S.*?)[ \t]*$", text, re.MULTILINE)
    return m.group(1) if m else None


def detect(text: str) -> bool:
    return _value(text, "CUDA available") in _BOOL and bool(re.fullmatch(r"\d+\.\d+\S*", _value(text, "PyTorch") or ""))


def _devices(text: str) -> list[dict[str, Any]] | None:
    found = {int(i): name for ids, name in _GPUS.findall(text) if not name.startswith("Compute Capability")
             for i in ids.split(",")}
    return [{"index": i, "name": found[i]} for i in sorted(found)] or None


def parse(text: str) -> dict[str, Any]:
    torch = _value(text, "PyTorch")
    built = re.search(r"\+cu(\d+)(\d)$", torch or "")
    driver = _value(text, "CUDA Driver Version")
    cuda = f"{int(built.group(1))}.{built.group(2)}" if built else NONE if (torch or "").endswith("+cpu") else None
    return {"torch": torch, "torch_cuda": cuda,
            "cuda_available": _BOOL.get(_value(text, "CUDA available") or ""),
            "driver": driver if driver and re.fullmatch(r"\d+\.\d+(?:\.\d+)?", driver) else None,
            "devices": _devices(text)}
