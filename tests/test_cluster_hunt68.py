"""Issue 36, a sixty-eighth hunt through the public interfaces (`python -m verify.prolog`, make targets, files).

Found:
- Class 1, a setting of ours is never the node's fault (high: a healthy node drained, every job of the cluster failed).
  SLURM_SCRIPT_CONTEXT names each of Slurm's prologs and epilogs (SchedMD's Prolog and Epilog Guide): prolog_slurmd and epilog_slurmd (Prolog=,
  Epilog=: slurmd, on the job's nodes), but also prolog_slurmctld and epilog_slurmctld (PrologSlurmctld=,
  EpilogSlurmctld=: slurmctld, on the controller's host, once per job of the whole cluster). The prolog took every
  `prolog*`/`epilog*` context for slurmd's: the prolog line put on slurm.conf's PrologSlurmctld= (a slip of one word)
  gated the controller's host as if it were the job's node, named by its own host name. On a head node that is a
  compute node too, a job given GPUs on other nodes drained it (its GPUs "allocated but not visible" are the host's
  under Prolog=) and exited 1, which slurmctld answers by requeueing or killing the job. Now a slurmctld context is
  refused as the setting it is (CONFIG_ERROR, one line naming Prolog=, exit 0: nothing judged, nothing drained).

- Class 6 / the project's first rule, a fault the evidence shows is judged whatever else is missing (high: a broken
  node kept in service). A report whose checks failed twice on the host, one with a timeout (which NVSentinel's
  checker rule confirms by a second run alone) and one with a fault that needs no second run (an all-reduce that
  returned wrong values, NCCL_WRONG_RESULT; a /dev/shm too small), was judged by the timeout alone when it came first
  (verify's report order: gpu, shm, nccl; both rank alike). Where the confirmation settled nothing (a budget too small
  to prove a hang: BUDGET_TOO_SMALL; the timeout again while another prolog of the node ran: a busy host; the rerun
  stopped at its limit), the whole run was "not assessed", exit 0, and the wrong all-reduce stayed in service on
  every job. Now the timeout stays unjudged and the proven host fault beside it drains (behind the breaker), its
  line naming the timeout left unconfirmed (verify/prolog/beside.py).

- Class 3, return to service must prove the repair (high: a broken node resumed). A drain whose verdict was a host
  timeout (CHECK_TIMEOUT) made certain by the kernel log's Xid beside it (an Xid 79, "fallen off the bus") is filed
  under the timeout's code, with the Xid in the drain's `kernel_log` field. The repair NVIDIA's Xid catalog names
  for the Xid (a GPU reset or a reboot) was owed only for a drain whose code (or Slurm's reason) named one: `make
  undrain` in the same boot, with no GPU reset recorded, resumed the node on three passing preflights. Now a
  drain's kernel-log evidence is owed its catalog repair as its code is (verify/prolog/repair.py needs_repair), for
  drains already on record too.

- Class 9, time (medium: a repaired node kept drained on evidence from the future). A drain written while the node's
  clock ran ahead (a day: an RTC set wrong, NTP not yet synced), then the clock set right and the node rebooted for
  its repair: `make undrain` compared this boot's start with the drain's stamp, a day from now, and refused "this one
  began before the drain: no reboot since" although the boot id (the kernel's own record of a boot) was new; the
  node stayed out of service until the wall clock caught up, or an operator resumed it by hand (unseen by the flap
  rule's history). A drain stamped past now + TORCHIMAGES_CLOCK_SKEW now tells nothing of its time: the boot ids
  decide (verify/prolog/repair.py); in the drain's own boot it is still refused.

- Classes 2 and 8, the breaker's lock is a file others may open (high: a broken node kept in service). The breaker's
  lock (STATE/breaker.lock) and the history's (STATE/history/.<node>.lock) were made 0644, and a POSIX read lock is
  anyone's who may open the file: a job's user holding one (three lines of Python, in a job on that node) kept the
  breaker's lock from every prolog of the node, each waiting 30 s and then refusing the drain ("the breaker's lock
  was not had"): a GPU lost on that node stayed in service on every job. Now lock files are made 0600 (one made 0644
  before is made 0600 when next locked), and a lock held past its wait is counted without, as where the file system
  gives none (NVSentinel's breaker: the re-count after the claim keeps the share); the wait is at most half of
  what is left of the cap.

- Class 2, concurrent prologs of one node (high: a healthy node drained). The busy-host rule (NVSentinel's checker
  rule: a stall is believed once it recurs alone) held for timeouts only. Jobs starting together on a node whose GPUs
  they share (gres/shard, MPS, oversubscription) run their preflights at once, each all-reduce on the same links: a
  bus bandwidth below the baseline (BANDWIDTH_LOW, the host's) measured while another prolog of the node ran drained
  the node on the first job's prolog. Now a slow figure measured beside another prolog is not assessed
  (PREFLIGHT_BUSY, a new code of the prolog's own); a host fault proven beside it still drains, and a slow figure
  measured alone still drains (verify/prolog/beside.py).

- Class 4, kernel-log evidence kept and read once (high: a broken node's Xid lost). The kernel stamps each line with
  the clock of the CPU that logged it (printk's local_clock), so two CPUs' lines come out of the ring buffer out of
  order by microseconds (dmesg prints them in sequence order). The cursor skipped every line stamped before the line
  read just before it in the same read: an Xid 79 stamped 100 us before the line printed above it was never read,
  and the node stayed in service. Now only lines before the cursor kept from earlier runs are skipped
  (verify/prolog/kernlog.py advance); each line is still read once.

- Class 4 again (high: a broken node's Xid lost). The lookback (--lookback, 24 h) bounded every read, the cursor's
  too: a node idle for two days, or held by one two-day job, whose GPU logged an Xid meanwhile (after the last
  prolog's cursor) had that Xid skipped by the next prolog as "older than the lookback", and the cursor moved past
  it: never read, never acted on. Now the lookback bounds a first read of the boot only (no cursor kept); after a
  cursor every line is unread evidence however old, and a watched Xid older than the lookback still counts towards
  no repeat ("3 on one device within the lookback").

- Class 2, the breaker under concurrency (medium: an operator's drain undone, a broken node returned). A claim whose
  re-count found the partition past its share was given back with `scontrol update state=resume` whatever the node's
  reason was by then: an operator who drained the node for a fault of their own (a PSU) in the seconds between the
  claim and its re-count, while another node's prolog drained at the same time, saw the prolog resume it. Now a
  claim is given back only while the reason is still ours; a node drained meanwhile under another reason is left so
  (NVSentinel's rule: never undo a cordon that is not ours), as a stop signal's give-back already did.

Low, fixed as well: make fleet-report METRICS_DIR= took a history file named "n1<newline>.jsonl" as a node name fit
for a file (its pattern ended in `$`, which matches before a final newline) and wrote torchimages_fleet_n1<newline>.prom;
the name is now matched whole and skipped (said), as the prolog's own node names are.
Left (low): a report whose environment.hostname is a list is named after its file in the fleet report.
"""
from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest

