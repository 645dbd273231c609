"""Issue 36, the three lows the last session left, each reproduced through a public interface and fixed for its class.

1. A net plugin's policy line whose value equals the one it expects (GCP's config-checker shim,
   `NCCL/NET (shim) mismatch enforced: NCCL_MIN_NCHANNELS=4 (expected 4)`) was read as a refusal of the job's setting:
   the job was told to set NCCL_MIN_NCHANNELS to 4, the value it has (the nccl judge and `python -m verify.explain` on
   the log alike). Found: real (settings._refusal took the first shim line whatever its values). A line naming the
   value expected refuses nothing: it names no fault and gives no remedy. The refusal decides only on a line whose
   value differs (one such beside an equal one still does); where the equal lines and their failing returns are all
   the error says, no cause is shown, and the failure is judged as barefail.py judges such an error (the job's to
   read, never a drain; the line's words never make it the host's through the unnamed NCCL error's default).
   Practice: the shim's own check (it refuses a value other than the one it enforces) and the project's rule that a
   drain needs evidence against the node.
2. A wall-stamped kernel-log line from the future (past now + TORCHIMAGES_CLOCK_SKEW: journald stamped it while the
   clock ran fast) was no evidence when read (kernlog.future), yet its place in the log was counted read (the cursor
   counts lines without the kernel's stamp by position), so it was never read again, even once the clock had caught
   up: an Xid 79 logged so was lost for good. Found: real, behind a site wrapper that feeds wall-stamped lines (the
   prolog's own reader asks for the kernel's stamps). Repro: a Prolog= run reading `<now+1d> n1 kernel: NVRM: Xid
   ... 79`, then one a day later: PASS, nothing held. Fix (kernlog): the driver's lines of such a read are kept aside
   in the state (`deferred`, at most 500, the drain-worthy first, dropped with the boot) and read on the first run
   whose clock has caught up with them, once (not one read since with the kernel's stamp). Practice: NVIDIA's Xid
   catalog (79: drain) and the cursor's rule (tests/test_cluster_hunt81.py, hunt84.py): a line from the future is no
   evidence now and moves no cursor, and no line is skipped for good nor read twice.
3. The breaker's share counted every node sinfo listed, those Slurm's power saving had switched off too: in a
   partition of ten with eight powered off (`idle~`), one node up drained by us, the last node up was drained as 1 of
   10 against a 20 % breaker (allowed 2): the whole of the partition in service gone. Found: real. Fix
   (slurm.breaker): the share is of the nodes that could be in service; a node off or on its way off (sinfo's NODE
   STATE CODES: `~` powered off, `%` powering down, `!` to be powered down; `POWERED_DOWN`, `POWER_DOWN` (older
   Slurm's powered-off state), `POWERING_DOWN`, a `CLOUD` node not started; the same flags after `+` in
   StateComplete) is not counted, unless it is ours (drained by us, then powered off: still held against the share,
   or two of ours powered off would let the last node up go) or the node the prolog runs on; `#` (powering up) is
   counted (this node may be listed so while its prolog runs). The line says how many were left out. Practice:
   Slurm's sinfo state names (man sinfo, src/common/slurm_protocol_defs.c node_state_string) and NVSentinel's
   breaker (a share of the capacity, so that a fault on many nodes is never drained into an empty partition).
"""
from __future__ import annotations

import json
import re
import time
from pathlib import Path
from typing import Any

import pytest

from tests.judging import explained, nccl_verdict, verdict
from tests.prolog_fakes import PROLOG_ENV, _gpu, _report, _verify_writes, install_fake
from verify.checks import CHECKS
from verify.judging import judge
from verify.options import Options
from verify.prolog import cli, kernlog, slurm

pytestmark = pytest.mark.unit


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch) -> Any:
    return install_fake(monkeypatch)


# ---- 1: a policy line naming the value expected refuses nothing

