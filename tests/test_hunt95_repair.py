"""hunt95, class 3 (return to service must prove the repair): a GPU reset of another board repairs nothing here.

Defect (high: a broken node returned unproven). A node drained for a lost GPU (GPU_LOST, whose repair NVIDIA's Xid
catalog names as a GPU reset or a reboot) was resumed by `make undrain` on a reset record naming a GPU the node does
not have (`logger -t nvsentinel-gpu-reset ... "GPU reset executed: GPU-deadbeef-..., success: true"`: a line copied
from another node's runbook, a UUID mistyped), its preflight passing: no reset of any of its own boards, no reboot.
Repro: `python -m verify.prolog --revalidate --node n1` on the drained node, the journal holding only that record,
the preflight listing 8 GPUs by UUID: `RESUMED n1`. Fix: verify/prolog/repair.py (`reset_gpus`, `foreign_reset`): the
reset taken for the repair must name a GPU the passing preflight lists (NVML's UUID is the board's own), else
REPAIR_UNPROVEN (exit 3), the node stays drained. A report listing no UUID counts any GPU's reset, as before.

Practice: NVSentinel's return to service (its reset job records `GPU reset executed: GPU-<uuid>, success: true`
after `nvidia-smi -r -i <uuid>`, and its syslog monitor takes that record as the remediation of that GPU's Xid);
NVIDIA's Xid catalog actions (reset the GPU, or reboot).
"""
from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest

from tests.prolog_fakes import _gpu, _nccl, _report, _shm, _verify_writes, drained, install_fake
from verify.prolog import cli, history, kernlog, repair, slurm

pytestmark = pytest.mark.unit

UNDRAIN_ENV = {"SLURMD_NODENAME": "n1"}
UUIDS = [f"GPU-{i:08x}-1111-2222-3333-444444444444" for i in range(8)]


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch) -> Any:
    return install_fake(monkeypatch)


def _node_passes(monkeypatch: pytest.MonkeyPatch, uuids: list[str] | None = UUIDS) -> None:
    """The preflight passes with the node's 8 GPUs, each listed by its UUID (None: listed without one)."""
    devices = [{"index": i, "ecc": [True, True], **({"uuid": uuids[i]} if uuids else {})} for i in range(8)]
    _verify_writes(monkeypatch, json.dumps(_report(_gpu(data={"devices": devices}), _shm(), _nccl())).encode())


def _resets(monkeypatch: pytest.MonkeyPatch, *records: tuple[str, bool]) -> None:
    """This boot's reset records, each logged a minute ago (after the drain, an hour ago); no reboot since."""
    monkeypatch.setattr(kernlog, "boot_time", lambda proc=kernlog.PROC: time.time() - 86400.0)
    monkeypatch.setattr(repair, "read_resets", lambda timeout: (
        [repair.Reset(time.time() - 60.0, uuid.lower(), ok) for uuid, ok in records], ""))


def _undrain(state: str) -> list[str]:
    return ["--state-dir", state, "--no-kernel-log", "--revalidate", "--node", "n1"]