from tests.prolog_fakes import (
    PROLOG_ENV,
    SLOW,
    XID79,
    _args,
    _gpu,
    _report,
    _verify_runs,
    _verify_writes,
    history_events,
    install_fake,
)
from verify.prolog import cli, history, kernlog, slurm

pytestmark = pytest.mark.unit


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch) -> Any:
    return install_fake(monkeypatch)


# ---- class 1: PrologSlurmctld= is no Prolog= (Slurm's prolog semantics: slurmctld runs it on the controller)

NO_GPU = {"name": "gpu", "status": "fail", "code": "GPU_NOT_VISIBLE", "owner": "job", "summary": "no GPU visible",
          "metrics": {"nvml_devices": {"value": 0, "unit": "count"}}}


@pytest.mark.parametrize("where", ["prolog_slurmctld", "epilog_slurmctld"])
def test_slurm_prolog_semantics_prolog_slurmctld_gates_no_node(tmp_path, fake, monkeypatch, capsys, where):
    """slurmctld's environment for a job given GPUs elsewhere, on a controller whose host is also node n1."""
    seen: list[Any] = []
    _verify_writes(monkeypatch, json.dumps(_report(NO_GPU)).encode(), seen)
    env = {"SLURM_SCRIPT_CONTEXT": where, "SLURM_JOB_ID": "7", "SLURM_JOB_GPUS": "0,1", "SLURM_JOB_PARTITION": "gpu"}
    assert cli.main(_args(tmp_path), env) == 0           # a non-zero exit there requeues or kills the job
    said = capsys.readouterr().err
    assert "CONFIG_ERROR" in said and "Prolog=" in said and where in said, said
    assert fake.nodes["n1"] == ("idle", "none") and not any(c[0] == "update" for c in fake.calls)
    assert not seen                                      # nothing judged on the controller's host
    assert history_events(tmp_path) == [("not-assessed", "CONFIG_ERROR")]     # the setting's trace, never a fault