EQUAL = "NCCL/NET (shim) mismatch enforced: NCCL_MIN_NCHANNELS=4 (expected 4)"
RETURN = "NCCL/NET (shim) /build/nccl-shim/src/guest_config_checker.cc:132 -> 4"
SHIM_LOG = """tcpxo-wb-0:890:890 [0] NCCL INFO NCCL version 2.28.7+cuda13.2
tcpxo-wb-0:890:890 [0] NCCL INFO NET/Plugin: Loaded net plugin config_checker_shim (v7)
tcpxo-wb-0:890:890 [0] NCCL INFO NCCL/NET (shim) activated shim layers, 'Guest Config Checker'
[2026-08-02 13:25:57] tcpxo-wb-0:890:890 [0] /build/nccl-shim/src/guest_config_checker.cc:101 NCCL WARN {line}
tcpxo-wb-0:890:890 [0] NCCL INFO NCCL/NET (shim) /build/nccl-shim/src/guest_config_checker.cc:132 -> 4
tcpxo-wb-0:890:890 [0] NCCL INFO ENV/Plugin: Closing env plugin ncclEnvDefault
"""


def _judged(error: str) -> Any:
    return judge(CHECKS["nccl"], {"backend": "nccl", "sizes": None, "error": error}, Options())


@pytest.mark.parametrize("line", [EQUAL, "NCCL/NET (shim) mismatch enforced: NCCL_ALGO=Ring (expected Ring )",
                                  "NCCL/NET (shim) mismatch enforced: NCCL_PROTO='Simple' (expected Simple)"])
def test_gcp_config_checker_a_line_naming_the_value_expected_gives_no_remedy_and_no_drain(line):
    for error in (f"init: {line}", f"init: {line} | {RETURN}"):
        r = _judged(error)
        assert verdict(r) == ("fail", "NCCL_FAILED", "job"), r.summary
        assert "to the value the node enforces" not in r.remedy and "refuses" not in r.summary, r.remedy
    r = explained(SHIM_LOG.format(line=line))
    assert verdict(r) == ("fail", "NCCL_FAILED", "job"), r.summary
    assert "to the value the node enforces" not in r.remedy, r.remedy


def test_gcp_config_checker_a_value_other_than_the_one_expected_is_still_the_refusal():
    differs = "NCCL/NET (shim) mismatch enforced: NCCL_MIN_NCHANNELS=8 (expected 4)"
    for error in (f"init: {differs}", f"init: {EQUAL} | {differs} | {RETURN}"):
        r = _judged(error)
        assert verdict(r) == ("fail", "NCCL_FAILED", "job")
        assert "Set NCCL_MIN_NCHANNELS to the value the node enforces (4)" in r.remedy
    r = explained(SHIM_LOG.format(line=differs))
    assert "Set NCCL_MIN_NCHANNELS to the value the node enforces (4)" in r.remedy


def test_an_equal_line_beside_a_node_s_own_fault_leaves_it_the_host_s():
    assert nccl_verdict(error=f"all_reduce: NCCL WARN NET/IB : retry counter exceeded | {EQUAL}")[2] == "host"


# ---- 2: a wall-stamped line from the future is read once its time has come

XID79 = "NVRM: Xid (PCI:0000:3b:00): 79, pid=1, GPU has fallen off the bus."
NOW, UP = 2_000_000_000.0, 50_000.0