def test_nvsentinel_return_to_service_a_reset_of_a_gpu_the_node_does_not_have_is_no_repair(
        tmp_path: Path, fake: Any, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """A reset record naming a board none of the node's GPUs is proves no repair of this node: it stays drained
    (REPAIR_UNPROVEN, exit 3), the line naming the reset and how to record the right one."""
    state = drained(tmp_path, fake, "GPU_LOST", "gpu")
    _node_passes(monkeypatch)
    _resets(monkeypatch, ("GPU-deadbeef-0000-0000-0000-000000000000", True))
    assert cli.main(_undrain(state), UNDRAIN_ENV) == 3
    said = capsys.readouterr()
    assert fake.nodes["n1"][0] == "drained" and "REPAIR_UNPROVEN" in said.err and "gpu-deadbeef" in said.out


def test_nvsentinel_return_to_service_a_reset_of_one_of_its_own_gpus_returns_it(
        tmp_path: Path, fake: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """The reset of one of its own GPUs (any case the record gives) is the repair: resumed, as before."""
    state = drained(tmp_path, fake, "GPU_LOST", "gpu")
    _node_passes(monkeypatch)
    _resets(monkeypatch, ("GPU-deadbeef-0000-0000-0000-000000000000", True), (UUIDS[3].upper(), True))
    assert cli.main(_undrain(state), UNDRAIN_ENV) == 0 and fake.nodes["n1"] == ("idle", "none")


def test_nvsentinel_return_to_service_a_report_listing_no_uuid_counts_any_gpus_reset(
        tmp_path: Path, fake: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """A preflight that lists no UUID cannot tell one board from another: any GPU's reset counts (the documented
    limit), so the rule refuses nothing it cannot see."""
    state = drained(tmp_path, fake, "GPU_LOST", "gpu")
    _node_passes(monkeypatch, None)
    _resets(monkeypatch, ("GPU-deadbeef-0000-0000-0000-000000000000", True))
    assert cli.main(_undrain(state), UNDRAIN_ENV) == 0 and fake.nodes["n1"] == ("idle", "none")


def test_nvsentinel_return_to_service_the_reset_gpus_are_picked_as_the_repair_rule_picks_them() -> None:
    """Only successful resets after the drain name the GPUs taken for the repair: a failed one, or one before the
    drain, repairs nothing (pure: repair.reset_gpus)."""
    clock = kernlog.Clock("boot-a", 6000.0, time.time() - 6000.0, time.time())
    drain = {"event": "drain", "code": "GPU_LOST", "epoch": time.time() - 3600.0}
    seen = [repair.Reset(time.time() - 7200.0, "gpu-old", True), repair.Reset(time.time() - 60.0, "gpu-new", True),
            repair.Reset(time.time() - 30.0, "gpu-failed", False)]
    assert repair.reset_gpus(drain, None, clock, seen) == frozenset({"gpu-new"})
    assert repair.foreign_reset(frozenset({"gpu-new"}), {"checks": [{"name": "gpu", "data": {"devices": [
        {"uuid": "GPU-NEW"}]}}]}) is None


# ---- the reset of the GPU the drain named, not of another of the node's GPUs

def _drained_naming(tmp_path: Path, fake: Any, code: str, faulted: list[str]) -> str:
    """n1 drained an hour ago for `code`, its history line naming the faulted GPU(s) as the gate now keeps them."""
    t0 = time.time() - 3600
    fake.info = {"Gres": "gpu:8"}
    fake.nodes["n1"] = ("drained", slurm.reason("n1", code, "x", t0))
    state = str(tmp_path / "state")
    history.record(state, "n1", "drain", code, "x", now=t0, extra={"gpus": 8, "check": "gpu", "faulted": faulted})
    return state


def _node_passes_on_bus(monkeypatch: pytest.MonkeyPatch) -> None:
    devices = [{"index": i, "ecc": [True, True], "uuid": UUIDS[i], "pci_bus_id": f"00000000:{0x10 + i:02X}:00.0"}
               for i in range(8)]
    _verify_writes(monkeypatch, json.dumps(_report(_gpu(data={"devices": devices}), _shm(), _nccl())).encode())


@pytest.mark.parametrize("faulted", [[UUIDS[3].lower()], ["0000:13:00"]], ids=["lost-uuid", "xid-pci"])
def test_nvidia_xid_catalog_the_reset_must_be_of_the_gpu_the_drain_named(tmp_path, fake, monkeypatch, capsys, faulted):
    """NVIDIA's Xid catalog asks to reset the GPU the Xid names (NVSentinel resets that one, by its UUID): a reset of
    another GPU of the node (GPU 0) beside a lost GPU 3, or an Xid 79 on GPU 3's bus, is no repair (REPAIR_UNPROVEN,
    exit 3); GPU 3's own reset returns it."""
    state = _drained_naming(tmp_path, fake, "GPU_LOST", faulted)
    _node_passes_on_bus(monkeypatch)
    _resets(monkeypatch, (UUIDS[0], True))
    assert cli.main(_undrain(state), UNDRAIN_ENV) == 3 and fake.nodes["n1"][0] == "drained"
    assert "no successful reset recorded" in capsys.readouterr().out
    _resets(monkeypatch, (UUIDS[0], True), (UUIDS[3], True))
    assert cli.main(_undrain(state), UNDRAIN_ENV) == 0 and fake.nodes["n1"] == ("idle", "none")


def test_nvidia_xid_catalog_a_faulted_gpu_the_report_cannot_place_asks_for_any_reset(tmp_path, fake, monkeypatch):
    """An Xid's bus the passing report lists no UUID for cannot be told from another GPU: any GPU's reset counts
    (the documented limit), and a drain line with no `faulted` (an older prolog's) is read as before."""
    state = _drained_naming(tmp_path, fake, "XID_HISTORY", ["0000:99:00"])
    _node_passes_on_bus(monkeypatch)
    _resets(monkeypatch, (UUIDS[0], True))
    args = ["--state-dir", state, "--revalidate", "--node", "n1", "--return-passes", "1"]
    monkeypatch.setattr(kernlog, "read", lambda timeout: kernlog.KernelLog([], "journalctl"))
    assert cli.main(args, UNDRAIN_ENV) == 0 and fake.nodes["n1"] == ("idle", "none")


def test_nvidia_xid_catalog_the_gate_keeps_the_faulted_gpus_with_its_drain():
    """What the drain keeps: each drain-worthy Xid's bus however spelt, a watched Xid's only where it repeated, each
    GPU the report calls lost; an application's Xid (13) names no faulted GPU."""
    lines = ["[ 5.0] NVRM: Xid (PCI:0000:3B:00): 79, pid=1, GPU has fallen off the bus.",
             "[ 6.0] NVRM: Xid (PCI:0000:3c:00): 13, pid=1, Graphics Exception",
             "[ 7.0] NVRM: Xid (PCI:0000:3d:00): 94, pid=1, Contained ECC error."]
    report = {"checks": [{"name": "gpu", "data": {"devices": [{"uuid": "GPU-ABC", "lost": True}, {"uuid": "GPU-DEF"},
                                                              {"pci_bus_id": "00000000:5E:00.0", "lost": True}]}}]}
    assert repair.faulted_gpus(report, lines) == ["0000:3b:00", "0000:5e:00", "gpu-abc"]
    assert repair.faulted_gpus(None, []) is None
    thrice = [f"[ {t}.0] NVRM: Xid (PCI:{a}): 94, pid=1, Contained ECC error." for t, a in
              ((5, "0000:3d:00"), (6, "0000:3D:00"), (7, "0000:3d:00.0"))]
    assert repair.faulted_gpus(None, thrice) == ["0000:3d:00"]
