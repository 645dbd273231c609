"""A GPU whose every live read NVML answers with an error (nvidia-smi's `ERR!` in its name, temperature, power, ECC
...) while only the static fields (bus id, memory size, persistence) come back: it no longer answers the driver, a GPU
lost to work until it is reset, not one "not assessed". A field or two in error (a fan, one power read) is not this:
gpuhealth.cooling_unread warns on those. Pure."""
from __future__ import annotations

from ...facts import NvmlDevice
from ...findings import Findings
from ...result import FAIL
from ...shared.gpumemory import where

# what NVML reads live from the GPU (the table's columns and `-q`'s), as FACTS.md names them in `nvml_errors`
LIVE = ("name", "temperature_c", "power_w", "power_limit_w", "fan_speed", "performance_state", "utilization",
        "ecc_volatile_uncorrectable", "sm_clock_mhz", "mig")
# the live reads whose value, read, would show the GPU still answering; not its name, which the driver keeps from
# the board's attach and the table prints beside a row of ERR! (a10g-g5-48xlarge-...-gpu0-err-fan-temp-perf-mig-...)
VALUES = ("temperature_c", "power_w", "power_limit_w", "ecc_volatile_uncorrectable", "sm_clock_mhz")
MIN_ERRORS = 4       # beyond a cooling pair: the identity, thermal, power and memory reads all failing
# one value read beside this many errors is the row's exception, not a GPU that answers: dcgm-exporter#46's A100 row
# printed `1W / N/A` beside ERR! in temperature, fan, pstate, utilisation, ECC and MIG (a live A100 draws tens of W)
MIN_ERRORS_BESIDE_ONE = 6


def silent(dev: NvmlDevice) -> list[str]:
    """The live fields in error where no live field was read (or one, beside MIN_ERRORS_BESIDE_ONE errors), or []
    when the GPU still answers."""
    errors = dev.get("nvml_errors") or {}
    bad = [k for k in LIVE if k in errors]
    read = sum(1 for k in VALUES if dev.get(k) is not None)
    if len(bad) < MIN_ERRORS or read > 1 or (read == 1 and len(bad) < MIN_ERRORS_BESIDE_ONE):
        return []
    return bad


def lost(dev: NvmlDevice, found: Findings) -> bool:
    bad = silent(dev)
    if not bad:
        return False
    found.add(FAIL, "GPU_LOST", f"{where(dev)} answers every live NVML read with an error ({', '.join(bad)}): the GPU "
              "no longer answers the driver", f"Drain the node; read `dmesg` for the Xid on "
              f"{dev.get('pci_bus_id') or 'this GPU'}; reset it (`nvidia-smi -r`) or reboot the node; if it recurs, "
              "RMA the GPU.", "host", dev.get("index"))
    return True