@pytest.mark.parametrize("where", ["prolog_slurmd", "epilog_slurmd"])
def test_slurmd_s_own_contexts_still_gate_the_node(tmp_path, fake, monkeypatch, where):
    _verify_writes(monkeypatch, json.dumps(_report(NO_GPU)).encode())
    env = {"SLURM_SCRIPT_CONTEXT": where, "SLURMD_NODENAME": "n1", "SLURM_JOB_ID": "7", "SLURM_JOB_GPUS": "0,1"}
    assert cli.main(_args(tmp_path), env) == 1 and fake.nodes["n1"][1].startswith("torchimages:GPU_NOT_VISIBLE")


# ---- a proven host fault beside a timeout no second run settled (NVSentinel's checker rule confirms the stall only)

SHM_TIMEOUT = {"name": "shm", "status": "fail", "code": "CHECK_TIMEOUT", "owner": "host", "summary": "shm timed out",
               "metrics": {}}
WRONG = {"name": "nccl", "status": "fail", "code": "NCCL_WRONG_RESULT", "owner": "host", "summary": "3 wrong elements",
         "metrics": {"wrong": {"value": 3.0, "unit": ""}}}
FIRST = json.dumps(_report(_gpu(), SHM_TIMEOUT, WRONG)).encode()


def _runs(monkeypatch: pytest.MonkeyPatch, second: Any) -> list[float]:
    """verify replaced: the first run writes FIRST, the second (the confirmation) does `second(out)` and answers its
    exit status (None: stopped at its limit)."""
    runs: list[float] = []

    def run(cmd: list[str], limit: float) -> tuple[int | None, str]:
        runs.append(limit)
        out = Path(cmd[cmd.index("--json") + 1])
        if len(runs) == 1:
            out.write_bytes(FIRST)
            return 0, ""
        return second(out), ""
    monkeypatch.setattr(cli, "_run_verify", run)
    return runs


def _again(state: Path | None = None) -> Any:
    """The confirmation: shm times out again alone; with `state`, another prolog of n1 ended meanwhile (a pass)."""
    def second(out: Path) -> int:
        if state is not None:
            time.sleep(0.01)          # ended after this run began (the history's stamps are to the millisecond)
            history.record(str(state), "n1", "pass", None, "another job's prolog")
        out.write_text(json.dumps(_report(SHM_TIMEOUT)))
        return 0
    return second


