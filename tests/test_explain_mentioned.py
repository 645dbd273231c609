"""Text that merely mentions a tool's message (a README's "If you see ...", a how-to's "See ... in the docs", a code
span inside a sentence) gives no verdict; the same message as the tool prints it, under any launcher's prefix or
quoted whole by a poster, keeps its verdict (verify/explain/said.py's `mentioned`, one rule for every kind)."""
from __future__ import annotations

import pytest

from verify import explain as ex
from verify.explain.said import mentioned
from verify.options import Options

pytestmark = pytest.mark.unit


def explained(text: str) -> tuple[str, str | None, str | None]:
    r = ex.explain_text(text, "excerpt.txt", Options())
    return r.status, r.code, r.owner


KERNEL = "NVRM: Xid (PCI:0000:3b:00): 79, pid=1234, name=python, GPU has fallen off the bus."
RELAY = "Detected XID 79 for GPU 0"
REFUSAL = "CUDA initialization: Unexpected error from cudaGetDeviceCount(). Error 802: system not yet initialized"
MEMLOCK = "NCCL WARN Call to ibv_reg_mr_iova2 failed with error Cannot allocate memory"
NCCL = ("ncclSystemError: System call (e.g. socket, malloc) or external library call failed or device error.")
DCGM = 'DCGM_FI_DEV_ECC_DBE_VOL_TOTAL{gpu="0",UUID="GPU-1a2b",pci_bus_id="00000000:3B:00.0"} 3'

MENTIONS = {
    "kernel": [f"See {KERNEL} in the docs", f"If dmesg shows `{KERNEL}`, drain the node.",
               "See NVRM: Xid (PCI:0000:3b:00): 79 in the docs"],
    "relay": [f"DCGM logs `{RELAY}` when a GPU falls off the bus.", f"If the health check says {RELAY}, reboot."],
    "refusal": ["If CUDA initialization fails with Error 802: system not yet initialized, start the fabric manager.",
                f"See `{REFUSAL}` in the FAQ.", "When you see Error 802: system not yet initialized, reboot."],
    "memlock": ["If NCCL prints `Call to ibv_reg_mr_iova2 failed with error Cannot allocate memory`, raise ulimit -l.",
                "e.g. ibv_reg_mr_iova2 failed: Cannot allocate memory means the memlock limit is low."],
    "nccl": ["If NCCL says ncclSystemError, check the network.", f"When torch raises `{NCCL}` read the Last error."],
    "dcgm": [f"The alert fires when {DCGM} is above zero.", f"e.g. {DCGM} means the GPU saw a double-bit error.",
             "If DCGM_FI_DEV_ECC_DBE_VOL_TOTAL is 5 or more, drain the node."],
}


@pytest.mark.parametrize("text", [t for texts in MENTIONS.values() for t in texts])
def test_a_message_prose_mentions_gives_no_verdict(text):
    status, code, owner = explained(text + "\n")
    assert owner != "host" and status != "fail", (status, code, text)


PRINTED = [
    (f"[ 1234.567890] {KERNEL}", ("fail", "GPU_LOST", "host")),
    (f"Jan 25 10:34:54 node01 kernel: {KERNEL}", ("fail", "GPU_LOST", "host")),
    (f"got this in dmesg: {KERNEL}", ("fail", "GPU_LOST", "host")),
    (f"`{KERNEL}`", ("fail", "GPU_LOST", "host")),
    (f"Error: {RELAY}", ("fail", "GPU_LOST", "host")),
    (f"2024-05-01T12:00:00Z {RELAY}", ("fail", "GPU_LOST", "host")),
    (f"[rank3]: {REFUSAL}", ("fail", "DRIVER_ERROR", "host")),
    ("Error (gpu_burn-drv.cpp:298): system not yet initialized", ("fail", "DRIVER_ERROR", "host")),
    (f"0: {MEMLOCK}", ("fail", "FABRIC_MEMLOCK_LOW", "host")),
    (NCCL, ("fail", "NCCL_FAILED")),
    ("[rank1]: torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp"
     ":1970, unhandled system error (run with NCCL_DEBUG=INFO for details), NCCL version 2.20.5", ("fail", "NCCL_FAILED")),
    (DCGM, ("fail", "ECC_UNCORRECTABLE", "host")),
    ("| `DCGM_FI_DEV_ECC_DBE_VOL_TOTAL` | 3 |", ("fail", "ECC_UNCORRECTABLE", "host")),
    (f"the exporter shows: {DCGM}", ("fail", "ECC_UNCORRECTABLE", "host")),
]


@pytest.mark.parametrize("text, expected", PRINTED)
def test_the_message_as_printed_keeps_its_verdict(text, expected):
    assert explained(text + "\n")[:len(expected)] == expected


def test_the_mention_rule():
    line = "If dmesg shows `NVRM: Xid (PCI:0000:3b:00): 79`, drain"
    assert mentioned(line, line.index("NVRM"))
    assert not mentioned("[ 12.5] NVRM: Xid (PCI:0000:3b:00): 79", 8)
    assert not mentioned("| `DCGM_FI_DEV_ECC_DBE_VOL_TOTAL` | 3 |", 3)             # a table's cell is a value
    assert not mentioned("ncclSystemError: System call (e.g. socket) failed", 0)      # the cue follows it
    assert mentioned("Fixed: see NVRM: Xid 79", 13) and not mentioned("See the log. NVRM: Xid 79", 13)
