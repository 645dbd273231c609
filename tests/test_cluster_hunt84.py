"""Issue 36, an eighty-fourth hunt through the public interfaces (`python -m verify.prolog`'s main under Prolog=, make
fleet-report's reader, the state folder's files, the kernel-log cursor), classes 2, 6, 8 and 9.

Found:
- Classes 2 and 8, the run lock is a file others may open (high: a slow node kept in service, a hang excused). Each
  prolog holds a shared lock on STATE/history/.<node>.running while it assesses, and a slow figure (BANDWIDTH_LOW) or
  a confirmed timeout is excused as a busy host when it cannot take that lock exclusive for a moment ("another prolog
  of this node is running now"). An earlier version made the file 0644 (statefile.open_rw's default then); a node
  upgraded keeps it, and a job's user (nobody) may open it and hold a read lock: every prolog of the node then saw
  "another prolog" beside it, and the node measured slow alone was never drained (PREFLIGHT_BUSY, exit 0), a hung
  one's confirmed timeout excused as a busy host. hunt68 made the breaker's and the history's lock files 0600 when next
  locked (statefile.locked); the run lock was opened by another path that kept the old mode. Repro: `.n1.running`
  0644, `setpriv --reuid=65534 python -c 'lockf(open(f), LOCK_SH); sleep'`, a preflight with BANDWIDTH_LOW measured
  alone: exit 0, PREFLIGHT_BUSY. Practice: NVSentinel's checker rule (a stall or slow figure is believed when it
  recurs alone: only another preflight is "beside" it, never a job's user). Fix (verify/prolog/statefile.open_rw): a
  lock file of ours made 0644 before is made 0600 when opened, as statefile.locked does; a holder's fd opened before
  stays until it lets go (that run then sees it as busy once, as for any other run beside it).
- Class 6, facts that cannot be true, held against what verify really writes (high: a healthy node kept drained, a
  report withheld). hunt81's shm rule (passfacts._shm_problem: a pass on a /dev/shm smaller than the bytes it touched
  is no report verify writes) read statfs's size as a limit always. A tmpfs mounted with size=0 (tmpfs(5): no limit)
  has no block count: statfs gives 0 blocks and 0 free (mm/shmem.c shmem_statfs), and verify's shm check touches
  its 1 GiB there and passes. Both readers refused that real report (REPORT_INVALID / "invalid"): `make undrain` of a
  repaired node whose /dev/shm is such a tmpfs kept it drained, make fleet-report listed it invalid (the fleet not
  passing), and a host fault in the same report's other checks was not judged. Repro: the h100 facts of tests/data
  with shm size 0 and free 0, judged by `python -m verify --from-facts`: prolog REPORT_INVALID. Practice: verify's
  own shm judge (what it passes is a pass) and the project's rule that the shared rule refuses no report verify
  writes (tests/test_cluster_hunt55.py). Fix (both passfacts twins): a size of 0 is no limit, neither rule applies.
- Class 9, time: a stamp from the future moved a cursor (high: a broken node's Xid never read). hunt81's cursor in
  wall time (kernlog.State.wall: the latest wall stamp read, so that a reader switching to the kernel's stamps reads
  no line twice) took every wall-stamped line's stamp, one stamped past now too: a line logged while the clock ran
  ahead (an RTC a day fast before NTP stepped it back) is no evidence (kernlog.future), yet it set the cursor a day
  ahead, and when the next read gave the kernel's stamps (journalctl timed out: dmesg), every line of the boot up to
  that day, an Xid 79 logged since among them, was skipped as "read in the other format". Repro: a read of
  `<now+1d> n1 kernel: ...` (wall stamps), then a read of `[uptime-10] NVRM: Xid ... 79` (kernel stamps): nothing
  held, PASS. Practice: NVIDIA's Xid catalog (79: drain) and the cursor's own rule (kernlog.ahead: a line from the
  future never moves the cursor). Fix (kernlog.advance): only a line that is not from the future moves the wall
  cursor, as for the kernel's stamps; and a wall cursor kept past now (read while the clock ran fast, stepped back
  since) is none: read again from the lookback, as a kernel-stamped cursor past the uptime is (kernlog.impossible).

Looked at and held (no defect), through the same interfaces: hunt81's GPU_COUNT_UNPROVEN over every report of the
real-world corpus judged by verify's own judge (no passing gpu check proves fewer GPUs than NVML counts, so none is
refused that verify passes: torch's count is recorded only beside NVML's list, and verify fails torch seeing fewer
than --expect-gpus), and fleet-report's twin (plausible._expected_problem) alike, MIG included; the train rule
against verify's train judge (replicas, nodes, world_size and steps are written from one list of ranks; times are
monotonic); the nccl rule's 0.5x-2x against every collective's factor at 2 ranks or more; `--hel`/`--he`/`-h` under
Prolog= (CONFIG_ERROR, traced); TORCHIMAGES_CLOCK_SKEW, _BREAKER, _HANG_RUNS, _RETURN_PASSES mistyped (said, the
default held); an integer of 400 digits in a report (every loader refuses it before the rules read it); concurrent
prologs of one node against the kernel-log state (cursor and held events are saved together, so a lost update only
re-reads lines after the older cursor, never loses one; four real Prolog= processes at once on an Xid 79: one drain,
and the Xid acted on once); a prolog SIGKILLed (fcntl locks die with it; verify dies
with it: PR_SET_PDEATHSIG).

Left (said here):
- Low, unreachable through the interfaces: passfacts._figure raises OverflowError on an integer past a float's range
  (every report loader, verifyrun.load_report and scripts/fleet/jsonrecord, refuses one first).
- Low: a wall-stamped kernel line stamped in the future (a clock that ran ahead when journald stamped it) is read once
  and is no evidence (kernlog.future), so an Xid logged then is not read when the clock is set right; the prolog's own
  reader asks for the kernel's stamps (journalctl -o short-monotonic), so only a site's wrapper gives such lines.
- tests/test_cluster_hunt65.py::test_a_pair_whose_warning_is_no_bandwidth_one_still_passes fails on main since
  eec04c9b (isolate now refuses a passing pair report without nodes/world_size/created; that test's report has none):
  the lead's change, not touched here.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import pytest

from tests.prolog_fakes import PROLOG_ENV, SLOW, _gpu, _report, _verify_writes, history_events, install_fake
from verify.prolog import cli, kernlog, statefile

pytestmark = pytest.mark.unit


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch) -> Any:
    return install_fake(monkeypatch)




def test_the_run_lock_made_0644_before_is_made_the_prolog_s_own(tmp_path, fake, monkeypatch):
    state = tmp_path / "state"
    (state / "history").mkdir(parents=True)
    running = state / "history" / ".n1.running"
    running.write_text("")
    running.chmod(0o644)                        # as an earlier version made it
    _verify_writes(monkeypatch, json.dumps(_report(_gpu(), SLOW)).encode())
    assert cli.main(["--state-dir", str(state), "--no-kernel-log"], PROLOG_ENV) == 1
    assert fake.nodes["n1"][1].startswith("torchimages:BANDWIDTH_LOW")
    assert running.stat().st_mode & 0o777 == 0o600


def test_open_rw_makes_a_lock_file_of_ours_0600_and_leaves_another_s(tmp_path):
    mine = tmp_path / "mine"
    mine.write_text("")
    mine.chmod(0o644)
    os.close(statefile.open_rw(str(mine)))
    assert mine.stat().st_mode & 0o777 == 0o600


@pytest.mark.host
def test_nvsentinel_checker_rule_a_job_user_s_read_lock_on_the_run_lock_excuses_no_slow_node(fake, monkeypatch):
    """A job's user (nobody) holds a read lock on `.n1.running` an earlier version made 0644: a slow figure measured
    with no other prolog of the node running is the node's (BANDWIDTH_LOW drains), never PREFLIGHT_BUSY."""
    if os.geteuid() != 0 or not shutil.which("setpriv"):
        pytest.skip("another user's lock needs root and setpriv")
    base = Path(tempfile.mkdtemp(prefix="hunt84-"))
    try:
        base.chmod(0o755)
        state = base / "state"
        (state / "history").mkdir(parents=True, mode=0o755)
        state.chmod(0o755)
        (state / "history").chmod(0o755)
        running = state / "history" / ".n1.running"
        running.write_text("")
        running.chmod(0o644)
        # the job's user opened it before this version's prolog ran once: that fd stays, so the first run sees it (as
        # any run beside); the file is then the prolog's alone, and the job's next hold is no evidence of another run
        first = _hold(running)
        try:
            _verify_writes(monkeypatch, json.dumps(_report(_gpu(), SLOW)).encode())
            cli.main(["--state-dir", str(state), "--no-kernel-log"], PROLOG_ENV)
        finally:
            first.kill()
            first.wait(timeout=10)
        fake.nodes["n1"] = ("idle", "none")
        later = _hold(running)
        try:
            assert cli.main(["--state-dir", str(state), "--no-kernel-log"], PROLOG_ENV) == 1
        finally:
            later.kill()
            later.wait(timeout=10)
        assert fake.nodes["n1"][1].startswith("torchimages:BANDWIDTH_LOW")
    finally:
        shutil.rmtree(base, ignore_errors=True)


