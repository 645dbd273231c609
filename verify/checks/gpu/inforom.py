"""A GPU whose InfoROM is corrupted (NVML's NVML_ERROR_CORRUPTED_INFOROM, pynvml's `CorruptedInforom`; nvidia-smi's
`WARNING: infoROM is corrupted at gpu ...` and exit code 14; DCGM's `A corrupt InfoROM has been detected in GPU N`).
The InfoROM is where the GPU keeps its ECC object: the lifetime ECC counts and the retired pages that must survive a
reset. The GPU still computes, but its memory-error bookkeeping cannot be trusted, and NVIDIA's remedy is a reflash or
a replacement: a warning, the host's, under ECC_UNCORRECTABLE (no code names the InfoROM; ECC's protection is what it
breaks, as ECC disabled on a data-centre GPU is)."""
from __future__ import annotations

from ...facts import NvmlDevice
from ...findings import Findings
from ...result import WARN
from ...shared.inforom import CORRUPTED as CORRUPTED
from ...shared.inforom import said as said


def corrupted(dev: NvmlDevice, found: Findings, where: str) -> None:
    if errors := said(dev):
        found.add(WARN, "ECC_UNCORRECTABLE", f"{where}: its InfoROM is corrupted ({'; '.join(errors)}): the ECC counts "
                  "and retired pages it keeps across resets cannot be trusted", "Drain the node at the next window and "
                  "have the GPU's InfoROM reflashed by the vendor, or RMA the GPU (NVIDIA: replace the faulty GPU); "
                  "`nvidia-smi` exits 14 until then.", "host", dev.get("index"))