@pytest.mark.parametrize("how", ["budget too small", "busy host", "rerun stopped"])
def test_a_proven_host_fault_beside_an_unconfirmed_timeout_drains(tmp_path, fake, monkeypatch, capsys, how):
    state = tmp_path / "state"
    argv = ["--budget", "2"] if how == "budget too small" else []
    second = _again(state) if how == "busy host" else (lambda out: None) if how == "rerun stopped" else _again()
    runs = _runs(monkeypatch, second)
    assert cli.main(_args(tmp_path, *argv), PROLOG_ENV) == 1
    assert len(runs) == (1 if how == "budget too small" else 2)
    assert fake.nodes["n1"][1].startswith("torchimages:NCCL_WRONG_RESULT")
    said = capsys.readouterr().out
    assert "FAULT NCCL_WRONG_RESULT host nccl" in said and "shm timed out, unconfirmed" in said, said
    drain = history.read(str(state), "n1").events[-1]
    assert (drain["event"], drain["code"], drain["check"]) == ("drain", "NCCL_WRONG_RESULT", "nccl")


def test_a_timeout_alone_that_no_run_confirmed_still_never_drains(tmp_path, fake, monkeypatch):
    _verify_writes(monkeypatch, json.dumps(_report(_gpu(), SHM_TIMEOUT)).encode())
    assert cli.main(_args(tmp_path, "--budget", "2"), PROLOG_ENV) == 0
    assert fake.nodes["n1"] == ("idle", "none")
    assert history_events(tmp_path)[-1] == ("not-assessed", "BUDGET_TOO_SMALL")


# ---- class 3: an Xid beside the drain's own code is owed the repair NVIDIA's Xid catalog names

SHM_PASS: dict[str, Any] = {"name": "shm", "status": "pass", "code": None, "owner": None, "summary": "ok", "metrics": {}}


def _kernel(monkeypatch: pytest.MonkeyPatch, boot: dict[str, Any]) -> None:
    """The kernel log holds an Xid 79 of boot `boot["id"]`, `boot["up"]` seconds old."""
    monkeypatch.setattr(kernlog, "host_clock", lambda proc=kernlog.PROC: kernlog.Clock(
        boot["id"], boot["up"], time.time() - boot["up"], time.time()))
    monkeypatch.setattr(kernlog, "boot_time", lambda proc=kernlog.PROC: time.time() - boot["up"])
    monkeypatch.setattr(kernlog, "read", lambda timeout: kernlog.KernelLog(
        [XID79] if boot["id"] == "boot-a" else [], "journalctl"))


@pytest.mark.parametrize("rebooted", [False, True])
def test_nvidia_xid_catalog_an_xid_beside_a_timeout_is_resumed_only_after_its_repair(tmp_path, fake, monkeypatch,
                                                                                    capsys, rebooted):
    fake.info = {"Gres": "gpu:8"}
    boot = {"id": "boot-a", "up": 6000.0}
    _kernel(monkeypatch, boot)
    _verify_runs(monkeypatch, [json.dumps(_report(_gpu(), SHM_TIMEOUT)).encode()])
    state = str(tmp_path / "state")
    assert cli.main(["--state-dir", state], PROLOG_ENV) == 1
    drain = history.read(state, "n1").events[-1]
    assert (drain["event"], drain["code"], drain["kernel_log"]) == ("drain", "CHECK_TIMEOUT", "XID_HISTORY")
    boot.update({"id": "boot-b", "up": 60.0} if rebooted else {"up": 9000.0})
    runs = _verify_runs(monkeypatch, [json.dumps(_report(_gpu(), SHM_PASS)).encode()])
    status = cli.main(["--state-dir", state, "--revalidate", "--node", "n1"], {"SLURMD_NODENAME": "n1"})
    said = capsys.readouterr().err
    if rebooted:          # the repair seen: three passes in a row (an Xid drain's), then resumed
        assert status == 0 and fake.nodes["n1"] == ("idle", "none") and len(runs) == 3, said
    else:                 # the same boot, no GPU reset recorded: no preflight proves it
        assert status == 5 and fake.nodes["n1"][0] == "drained" and not runs, said
        assert "REFUSED n1: drained for XID_HISTORY, whose repair is a GPU reset or a reboot" in said, said