def _hold(path: Path) -> subprocess.Popen[str]:
    """nobody opening `path` and holding a read lock on it (it may not be able to open it: then it holds nothing)."""
    proc = subprocess.Popen(
        ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", sys.executable, "-c",
         "import fcntl, sys, time; f = open(sys.argv[1]); fcntl.lockf(f, fcntl.LOCK_SH); print('held', flush=True);"
         " time.sleep(60)", str(path)], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    assert proc.stdout is not None
    proc.stdout.readline()          # 'held', or '' where it could not open the file
    return proc


# ---- class 6: an unlimited tmpfs (size=0) is verify's pass, not an impossible one

H100 = Path(__file__).resolve().parent / "data" / "gpu" / "h100-80gb-hbm3-2026-11-25" / "facts"


def _unlimited_shm_report(tmp_path: Path) -> dict[str, Any]:
    from tests.judging import replayed_report as replayed
    facts = tmp_path / "facts"
    shutil.copytree(H100, facts)
    shm = json.loads((facts / "shm.json").read_text())
    shm["facts"].update(size=0, free=0)            # statfs of a tmpfs mounted size=0: no blocks, none free
    shm.pop("result", None)
    (facts / "shm.json").write_text(json.dumps(shm))
    return replayed(facts)


def test_verify_shm_judge_an_unlimited_tmpfs_pass_is_believed_by_both_readers(tmp_path):
    from scripts.fleet import plausible
    from scripts.fleet.passfacts import pass_problem as host_rule
    from verify.prolog import verdict
    from verify.prolog.passfacts import pass_problem
    report = _unlimited_shm_report(tmp_path)
    shm = next(c for c in report["checks"] if c["name"] == "shm")
    assert shm["status"] == "pass" and shm["metrics"]["size"]["value"] == 0       # verify's own judgement
    assert pass_problem(report["checks"]) is None and host_rule(report["checks"]) is None
    assert plausible.report_problem(report) is None
    assert verdict.decide(report).kind == verdict.PASS
    from scripts.fleet.reports import read_reports
    (tmp_path / "reports").mkdir()
    (tmp_path / "reports" / "n1.json").write_text(json.dumps(report))
    valid, invalid = read_reports(tmp_path / "reports")        # make fleet-report's reading
    assert len(valid) == 1 and not invalid, invalid


