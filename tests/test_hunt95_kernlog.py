"""hunt95, class 4 (kernel-log evidence): one GPU however its PCI address is spelt.

Defect (high: a broken node passed). "3 on one device within the lookback" (NVIDIA's Xid catalog: a watched Xid such
as 94, contained ECC, or 63, row remap pending, drains when it repeats on one GPU) counted the address as text: the
driver's Xid lines name `0000:3b:00`, its fallen-off-the-bus and NVML's lines `0000:3B:00.0` or `00000000:3b:00.0`,
a log forwarded through another tool upper-cases it, and a line cut at its domain names `3b:00`. Three Xid 94 on
one GPU under two spellings were two GPUs: no drain, a stalling GPU kept in service. Repro: a Prolog= run whose kernel
log holds `NVRM: Xid (PCI:0000:3b:00): 94, ...`, `NVRM: Xid (PCI:0000:3B:00): 94, ...` and
`NVRM: Xid (PCI:0000:3b:00.0): 94, ...` (or one per run over three runs): `prolog: PASS`. Fix:
verify/prolog/xid.py `device_key` (the domain a number, the hex case none, a GPU is function 0 of its device).

Practice: NVIDIA's Xid catalog (a watched Xid is acted on when it repeats on one GPU); the PCI address is
domain:bus:device.function, its hex digits case-free (lspci, NVML's pciBusId).
"""
from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest

from tests.prolog_fakes import PROLOG_ENV, _gpu, _report, _verify_writes, history_events, install_fake
from verify.prolog import cli, kernlog, xid

pytestmark = pytest.mark.unit


def _xid94(stamp: float, address: str) -> str:
    return f"[{stamp:12.6f}] NVRM: Xid (PCI:{address}): 94, pid=1, Contained ECC error."


SPELLINGS = [("0000:3b:00", "0000:3B:00", "0000:3b:00.0"), ("0000:3b:00", "00000000:3b:00", "3b:00"),
             ("0000:3B:00", "0000:3b:00.0", "0000:3B:00.0")]


@pytest.mark.parametrize("spelt", SPELLINGS, ids=["case-function", "domain", "upper-function"])
def test_nvidia_xid_catalog_a_watched_xid_three_times_on_one_gpu_drains_however_its_address_is_spelt(spelt):
    """Three Xid 94 on one GPU is "3 on one device" whatever the address's case, domain width or function."""
    lines = [_xid94(100.0 + i, a) for i, a in enumerate(spelt)]
    found = xid.judge(xid.parse(lines))
    assert found is not None and found[0] == "XID_REPEATED" and "3 times" in found[1]


def test_nvidia_xid_catalog_two_gpus_stay_two_gpus():
    """Another bus, device or domain is another GPU: two Xid 94 on one and one on another never drain."""
    for other in ("0000:3c:00", "0001:3b:00", "0000:3b:01"):
        lines = [_xid94(100.0, "0000:3b:00"), _xid94(101.0, "0000:3B:00"), _xid94(102.0, other)]
        assert xid.judge(xid.parse(lines)) is None, other
    assert xid.device_key("0000:3B:00.0") == xid.device_key("3b:00") == "0000:3b:00"


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch) -> Any:
    return install_fake(monkeypatch)


def test_nvidia_xid_catalog_one_spelling_per_run_still_adds_up_across_runs(tmp_path: Path, fake: Any,
                                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """Slurm's Prolog=, three runs an hour apart, each reading one more Xid 94 on one GPU as another tool spelt it:
    the third run drains the node (XID_REPEATED), as three in one spelling do."""
    _verify_writes(monkeypatch, json.dumps(_report(_gpu())).encode())
    state, t0, lines = tmp_path / "state", time.time(), []
    for n, address in enumerate(("0000:3b:00", "0000:3B:00.0", "00000000:3b:00")):
        up = 1e6 + n * 3600.0
        lines.append(_xid94(up - 60, address))
        now = t0 + n * 3600.0
        monkeypatch.setattr(kernlog, "host_clock", lambda proc=kernlog.PROC, now=now, up=up: kernlog.Clock(
            "boot-a", up, now - up, now))
        monkeypatch.setattr(kernlog, "read", lambda timeout, seen=list(lines): kernlog.KernelLog(seen, "journalctl"))
        cli.main(["--state-dir", str(state), "--lookback", "24"], dict(PROLOG_ENV))
    assert [e for e, _ in history_events(tmp_path)][:2] == ["pass", "pass"]
    assert fake.nodes["n1"][0] == "drained" and "XID_REPEATED" in fake.nodes["n1"][1]
