"""Issue 36, an eighty-first hunt through the public interfaces (`python -m verify.prolog`'s main under Prolog=, make
fleet-report's reader and the prolog's report rule), classes 1, 2, 4, 6, 7 and 8.

Found:
- Class 4, kernel-log evidence counted within its lookback (high: a healthy node drained). NVIDIA's catalog drains
  on a watched Xid (94 contained ECC, 92, 63, 32 ...) only when it repeats on one device within --lookback, and the
  kernel's stamp ages each held event. A line without the kernel's stamp (`journalctl -o short-iso` from a wrapper
  that ignored the format, a log stamped in wall time, `dmesg` of a kernel with printk.time off) was held with no
  stamp and never aged: three Xid 94 of one GPU two days apart each (lookback 24 h) drained the node as
  XID_REPEATED. Repro: three Prolog= runs, two days apart, each reading one more `<iso> n1 kernel: NVRM: Xid
  (PCI:0000:3b:00): 94, ...` line: DRAINED n1. Practice: NVIDIA's Xid catalog ("3 on one device within the lookback",
  xid.REPEATS). Fix (verify/prolog/kernlog._aged): such an event ages by its line's wall stamp, else by when it was
  first read (`read`, kept with it; a first read stamped in the future by a clock that ran ahead tells no age:
  aged); a drain-worthy one is kept until acted on, as before.
- Class 4 again, evidence kept until acted on (high: a broken node kept in service). After a kept cursor every unread
  line with the kernel's stamp is evidence however old (a node idle over a weekend); a line stamped in wall time was
  still cut at --lookback on every read: an Xid 79 (or 48, 95 ...) logged just after one prolog, on a node idle two
  days, was dropped unread by the next. Repro: a Prolog= run reading one wall-stamped line, then one two days later
  whose log adds `<iso> n1 kernel: NVRM: Xid (PCI:0000:3b:00): 79, ...` stamped two days ago: PASS, no drain.
  Practice: NVIDIA's Xid catalog (79: drain, reset or reboot) and issue 36's rule (kept until acted on). Fix
  (kernlog._stale): the lookback bounds a boot's first read only; a line from before this boot is still none, and
  one stamped at or before the kernel-stamped cursor was read already (a reader that switched from the kernel's
  stamps to wall stamps re-read the Xid 79 a drain had spent, and drained the node resumed since). The other way too
  (kernlog.State.wall, a cursor in wall time): a reader that gave wall stamps, then the kernel's, re-read every line
  of the lookback (an Xid 79 spent by its drain drained the resumed node again).
- Class 6, facts that cannot be true, in the train record kind (high: a broken node counted healthy). Both readers
  (the prolog's report rule and make fleet-report's, scripts/fleet/plausible.py) held the gpu and nccl checks' facts
  and none of the train check's: a collective's report (make slurm's nccl.json, `--checks nccl,train`) whose train
  check passed with its replicas' last steps disagreeing (verify's TRAIN_REPLICA_MISMATCH: silent data corruption on
  a node), a loss that rose 7.1 -> 7.5 (TRAIN_LOSS_NOT_FALLING), 2 replicas in a world of 1, 3 nodes where every
  replica named one, an MFU of 15.4 (a percent: a unit off by 100), a negative loss or first step, world_size "1" or
  3 steps was "fleet: PASSING". Repro: the h100 train report of tests/data with replicas [rank 0 checksum a, rank 1
  checksum b] and world_size 2: make fleet-report exit 0. Practice: verify's own train judge (what it fails is no
  pass) and the project's first rule. Fix: verify/prolog/passfacts.py and scripts/fleet/passfacts.py (one text),
  read after the ranks rule by both: REPORT_INVALID / invalid, never a pass, never a drain. Every report of the
  real-world corpus is still accepted (tests/test_cluster_hunt55.py).
- Class 6, the host record kind (high: a node with a /dev/shm too small passed the prolog). verify's shm check
  allocates and touches `required` bytes in /dev/shm, whose `size` (a tmpfs's hard limit) bounds it: a pass with size
  64 MiB and required 1 GiB, or with more free than size, is no report verify writes, and it hid SHM_TOO_SMALL (the
  host's, a drain). Both readers passed it (prolog exit 0, "fleet: PASSING"). Repro: a preflight report whose shm
  check passes with size 67108864, free 67108864, required 1073741824 bytes: prolog PASS. Fix: the same modules
  (passfacts._shm_problem): REPORT_INVALID / invalid.
- Class 6, the nccl record kind, units and counts that disagree (medium: a slow link read fast). nccl-tests'
  arithmetic (verify/checks/nccl/collective.py) makes busbw = algbw x the collective's factor (0.5x to 2x): a pass
  whose busbw_max is ten times its algbw_max (a slow all-reduce read ten times faster, past BANDWIDTH_LOW), or whose
  world_size figure says 16 and its data 8, was believed by both readers. Fix: passfacts._nccl_problem.
- Class 6, counts that disagree (medium: a pass where verify fails; a return to service on GPUs never exercised).
  Asked --expect-gpus 8, verify's gpu check fails when torch sees fewer (GPU_NOT_VISIBLE); the prolog counted NVML's
  devices alone: a pass counting torch_devices 4 beside nvml_devices 8 passed a node Slurm gave 8 (exit 0, `pass`),
  and `make undrain` resumed a GPU_LOST drain on it, 4 GPUs never running a kernel. Repro: that report as Prolog=
  with SLURM_GPUS_ON_NODE=8: PASS. Practice: verify's own judge and NVSentinel's return to service (every GPU the node
  should have, proven). Fix (verify/prolog/notes.proven_gpus, read by the gate and the revalidation): torch's count
  where it is smaller, on a node in no MIG mode: GPU_COUNT_UNPROVEN (not assessed; stays drained). make fleet-report
  likewise (scripts/fleet/plausible._expected_problem): a gpu pass with fewer usable GPUs than the report's own
  options.expect_gpus is invalid (a real report of one H100 with expect_gpus 2 passed the fleet).
- Class 1, a setting of ours is never silent (medium: a node run ungated with no trace). Every misspelt option in
  slurm.conf's Prolog= line is CONFIG_ERROR: exit 0, said, and traced in the history and the metrics. `--help` or
  `-h` there (an operator's test line left in place) made argparse print the options into slurmd's log and exit 0
  before any of it: every job of the partition ran ungated, and neither the history nor node_exporter showed it.
  Repro: `Prolog=torchimages-prolog -h` with a lost GPU: exit 0, no history line. Practice: Slurm's prolog semantics
  (exit 0 starts the job; the gate's absence must be seen). Fix (verify/prolog/config.parse): under Prolog= it is
  CONFIG_ERROR as any other bad option is; run by hand, `--help` prints the options and exits 0 as before.

Looked at and held (no defect), through the same interfaces: every prolog option slurm.conf's Prolog= line could
mistype (`30`, a bare `--budget`, `--`, `--version`, `--dry-run=1`, an option given twice, `-`): CONFIG_ERROR, exit
0, traced; TORCHIMAGES_* knobs and Slurm's own variables holding bytes that are no UTF-8 or a NUL: said, the default
held (a lost GPU still drained) or CONFIG_ERROR; the state folder on a full file system (a tmpfs of 64 KiB, filled):
the pass and the drain stand, the history's failure said, the metrics written elsewhere; make fleet-report over a
folder holding a link to /dev/zero, a FIFO, a sparse 10 GiB file, binary and non-UTF-8 files, JSON nested 100,000
deep and a tree 120 folders deep: each listed, the fleet not passing; make isolate's decision over 3,000 random
fleets (broken, flaky and slow nodes, 5 % of pairs the tool's): no answer exits 0 with a failed pair on record.

Left (said here):
- Medium, left: make isolate's runner clears a pair on a passing report whose nccl check says neither `nodes` nor
  `world_size` (and no `created`): the runner's own stand-ins (tests/isolate_fakes.py) write exactly such reports,
  so requiring them changes every isolate test's scenario; verify of this checkout always writes them.
- Low, by design: a healthy node can be named when two flaky partners' failures fall on it while it never passed
  (scripts/fleet/isolate.py's docstring: the evidence is that of a failing node); one slow pair whose nodes each
  passed elsewhere is noise (exit 0, said); the breaker's share counts every node sinfo lists, powered-down (`idle~`)
  and down ones included.

Each test names the practice it follows.
"""
from __future__ import annotations