# ---- class 9: a drain stamped in the future proves no boot began after it, nor before it

@pytest.mark.parametrize(("boot", "status"), [("boot-b", 0), ("boot-a", 5)])
def test_nvidia_xid_catalog_a_reboot_after_a_drain_stamped_in_the_future_is_seen(tmp_path, fake, monkeypatch, capsys,
                                                                                boot, status):
    fake.info = {"Gres": "gpu:8"}
    ahead = time.time() + 86400                       # the prolog's clock ran a day ahead when it drained
    fake.nodes["n1"] = ("drained", slurm.reason("n1", "GPU_LOST", "GPU 3 is lost", ahead))
    state = str(tmp_path / "state")
    history.record(state, "n1", "drain", "GPU_LOST", "GPU 3 is lost", now=ahead,
                   extra={"gpus": 8, "check": "gpu", "boot_id": "boot-a", "uptime": 5000.0, "action": "reboot"})
    _kernel(monkeypatch, {"id": boot, "up": 600.0})     # set right since; boot-b: rebooted ten minutes ago
    _verify_runs(monkeypatch, [json.dumps(_report(_gpu())).encode()])
    assert cli.main(["--state-dir", state, "--revalidate", "--node", "n1"], {"SLURMD_NODENAME": "n1"}) == status
    said = capsys.readouterr().err
    if status:
        assert fake.nodes["n1"][0] == "drained" and "same boot (boot-a)" in said, said
    else:
        assert fake.nodes["n1"] == ("idle", "none") and "RESUMED n1" in said, said


# ---- classes 2 and 8: no other user can hold the breaker's lock (a read lock is anyone's who may open the file)

LOST = json.dumps(_report(_gpu("fail", code="GPU_LOST", owner="host", summary="GPU 3 is lost"))).encode()


@pytest.fixture(autouse=True)
def _fresh_reports():
    """Reports made now: one made at import is refused as another run's once the suite has run past the clock skew
    allowed (300 s) before this file's tests (a slow, loaded CI)."""
    global FIRST, LOST
    FIRST = json.dumps(_report(_gpu(), SHM_TIMEOUT, WRONG)).encode()
    LOST = json.dumps(_report(_gpu("fail", code="GPU_LOST", owner="host", summary="GPU 3 is lost"))).encode()


def test_the_prolog_s_lock_files_are_its_own(tmp_path, fake, monkeypatch):
    _verify_writes(monkeypatch, LOST)
    state = tmp_path / "state"
    state.mkdir()
    (state / "breaker.lock").write_text("")
    (state / "breaker.lock").chmod(0o644)           # as an earlier version made it
    assert cli.main(_args(tmp_path), PROLOG_ENV) == 1 and fake.nodes["n1"][0] == "drained"
    for lock in (state / "breaker.lock", state / "history" / ".n1.lock"):
        assert lock.stat().st_mode & 0o777 == 0o600, lock