def test_the_gate_passes_a_node_whose_dev_shm_is_an_unlimited_tmpfs(tmp_path, fake, monkeypatch):
    report = _unlimited_shm_report(tmp_path)
    report["created"] = _report(_gpu())["created"]          # written by this run
    _verify_writes(monkeypatch, json.dumps(report).encode())
    assert cli.main(["--state-dir", str(tmp_path / "state"), "--no-kernel-log"], PROLOG_ENV) == 0
    assert history_events(tmp_path)[-1] == ("pass", None)


@pytest.mark.parametrize(("size", "free", "need"), [(64 << 20, 64 << 20, 1 << 30), (1 << 30, 2 << 30, 1 << 20)])
def test_an_shm_pass_that_cannot_be_true_is_still_refused(size, free, need):
    from scripts.fleet.passfacts import pass_problem as host_rule
    from verify.prolog.passfacts import pass_problem
    shm = {"name": "shm", "status": "pass", "metrics": {k: {"value": float(v), "unit": "bytes"} for k, v in
                                                        (("size", size), ("free", free), ("required", need))}}
    assert pass_problem([shm]) and host_rule([shm])


# ---- class 9: a wall stamp from the future moves no cursor

XID79 = "NVRM: Xid (PCI:0000:3b:00): 79, pid=1, GPU has fallen off the bus."