import copy
import json
import shutil
import time
from typing import Any

import pytest

from scripts.fleet.fleet import fleet, format_fleet
from scripts.fleet.plausible import report_problem
from tests.helpers import ROOT
from verify.prolog import cli, kernlog, verdict
from verify.prolog.xid import judge as xid_judge

from .prolog_fakes import (
    PROLOG_ENV,
    _gpu,
    _report,
    _shm,
    _undrain,
    _verify_writes,
    drained,
    history_events,
    install_fake,
)
from .prolog_fakes import _nccl as nccl_check

pytestmark = pytest.mark.unit


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch) -> Any:
    return install_fake(monkeypatch)


def _iso(t: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S+0000", time.gmtime(t))


@pytest.mark.parametrize("stamped", ["wall", "none"])
def test_nvidia_xid_catalog_a_watched_xid_repeats_only_within_the_lookback(tmp_path, fake, monkeypatch, capsys,
                                                                         stamped):
    """Three Xid 94 (contained ECC, a watched code) on one GPU, two days apart each, in a log without the kernel's
    stamps: none within a lookback of 24 h of another, so no drain; three within hours still drain."""
    import json
    _verify_writes(monkeypatch, json.dumps(_report(_gpu())).encode())
    t0 = time.time()

    def xid94(t: float, n: int) -> str:
        text = f"NVRM: Xid (PCI:0000:3b:00): 94, pid={100 + n}, Contained ECC error."
        return f"{_iso(t)} n1 kernel: {text}" if stamped == "wall" else text

    def runs(step_s: float) -> list[tuple[str, str | None]]:
        lines: list[str] = []
        for n in range(3):
            now = t0 + n * step_s
            lines.append(xid94(now - 60, n))
            up = 1e6 + n * step_s
            monkeypatch.setattr(kernlog, "host_clock", lambda proc=kernlog.PROC, now=now, up=up: kernlog.Clock(
                "boot-a", up, now - up, now))
            monkeypatch.setattr(kernlog, "read", lambda timeout, seen=list(lines): kernlog.KernelLog(seen, "journalctl"))
            cli.main(["--state-dir", str(state), "--lookback", "24"], dict(PROLOG_ENV))
        return history_events(state.parent)

    state = tmp_path / "state"
    events = runs(2 * 86400.0)
    out = capsys.readouterr()
    assert fake.nodes["n1"][0] == "idle", out
    assert [e for e, _ in events] == ["pass", "pass", "pass"], events
    fake.nodes["n1"] = ("idle", "none")
    state = tmp_path / "again" / "state"
    events = runs(3600.0)
    assert fake.nodes["n1"][0] == "drained" and "XID_REPEATED" in fake.nodes["n1"][1], capsys.readouterr()


TRAIN_REPORT = ROOT / "tests" / "data" / "gpu" / "h100-80gb-hbm3-2026-11-25-train" / "report.json"


def _train_pass(change: Any) -> dict[str, Any]:
    report = json.loads(TRAIN_REPORT.read_text())
    report["created"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    change(next(c for c in report["checks"] if c["name"] == "train"))
    return report


def _second_rank(t: dict[str, Any], checksum: str = "6d26fb7a61dc19a3") -> None:
    # on a second node: the report's gpu check counted this VM's one GPU, and NCCL runs one rank per GPU (hunt103)
    t["data"].update(world_size=2, nodes=["vm", "vm2"], replicas=[
        t["data"]["replicas"][0], {**t["data"]["replicas"][0], "rank": 1, "node": "vm2", "checksum": checksum}])


TRAIN_FORGERIES = {
    "replicas disagree": lambda t: _second_rank(t, "ffffffffffffffff"),
    "loss did not fall": lambda t: t["metrics"]["loss_last"].update(value=7.5),
    "negative loss": lambda t: t["metrics"]["loss_last"].update(value=-0.5),
    "mfu as a percent": lambda t: t["metrics"]["mfu"].update(value=15.39),
    "negative mfu": lambda t: t["metrics"]["mfu"].update(value=-0.1),
    "negative first step": lambda t: t["metrics"]["first_step_s"].update(value=-5.0),
    "two replicas in a world of one": lambda t: t["data"].update(replicas=[t["data"]["replicas"][0],
                                                                           {**t["data"]["replicas"][0], "rank": 1}]),
    "a world of two, one replica": lambda t: t["data"].update(world_size=2),
    "one rank twice": lambda t: t["data"].update(world_size=2, replicas=[t["data"]["replicas"][0]] * 2),
    "three nodes, every replica on one": lambda t: t["data"].update(nodes=["vm", "b", "c"]),
    "world_size a string": lambda t: t["data"].update(world_size="1"),
    "three steps": lambda t: t["data"].update(steps=3),
}


@pytest.mark.parametrize("what", sorted(TRAIN_FORGERIES))
def test_verify_train_judge_a_pass_its_own_facts_contradict_is_refused_by_both_readers(tmp_path, what):
    """A train pass whose figures or data verify's train judge fails (or no run has): invalid in make fleet-report
    (the fleet does not pass) and REPORT_INVALID in the prolog (not assessed: never a pass, never a drain)."""
    report = _train_pass(TRAIN_FORGERIES[what])
    assert report_problem(report)
    judged = verdict.decide(report)
    assert (judged.kind, judged.code) == (verdict.NOT_ASSESSED, "REPORT_INVALID"), judged
    (tmp_path / "vm.json").write_text(json.dumps(report))
    found = fleet(tmp_path)
    assert not found.ok and found.invalid, found.invalid


def test_verify_train_judge_its_real_passes_are_believed(tmp_path):
    """The same report as verify wrote it, and one of two agreeing ranks: believed by both readers."""
    for n, change in enumerate((lambda t: None, _second_rank)):
        report = _train_pass(change)
        assert report_problem(report) is None and verdict.decide(report).kind == verdict.PASS
        (tmp_path / f"r{n}").mkdir()
        (tmp_path / f"r{n}" / "vm.json").write_text(json.dumps(report))
        if n:           # the second rank's node writes its own report: its host, its own GPU
            other = copy.deepcopy(report)
            other["environment"]["hostname"] = "vm2"
            for c in other["checks"]:
                for d in (c.get("data") or {}).get("devices") or [] if c["name"] == "gpu" else []:
                    if isinstance(d, dict) and d.get("uuid"):
                        d["uuid"] = f"{d['uuid']}-vm2"
            (tmp_path / f"r{n}" / "vm2.json").write_text(json.dumps(other))
        assert fleet(tmp_path / f"r{n}").ok, format_fleet(fleet(tmp_path / f"r{n}"))


def test_the_train_rule_is_one_text_on_both_sides():
    """The host side never imports verify (tests/test_layout.py): the rule is held twice, alike."""
    body = [(ROOT / p).read_text().split('"""', 2)[2] for p in ("verify/prolog/passfacts.py",
                                                           "scripts/fleet/passfacts.py")]
    assert body[0] == body[1]


@pytest.mark.parametrize("flag", ["--help", "-h", "--he"])
def test_slurm_prolog_semantics_help_in_the_prolog_line_is_traced_never_a_silent_ungating(tmp_path, fake, monkeypatch,
                                                                                         capsys, flag):
    """Prolog= with --help: exit 0 (a non-zero exit drains), nothing gated, and a CONFIG_ERROR in the history and
    the metrics; by hand, argparse's help as before."""
    _verify_writes(monkeypatch, json.dumps(_report(_gpu("fail", code="GPU_LOST", owner="host",
                                                        summary="GPU 3 lost"))).encode())
    metrics = tmp_path / "metrics"
    status = cli.main(["--state-dir", str(tmp_path / "state"), "--no-kernel-log", "--metrics-dir", str(metrics), flag],
                      dict(PROLOG_ENV))
    err = capsys.readouterr().err
    assert status == 0 and fake.nodes["n1"][0] == "idle"
    assert history_events(tmp_path) == [("not-assessed", "CONFIG_ERROR")], err
    assert "--help" in err and "Prolog=" in err
    assert 'code="CONFIG_ERROR"' in (metrics / "torchimages_n1.prom").read_text()
    with pytest.raises(SystemExit) as stopped:
        cli.main([flag], {})
    assert stopped.value.code == 0 and "usage:" in capsys.readouterr().out


def test_nvidia_xid_catalog_an_xid_logged_while_the_node_sat_idle_is_read_whatever_its_stamp(tmp_path, fake,
                                                                                           monkeypatch, capsys):
    """A Prolog= run reads the kernel log (wall-stamped lines); an Xid 79 is logged a minute later; the next job comes
    two days later (lookback 24 h): the Xid is unread evidence, and the node is drained."""
    _verify_writes(monkeypatch, json.dumps(_report(_gpu())).encode())
    t0, up = time.time() - 2 * 86400, 1e6
    lines = [f"{_iso(t0 - 100)} n1 kernel: usb 1-1: new high-speed USB device"]

    def run(now: float, uptime: float) -> None:
        monkeypatch.setattr(kernlog, "host_clock", lambda proc=kernlog.PROC: kernlog.Clock(
            "boot-a", uptime, now - uptime, now))
        monkeypatch.setattr(kernlog, "read", lambda timeout, seen=list(lines): kernlog.KernelLog(seen, "journalctl"))
        cli.main(["--state-dir", str(tmp_path / "state"), "--lookback", "24"], dict(PROLOG_ENV))

    run(t0, up)
    assert fake.nodes["n1"][0] == "idle", capsys.readouterr()
    lines.append(f"{_iso(t0 + 60)} n1 kernel: NVRM: Xid (PCI:0000:3b:00): 79, pid=1, GPU has fallen off the bus.")
    run(t0 + 2 * 86400, up + 2 * 86400)
    assert fake.nodes["n1"][0] == "drained" and "XID_HISTORY" in fake.nodes["n1"][1], capsys.readouterr()


G = 1 << 30


@pytest.mark.parametrize(("size", "free", "required", "believed"), [
    (64 << 20, 64 << 20, G, False),        # a tmpfs of 64 MiB held 1 GiB: SHM_TOO_SMALL hidden
    (G, 8 * G, G, False),                  # more free than the file system's size
    (8 * G, 1 << 20, G, True),             # little free before the attempt: others may have freed it meanwhile
    (8 * G, 8 * G, G, True)])
def test_verify_shm_check_a_pass_its_own_sizes_contradict_is_refused_by_both_readers(tmp_path, fake, monkeypatch,
                                                                                   capsys, size, free, required,
                                                                                   believed):
    """A preflight whose shm check passes on sizes verify's allocation could not have: not assessed in the prolog
    (REPORT_INVALID, no pass) and invalid in make fleet-report; a possible one passes both."""
    shm = {**_shm(), "metrics": {k: {"value": float(v), "unit": "bytes"}
                                 for k, v in (("size", size), ("free", free), ("required", required))}}
    report = _report(_gpu(), shm)
    _verify_writes(monkeypatch, json.dumps(report).encode())
    env = {**PROLOG_ENV, "SLURM_GPUS_ON_NODE": "8"}
    assert cli.main(["--state-dir", str(tmp_path / "state"), "--no-kernel-log"], env) == 0
    assert history_events(tmp_path) == ([("pass", None)] if believed else [("not-assessed", "REPORT_INVALID")]), \
        capsys.readouterr()
    real = json.loads(TRAIN_REPORT.read_text())         # as verify writes it, for the fleet report's schema
    real["created"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    next(c for c in real["checks"] if c["name"] == "shm")["metrics"] = shm["metrics"]
    (tmp_path / "vm.json").write_text(json.dumps(real))
    assert fleet(tmp_path).ok is believed


def _torch_sees(n: int) -> bytes:
    gpu = _gpu()
    gpu["metrics"]["torch_devices"] = {"value": float(n), "unit": "count"}
    return json.dumps(_report(gpu)).encode()


def test_verify_gpu_judge_a_pass_where_torch_saw_fewer_gpus_than_slurm_gave_proves_none(tmp_path, fake, monkeypatch,
                                                                                     capsys):
    """torch_devices 4 beside NVML's 8 on a node Slurm gave 8: not assessed at the gate (never a pass), and no return
    to service for a node drained for a lost GPU; torch's 8 passes and returns it."""
    _verify_writes(monkeypatch, _torch_sees(4))
    env = {**PROLOG_ENV, "SLURM_GPUS_ON_NODE": "8"}
    assert cli.main(["--state-dir", str(tmp_path / "state"), "--no-kernel-log"], env) == 0
    assert history_events(tmp_path) == [("not-assessed", "GPU_COUNT_UNPROVEN")], capsys.readouterr()
    state = drained(tmp_path / "d", fake, "GPU_LOST", "gpu")
    monkeypatch.setattr(kernlog, "host_clock", lambda proc=kernlog.PROC: kernlog.Clock(     # rebooted since
        "boot-b", 60.0, time.time() - 60.0, time.time()))
    monkeypatch.setattr(kernlog, "boot_time", lambda proc=kernlog.PROC: time.time() - 60.0)
    assert cli.main(_undrain(state, "--return-passes", "1"), {}) != 0
    assert fake.nodes["n1"][0] == "drained", capsys.readouterr()
    _verify_writes(monkeypatch, _torch_sees(8))
    assert cli.main(_undrain(state, "--return-passes", "1"), {}) == 0
    assert fake.nodes["n1"][0] == "idle", capsys.readouterr()


@pytest.mark.parametrize(("expect", "torch", "believed"), [(2, 1, False), (1, 0, False), (1, 1, True)])
def test_verify_gpu_judge_the_fleet_refuses_a_pass_on_fewer_gpus_than_verify_was_told(tmp_path, expect, torch,
                                                                                    believed):
    """The report's options say --expect-gpus N: a gpu pass whose torch saw fewer is no report verify writes."""
    report = json.loads(TRAIN_REPORT.read_text())
    report["created"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    report["options"]["expect_gpus"] = expect
    next(c for c in report["checks"] if c["name"] == "gpu")["metrics"]["torch_devices"]["value"] = float(torch)
    (tmp_path / "vm.json").write_text(json.dumps(report))
    assert (report_problem(report) is None) is believed and fleet(tmp_path).ok is believed


def test_nvidia_xid_catalog_a_watched_xid_first_read_by_a_clock_ahead_is_not_held_for_good():
    """Two unstamped Xid 94 read while the clock ran a year ahead, then a third once it is set right: no repeat
    within the lookback is proven, so no drain; an Xid 79 read then is still held until acted on."""
    now = time.time()
    ahead = kernlog.Clock("boot-a", 1e6, now - 1e6, now + 365 * 86400)
    right = kernlog.Clock("boot-a", 1e6 + 60, now - 1e6, now + 60)
    lines = [f"NVRM: Xid (PCI:0000:3b:00): 94, pid={n}, Contained ECC error." for n in range(3)]
    state, _ = kernlog.advance(kernlog.State("boot-a"), lines[:2], ahead, 24 * 3600)
    state, held = kernlog.advance(state, lines, right, 24 * 3600)
    assert xid_judge(held) is None
    state, _ = kernlog.advance(kernlog.State("boot-a"), ["NVRM: Xid (PCI:0000:3b:00): 79, pid=1, fallen off the bus."],
                               ahead, 24 * 3600)
    state, held = kernlog.advance(state, [], right, 24 * 3600)
    assert (xid_judge(held) or ("",))[0] == "XID_HISTORY"


@pytest.mark.parametrize(("change", "believed"), [
    ({"busbw_max": 1000.0, "algbw_max": 100.0}, False),     # ten times the factor: a slow link read fast
    ({"busbw_max": 10.0, "algbw_max": 100.0}, False),
    ({"busbw_max": 175.0, "algbw_max": 100.0}, True),       # 2(n-1)/n on 8 ranks
    ({"world_size": 16.0}, False),                          # the data says 8
    ({"world_size": 8.0}, True)])
def test_nccl_tests_arithmetic_an_all_reduce_whose_figures_disagree_is_refused(change, believed):
    """An nccl pass whose bus and algorithm bandwidths, or whose two world sizes, no run gives: refused by both."""
    nccl = nccl_check()
    for key, value in change.items():
        nccl["metrics"][key] = {"value": value, "unit": "ranks" if key == "world_size" else "GB/s"}
    report = _report(_gpu(), nccl)
    assert (report_problem(report) is None) is believed
    assert (verdict.decide(report).kind == verdict.PASS) is believed


def test_nvidia_xid_catalog_an_xid_read_once_is_not_read_again_when_the_log_changes_its_stamps(tmp_path, fake,
                                                                                           monkeypatch, capsys):
    """An Xid 79 read with the kernel's stamp drains n1; it is repaired and resumed; the next run's log carries the
    same line stamped in wall time (a reader that switched formats): not read again, no drain."""
    _verify_writes(monkeypatch, json.dumps(_report(_gpu())).encode())
    now, up = time.time(), 1e6
    text = "NVRM: Xid (PCI:0000:3b:00): 79, pid=1, GPU has fallen off the bus."

    def run(lines: list[str], at: float) -> None:
        monkeypatch.setattr(kernlog, "host_clock", lambda proc=kernlog.PROC: kernlog.Clock(
            "boot-a", up + at - now, now - up, at))
        monkeypatch.setattr(kernlog, "read", lambda timeout: kernlog.KernelLog(lines, "journalctl"))
        cli.main(["--state-dir", str(tmp_path / "state"), "--lookback", "24"], dict(PROLOG_ENV))

    kernel, walled = f"[{up - 100:.6f}] n1 kernel: {text}", f"{_iso(now - 100)} n1 kernel: {text}"
    for first, then in ((kernel, walled), (walled, kernel)):
        run([first], now)
        assert fake.nodes["n1"][0] == "drained", capsys.readouterr()
        fake.nodes["n1"] = ("idle", "none")          # repaired and resumed by hand
        run([then], now + 3600)
        assert fake.nodes["n1"][0] == "idle", capsys.readouterr()
        shutil.rmtree(tmp_path / "state")