@pytest.mark.host
def test_nvsentinel_breaker_a_lock_another_user_holds_keeps_no_broken_node_in_service(fake, monkeypatch, capsys):
    """A job's user (nobody) opened the lock file while an earlier version had made it 0644, and holds a read lock."""
    import os
    import shutil
    import subprocess
    import sys
    import tempfile

    from verify.prolog import statefile
    if os.geteuid() != 0 or not shutil.which("setpriv"):
        pytest.skip("another user's lock needs root and setpriv")
    monkeypatch.setattr(statefile, "BREAKER_LOCK_WAIT_S", 1.0)
    base = Path(tempfile.mkdtemp(prefix="hunt68-"))
    try:
        base.chmod(0o755)
        state = base / "state"
        state.mkdir(mode=0o755)
        (state / "breaker.lock").write_text("")
        (state / "breaker.lock").chmod(0o644)
        holder = subprocess.Popen(
            ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", sys.executable, "-c",
             "import fcntl, sys, time; f = open(sys.argv[1]); fcntl.lockf(f, fcntl.LOCK_SH); print('held', flush=True);"
             " time.sleep(60)", str(state / "breaker.lock")], stdout=subprocess.PIPE, text=True)
        try:
            assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
            _verify_writes(monkeypatch, LOST)
            assert cli.main(["--state-dir", str(state), "--no-kernel-log"], PROLOG_ENV) == 1
        finally:
            holder.kill()
            holder.wait(timeout=10)
        assert fake.nodes["n1"][1].startswith("torchimages:GPU_LOST")
        said = capsys.readouterr().err
        assert "breaker's lock" in said and "counting without it" in said, said
        assert (state / "breaker.lock").stat().st_mode & 0o777 == 0o600
    finally:
        shutil.rmtree(base, ignore_errors=True)


# ---- class 2: a slow figure measured beside another prolog of this node is the busy host's

SMALL_SHM = {"name": "shm", "status": "fail", "code": "SHM_TOO_SMALL", "owner": "host", "summary": "/dev/shm 64 MiB",
             "metrics": {}}


@pytest.mark.parametrize(("checks", "beside", "status", "code"), [
    ((SLOW,), True, 0, None),                            # another job's prolog ran beside it: not the node's
    ((SLOW,), False, 1, "BANDWIDTH_LOW"),                # measured alone: the node's
    ((SMALL_SHM, SLOW), True, 1, "SHM_TOO_SMALL"),       # a fault beside it needs no quiet host
])
def test_nvsentinel_checker_rule_a_slow_figure_beside_another_prolog_drains_no_node(tmp_path, fake, monkeypatch, checks,
                                                                                   beside, status, code):
    state = tmp_path / "state"
    body = json.dumps(_report(_gpu(), *checks)).encode()

    def run(cmd: list[str], limit: float) -> tuple[int | None, str]:
        if beside:            # another job's prolog of n1 ended while this one's preflight ran (stamps: to the ms)
            time.sleep(0.01)
            history.record(str(state), "n1", "pass", None, "another job's prolog")
        Path(cmd[cmd.index("--json") + 1]).write_bytes(body)
        return 0, ""
    monkeypatch.setattr(cli, "_run_verify", run)
    assert cli.main(_args(tmp_path), PROLOG_ENV) == status
    if code is None:
        assert fake.nodes["n1"] == ("idle", "none")
        assert history_events(tmp_path)[-1] == ("not-assessed", "PREFLIGHT_BUSY")
    else:
        assert fake.nodes["n1"][1].startswith(f"torchimages:{code}")


# ---- class 4: a kernel line stamped a moment before the line above it is read (two CPUs' clocks)

OUT_OF_ORDER = ["[ 5000.000500] nvidia 0000:3b:00.0: enabling device (0000 -> 0003)",
                "[ 5000.000400] NVRM: Xid (PCI:0000:3b:00): 79, pid=1, GPU has fallen off the bus."]


def test_nvidia_xid_catalog_an_xid_stamped_before_the_line_above_it_is_read_once():
    clock = kernlog.Clock("boot-a", 6000.0)
    state, held = kernlog.advance(kernlog.State("boot-a"), OUT_OF_ORDER, clock, 86400.0)
    assert [f.code for f in held] == [79] and state.mono == 5000.0005
    again, held = kernlog.advance(kernlog.settle(state), OUT_OF_ORDER, clock, 86400.0)
    assert held == [] and again.mono == state.mono          # acted on: not read a second time