def _iso(t: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S+0000", time.gmtime(t))


def test_nvidia_xid_catalog_a_future_wall_stamp_hides_no_xid_read_with_the_kernel_s_stamps():
    now, up = 2_000_000_000.0, 50_000.0
    clock = kernlog.Clock("boot-a", up, now - up, now)
    ahead = [f"{_iso(now - 600)} n1 kernel: nvidia: loading", f"{_iso(now + 86400)} n1 kernel: a line of a clock a day fast"]
    state, held = kernlog.advance(kernlog.State("boot-a"), ahead, clock, 86400.0)
    assert held == [] and state.wall <= now
    later = kernlog.Clock("boot-a", up + 60, now - up, now + 60)
    _, held = kernlog.advance(state, [f"[{up + 30:.6f}] {XID79}"], later, 86400.0)
    assert [f.code for f in held] == [79]
    # a line read in wall time is still not read again with the kernel's stamp
    _, again = kernlog.advance(state, [f"[{up - 600:.6f}] n1 kernel: nvidia: loading"], later, 86400.0)
    assert again == []


def test_the_gate_drains_on_an_xid_read_after_a_future_wall_stamp(tmp_path, fake, monkeypatch, capsys):
    _verify_writes(monkeypatch, json.dumps(_report(_gpu())).encode())
    now, up = time.time(), 1e6

    def run(lines: list[str], at: float) -> int:
        monkeypatch.setattr(kernlog, "host_clock", lambda proc=kernlog.PROC: kernlog.Clock(
            "boot-a", up + at - now, now - up, at))
        monkeypatch.setattr(kernlog, "read", lambda timeout: kernlog.KernelLog(lines, "journalctl"))
        return cli.main(["--state-dir", str(tmp_path / "state"), "--lookback", "24"], dict(PROLOG_ENV))

    assert run([f"{_iso(now - 60)} n1 kernel: nvidia: loading", f"{_iso(now + 86400)} n1 kernel: clock a day fast"],
               now) == 0
    assert run([f"[{up + 30:.6f}] n1 kernel: {XID79}"], now + 60) == 1, capsys.readouterr()
    assert fake.nodes["n1"][1].startswith("torchimages:XID")


def test_nvidia_xid_catalog_a_wall_cursor_kept_past_now_hides_no_xid():
    """Read while the clock ran a day fast (its lines and now alike), then the clock stepped back: the kept cursor is
    a day ahead of now."""
    now, up = 2_000_000_000.0, 50_000.0
    kept = kernlog.State("boot-a", unstamped=["x"], unstamped_count=1, wall=now + 86400)
    clock = kernlog.Clock("boot-a", up, now - up, now)
    _, held = kernlog.advance(kept, [f"[{up - 30:.6f}] {XID79}"], clock, 86400.0)
    assert [f.code for f in held] == [79]
    # within the clock skew allowed it is still a cursor: a line it covers is not read again
    kept = kernlog.State("boot-a", unstamped=["x"], unstamped_count=1, wall=now + 60)
    _, held = kernlog.advance(kept, [f"[{up - 30:.6f}] {XID79}"], clock, 86400.0)
    assert held == []


# ---- class 2 with real processes: prologs of one node at once, an Xid 79 in the kernel log

RACE_SCONTROL = """#!/bin/sh
printf '%s\\n' "scontrol $*" >> "$FAKE_DIR/argv"
[ "$1 $2" = "show node" ] && { printf 'NodeName=%s NodeHostName=%s State=%s Reason=%s\\n' "$4" "$(uname -n)" \
  "$(cut -d'|' -f1 "$FAKE_DIR/nodes/$4" | tr a-z A-Z)" "$(cut -d'|' -f2 "$FAKE_DIR/nodes/$4")"; exit 0; }
[ "$1" = update ] || exit 0
node=${2#nodename=}
case "$3" in
  state=drain) printf 'drained|%s' "${4#reason=}" > "$FAKE_DIR/nodes/.$node" ;;
  state=resume) printf 'idle|none' > "$FAKE_DIR/nodes/.$node" ;;
esac
mv "$FAKE_DIR/nodes/.$node" "$FAKE_DIR/nodes/$node"
"""


@pytest.mark.host
def test_nvidia_xid_catalog_prologs_of_one_node_at_once_act_on_an_xid_once(tmp_path):
    """Four jobs start together on n1 (four Prolog= processes at once) while its kernel log holds an Xid 79: n1 is
    drained (one claim; the others see it drained by torchimages), and once resumed by hand the same log drains it
    no more: the Xid was acted on, whichever process saved the kernel-log state last."""
    from tests.prolog_fakes import SINFO_ARGV_SH
    root = Path(__file__).resolve().parent.parent
    (tmp_path / "bin").mkdir()
    (tmp_path / "nodes").mkdir()
    for name, body in (("sinfo", SINFO_ARGV_SH), ("scontrol", RACE_SCONTROL)):
        (tmp_path / "bin" / name).write_text(body)
        (tmp_path / "bin" / name).chmod(0o755)
    for i in range(1, 6):
        (tmp_path / "nodes" / f"n{i}").write_text("idle|none")
    with open("/proc/uptime", encoding="ascii") as fh:
        up = float(fh.read().split()[0])
    (tmp_path / "bin" / "journalctl").write_text(
        "#!/bin/sh\ncase \" $* \" in *' -k '*) ;; *) exit 0 ;; esac\nsleep 0.$$\n"
        f"printf '%s\\n' '[{up - 5:.6f}] n1 kernel: {XID79}'\n")
    (tmp_path / "bin" / "journalctl").chmod(0o755)
    python = tmp_path / "python"
    python.write_text("#!/bin/sh\nexit 1\n")          # verify writes nothing: the kernel log alone decides
    python.chmod(0o755)
    env = {**os.environ, "PATH": f"{tmp_path / 'bin'}:/usr/bin:/bin", "FAKE_DIR": str(tmp_path),
           "SLURM_SCRIPT_CONTEXT": "prolog_slurmd", "SLURMD_NODENAME": "n1", "SLURM_JOB_PARTITION": "gpu"}
    argv = [sys.executable, "-m", "verify.prolog", "--python", str(python), "--state-dir", str(tmp_path / "state"),
            "--breaker", "0.5", "--budget", "5"]
    procs = [subprocess.Popen(argv, cwd=root, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for _ in range(4)]
    said = [p.communicate(timeout=120) for p in procs]
    assert all("Traceback" not in err for _, err in said), said
    assert (tmp_path / "nodes" / "n1").read_text().startswith("drained|torchimages:XID"), said
    assert [p.returncode for p in procs].count(1) >= 1, said
    calls = (tmp_path / "argv").read_text().splitlines()
    assert sum("state=drain" in c for c in calls) == 1, calls
    (tmp_path / "nodes" / "n1").write_text("idle|none")        # repaired and resumed by hand
    again = subprocess.run(argv, cwd=root, env=env, capture_output=True, text=True, timeout=120)
    assert again.returncode == 0 and (tmp_path / "nodes" / "n1").read_text() == "idle|none", again.stderr