def _iso(t: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S+0000", time.gmtime(t))


def _clock(at: float, boot: str = "boot-a") -> kernlog.Clock:
    return kernlog.Clock(boot, UP + at - NOW, NOW - UP, at)


def test_nvidia_xid_catalog_a_future_wall_stamped_xid_is_read_once_the_clock_reaches_it():
    lines = [f"{_iso(NOW - 60)} n1 kernel: nvidia: loading", f"{_iso(NOW + 86400)} n1 kernel: {XID79}"]
    state, held = kernlog.advance(kernlog.State("boot-a"), lines, _clock(NOW), 86400.0)
    assert held == [] and len(state.deferred) == 1          # no evidence yet, and kept aside
    state, held = kernlog.advance(state, lines, _clock(NOW + 3600), 86400.0)
    assert held == [] and len(state.deferred) == 1          # still from the future: waits
    state, held = kernlog.advance(state, lines, _clock(NOW + 86400 + 60), 86400.0)
    assert [f.code for f in held] == [79] and state.deferred == []
    # read once: a drain settles it, and no later read brings it back
    state, held = kernlog.advance(kernlog.settle(state), lines, _clock(NOW + 86400 + 120), 86400.0)
    assert held == []


def test_a_deferred_line_is_no_evidence_in_another_boot_and_other_lines_are_not_deferred():
    lines = [f"{_iso(NOW + 86400)} n1 kernel: usb 1-1: new device", f"{_iso(NOW + 86400)} n1 kernel: {XID79}"]
    state, _ = kernlog.advance(kernlog.State("boot-a"), lines, _clock(NOW), 86400.0)
    assert state.deferred == [f"{_iso(NOW + 86400)} n1 kernel: {XID79}"]
    _, held = kernlog.advance(state, [], _clock(NOW + 86400 + 60, "boot-b"), 86400.0)
    assert held == []


def test_a_deferred_line_read_since_with_the_kernel_s_stamp_is_not_read_twice():
    state, _ = kernlog.advance(kernlog.State("boot-a"), [f"{_iso(NOW + 600)} n1 kernel: {XID79}"], _clock(NOW), 86400.0)
    # the next reader gives the kernel's stamps: the Xid is read there (its true time), and a drain settles it
    state, held = kernlog.advance(state, [f"[{UP + 5:.6f}] {XID79}"], _clock(NOW + 10), 86400.0)
    assert [f.code for f in held] == [79]
    state, held = kernlog.advance(kernlog.settle(state), [f"[{UP + 5:.6f}] {XID79}"], _clock(NOW + 900), 86400.0)
    assert held == [] and state.deferred == []


def test_a_deferred_line_the_kernel_s_stamp_places_under_the_wall_cursor_is_still_read():
    """Logged at NOW-100 while the clock ran a day fast, beside a line stamped right at NOW-60: a reader giving the
    kernel's stamps next would skip it as read in wall time (under the wall cursor); it waited, so it is read there."""
    lines = [f"{_iso(NOW + 86400)} n1 kernel: {XID79}", f"{_iso(NOW - 60)} n1 kernel: nvidia: loading"]
    state, held = kernlog.advance(kernlog.State("boot-a"), lines, _clock(NOW), 86400.0)
    assert held == [] and state.wall == NOW - 60 and state.deferred
    state, held = kernlog.advance(state, [f"[{UP - 100:.6f}] {XID79}", f"[{UP - 60:.6f}] nvidia: loading"],
                                  _clock(NOW + 10), 86400.0)
    assert [f.code for f in held] == [79] and state.deferred == []


def test_the_deferred_lines_are_kept_bounded_and_refused_garbled(tmp_path):
    lines = [f"{_iso(NOW + 86400)} n1 kernel: NVRM: Xid (PCI:0000:3b:00): 94, pid=1, Contained ECC error."] * 600
    state, _ = kernlog.advance(kernlog.State("boot-a"), [*lines, f"{_iso(NOW + 86400)} n1 kernel: {XID79}"],
                               _clock(NOW), 86400.0)
    assert len(state.deferred) == kernlog.HELD_MAX and any("79," in x for x in state.deferred)
    assert kernlog.save(str(tmp_path), "n1", state) is None
    assert kernlog.load(str(tmp_path), "n1")[0].deferred == state.deferred
    path = Path(kernlog.state_path(str(tmp_path), "n1"))
    path.write_text(json.dumps({**json.loads(path.read_text()), "deferred": [1]}))
    kept, why = kernlog.load(str(tmp_path), "n1")
    assert kept.deferred == [] and "garbled" in (why or "")


def test_the_gate_drains_on_a_future_wall_stamped_xid_once_the_clock_reaches_it(tmp_path, fake, monkeypatch, capsys):
    _verify_writes(monkeypatch, json.dumps(_report(_gpu())).encode())
    now, up = time.time(), 1e6
    lines = [f"{_iso(now - 60)} n1 kernel: nvidia: loading", f"{_iso(now + 86400)} n1 kernel: {XID79}"]

    def run(at: float) -> int:
        monkeypatch.setattr(kernlog, "host_clock", lambda proc=kernlog.PROC: kernlog.Clock(
            "boot-a", up + at - now, now - up, at))
        monkeypatch.setattr(kernlog, "read", lambda timeout: kernlog.KernelLog(list(lines), "journalctl"))
        return cli.main(["--state-dir", str(tmp_path / "state"), "--lookback", "48"], dict(PROLOG_ENV))

    assert run(now) == 0
    assert "not evidence until the clock reaches it" in capsys.readouterr().err
    assert run(now + 86400 + 60) == 1, capsys.readouterr()
    assert fake.nodes["n1"][0] == "drained" and "XID_HISTORY" in fake.nodes["n1"][1]


# ---- 3: the breaker counts the nodes that could be in service

OFF = ["idle~", "IDLE~", "down~", "idle%", "idle!", "powered_down", "POWER_DOWN", "powering_down", "cloud",
       "idle+cloud+powered_down", "IDLE+POWERING_DOWN", "mixed+power_down"]
UP_STATES = ["idle", "idle#", "mixed#", "allocated", "down*", "drained", "idle+cloud", "completing", "maint$",
             "reserved", "idle-"]


@pytest.mark.parametrize("state", OFF)
def test_slurm_sinfo_state_codes_a_node_powered_off_is_no_capacity(state):
    assert slurm.NodeRow("n9", state, "none").powered_off


@pytest.mark.parametrize("state", UP_STATES)
def test_slurm_sinfo_state_codes_a_node_in_service_or_powering_up_is_counted(state):
    assert not slurm.NodeRow("n9", state, "none").powered_off


def _ours(node: str, state: str = "drained") -> slurm.NodeRow:
    return slurm.NodeRow(node, state, slurm.reason(node, "XID_HISTORY", "Xid 79", time.time() - 60))


def test_nvsentinel_breaker_a_partition_mostly_powered_down_is_counted_on_the_nodes_up():
    rows = [slurm.NodeRow("n1", "idle", "none"), _ours("n2"), *(slurm.NodeRow(f"n{i}", "idle~", "none")
                                                                for i in range(3, 11))]
    gate = slurm.breaker(rows, "n1", 0.2)
    assert (gate.total, gate.drained_ours, gate.allowed, gate.open) == (2, 1, 1, True)
    assert "1 of 2 node(s) of partition gpu (8 more powered off, not counted)" in gate.line(0.2, "gpu")
    # ours, powered off since, still holds its place (else two of ours powered off would let the last node up go)
    rows = [slurm.NodeRow("n1", "idle", "none"), _ours("n2", "drained~"), slurm.NodeRow("n3", "idle", "none"),
            *(slurm.NodeRow(f"n{i}", "idle~", "none") for i in range(4, 11))]
    gate = slurm.breaker(rows, "n1", 0.2)
    assert (gate.total, gate.drained_ours, gate.open) == (3, 1, True)
    # this node is counted whatever sinfo says of it (its prolog runs: powering up, or a stale power flag)
    assert slurm.breaker([slurm.NodeRow("n1", "idle~", "none")], "n1", 0.2).total == 1
    # nothing powered off: the count is unchanged, and the line as before
    rows = [slurm.NodeRow(f"n{i}", "idle", "none") for i in range(1, 5)]
    assert slurm.breaker(rows, "n1", 0.25).line(0.25, "test") == (
        "0 of 4 node(s) of partition test already drained by torchimages; the breaker allows 1 (25%)")


def test_the_gate_keeps_the_last_node_up_of_a_partition_mostly_powered_down(tmp_path, fake, monkeypatch, capsys):
    slow = {"name": "nccl", "status": "fail", "code": "BANDWIDTH_LOW", "owner": "host", "summary": "busbw 40 GB/s",
            "metrics": {"busbw_max": {"value": 40.0, "unit": "GB/s"}}}
    fake.nodes = {"n1": ("idle", "none"), "n2": ("drained", _ours("n2").reason_text),
                  **{f"n{i}": ("idle~", "none") for i in range(3, 11)}}
    _verify_writes(monkeypatch, json.dumps(_report(_gpu(), slow)).encode())
    rc = cli.main(["--state-dir", str(tmp_path / "state"), "--no-kernel-log"],
                  {**PROLOG_ENV, "TORCHIMAGES_BREAKER": "0.2"})
    err = capsys.readouterr().err
    assert fake.nodes["n1"] == ("idle", "none"), err
    assert rc == 0 and re.search(r"BREAKER BANDWIDTH_LOW on n1 .* 1 of 2 node\(s\) .*8 more powered off", err), err