def test_the_gate_drains_on_an_xid_stamped_before_the_line_above_it(tmp_path, fake, monkeypatch):
    monkeypatch.setattr(kernlog, "host_clock", lambda proc=kernlog.PROC: kernlog.Clock("boot-a", 6000.0))
    monkeypatch.setattr(kernlog, "read", lambda timeout: kernlog.KernelLog(OUT_OF_ORDER, "dmesg --kernel"))
    _verify_writes(monkeypatch, json.dumps(_report(_gpu())).encode())
    assert cli.main(["--state-dir", str(tmp_path / "state")], PROLOG_ENV) == 1
    assert fake.nodes["n1"][1].startswith("torchimages:XID_HISTORY")


# ---- class 4: an Xid logged after the kept cursor is read however long no prolog ran

IDLE = ["[ 1000.000000] the line the last prolog read last",
        "[ 2000.000000] NVRM: Xid (PCI:0000:3b:00): 48, pid=1, An uncorrectable double bit error (DBE) has been detected",
        "[ 2001.000000] NVRM: Xid (PCI:0000:3b:00): 94, pid=1, Contained: SM (0x1). RST: No, D-RST: No",
        "[ 2002.000000] NVRM: Xid (PCI:0000:3b:00): 94, pid=1, Contained: SM (0x1). RST: No, D-RST: No",
        "[ 2003.000000] NVRM: Xid (PCI:0000:3b:00): 94, pid=1, Contained: SM (0x1). RST: No, D-RST: No",
        "[ 190000.000000] two days later"]


def test_nvidia_xid_catalog_an_xid_logged_after_the_cursor_is_read_however_old():
    clock = kernlog.Clock("boot-a", 200000.0)
    kept = kernlog.State("boot-a", 1000.0, [kernlog._digest(IDLE[0])], [], [], 1, 0)
    state, held = kernlog.advance(kept, IDLE, clock, 86400.0)
    assert [f.code for f in held] == [48] and state.mono == 190000.0      # the 94s: older than the lookback
    assert xid_judge(held)[0] == "XID_HISTORY"
    # a first read of the boot (no cursor kept) still goes back the lookback only
    _, first = kernlog.advance(kernlog.State("boot-a"), IDLE, clock, 86400.0)
    assert first == []


def xid_judge(held: list[Any]) -> tuple[str, str]:
    from verify.prolog import xid
    judged = xid.judge(held)
    assert judged is not None
    return judged


def test_make_fleet_report_metrics_a_node_name_with_a_newline_names_no_file():
    from types import SimpleNamespace

    from scripts.fleet.metrics import skipped_nodes
    assert skipped_nodes(SimpleNamespace(nodes=[]), {"n1\n": None, "n2": None}) == ["n1\n"]  # type: ignore[arg-type,dict-item]


# ---- class 2: a claim is given back only while it is still ours

def test_nvsentinel_breaker_a_claim_is_given_back_only_while_it_is_ours(tmp_path, fake, monkeypatch, capsys):
    real = fake.run

    def run(argv: list[str], dry_run: bool = False, quiet: bool = False) -> tuple[int, str]:
        out = real(argv, dry_run, quiet)
        if argv[1:4] == ["update", "nodename=n1", "state=drain"]:
            # meanwhile n2's prolog drained n2 (the breaker's share), and an operator drained n1 for a PSU of theirs
            fake.nodes["n2"] = ("drained", slurm.reason("n2", "GPU_LOST", "x", time.time()))
            fake.nodes["n1"] = ("drained", "operator: PSU swap")
        return out
    monkeypatch.setattr(slurm, "run", run)
    _verify_writes(monkeypatch, LOST)
    assert cli.main(_args(tmp_path, "--breaker", "0.25"), PROLOG_ENV) == 0       # not drained by us: exit 4 -> 0
    assert fake.nodes["n1"] == ("drained", "operator: PSU swap")
    assert not any(c[:3] == ["update", "nodename=n1", "state=resume"] for c in fake.calls)
    assert "drained meanwhile with another reason" in capsys.readouterr().err
    assert history_events(tmp_path)[-1] == ("drain-refused", "GPU_LOST")
