"""Issue 36, a sixty-ninth hunt: real concurrent processes against one state folder, and stops at every stage.

Each case runs `python -m verify.prolog` as separate processes (Slurm's sinfo and scontrol as shell stand-ins that
record their argv and keep each node's state in a file, verify as a script), so the races are the real ones.

Found:
- Class 3 / class 2, return to service must prove the repair, under concurrency (high: a broken node returned).
  `make undrain NODE=n1` read Slurm's state and the history a last time (no drain recorded since its proof), then
  resumed the node; a gate run of n1 (a job's first step, an Epilog=) that found a new fault between that look and
  the resume took Slurm's "drained by torchimages" reason as its own drain ("already drained: its reason stays")
  and recorded it, and the resume then undid it: n1 with a lost GPU found a second before was back in service, its
  history ending in our resume. NVSentinel's rule: a cordon is lifted only on proof, never undoing a newer one. Fix:
  the last look, the resume and its record are made under the breaker's lock (STATE/breaker.lock), the lock every
  drain takes (verify/prolog/revalidate.py _resume): the gate's drain is either seen (refused) or made after the
  resume (the node drained again). A lock held past its wait is "not resumed", exit 3 (our trouble, never a pass).
- Class 5 / Slurm's prolog semantics, a killed prolog leaves its child running (medium). slurmd ends a prolog past
  PrologEpilogTimeout with SIGKILL to the prolog's process group (and an operator or the OOM killer may SIGKILL it
  alone); no handler runs on SIGKILL, and verify runs in a session of its own (so that it can be stopped as a
  group), as each of verify's checks does: verify and a check stuck on a GPU were left running, orphaned, beside the
  next job's preflight (which no run lock sees: a confirmed timeout there counted towards PREFLIGHT_HUNG). Fix: the
  child is tied to its parent's life with Linux's PR_SET_PDEATHSIG (verify/shared/deathsig.py), in the prolog's
  start of verify and in verify's start of each check.
- Class 1, a setting is never the node's fault (high: a healthy node drained past the breaker, a partition taken
  down). slurmd kills a Prolog= that runs past slurm.conf's PrologEpilogTimeout and drains the node ("Prolog error":
  no reason of ours, so the breaker never counts it and make undrain cannot return it). The prolog's cap (--budget +
  --grace, 90 s by default) ignored slurm.conf: `PrologEpilogTimeout=30` (a typo of 300) let every run that needed a
  confirmation run on past 30 s, so Slurm drained each such node; a roll-out that slowed every preflight drained
  the partition. Fix: under Prolog=/Epilog= the cap is fitted 10 s under the PrologEpilogTimeout slurmd's slurm.conf
  sets (verify/prolog/slurmconf.py: SLURM_CONF, else Slurm's usual places; the smaller of two settings), and said;
  a run that then has too little time is not assessed (BUDGET_TOO_SMALL, exit 0), never Slurm's drain.
- Class 2 / class 8, evidence silently lost under concurrency (medium). Prologs of one node (jobs starting together)
  end in any order: a run that began before another's drain and passed after it wrote its pass over the drain's
  outcome in node_exporter's file (torchimages_prolog_verdict{verdict="pass"}, exit 0 for a node drained a second
  before): an alert on the verdict never fired. Fix (verify/prolog/metricsorder.py, under a lock in the state
  folder): of runs that did not overlap the later stands; of runs that overlapped (one moment of the node) the graver
  outcome stands, a fault over not assessed over a pass, whichever began or ended first; a kept stamp past now + the
  clock-skew allowance (a clock that was ahead) never freezes the file.
- Class 1 / Slurm's prolog semantics, a signal of ours drains (medium, high where it bites: a healthy node drained).
  A Prolog= that a signal ends (exit 143) is drained by Slurm; main turns a stop into PROLOG_INTERRUPTED (exit 0)
  only once its handlers are in place: a SIGTERM while the wrapper ran or Python loaded the prolog (a tenth of a second
  of every run: 9 of 30 stops at random moments of a run) ended it 143 with no trace, and one after main restored the
  handlers it found turned a drain's status into 143. Fix: the wrapper ignores stops until Python runs, `python -m
  verify.prolog` records them first thing (verify/prolog/stops.py) and main acts on one as on any stop; the handlers
  are installed inside main's try; after main, stops are ignored (the status is decided).
"""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.helpers import ROOT, alive
from tests.prolog_procs import cluster as _cluster
from tests.prolog_procs import prolog_env as _env
from tests.prolog_procs import start_prolog as _prolog
from verify.prolog import history

pytestmark = pytest.mark.host

def _undrain(fake: Path, *args: str) -> subprocess.Popen[str]:
    """make undrain NODE=n1's command, by an operator on the node (their PATH)."""
    return subprocess.Popen([sys.executable, "-m", "verify.prolog", "--revalidate", "--node", "n1", "--python",
                             str(fake / "verify"), "--no-kernel-log", "--state-dir", str(fake / "state"), *args],
                            cwd=ROOT, env=_env(fake), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _wait_for(path: Path, limit: float = 60.0) -> None:
    end = time.monotonic() + limit
    while not path.exists():
        assert time.monotonic() < end, f"{path} never appeared"
        time.sleep(0.05)


def test_nvsentinel_return_to_service_a_drain_recorded_during_the_resume_is_never_undone(tmp_path):
    """NVSentinel's return to service under concurrency: make undrain's preflight passed and its last look found no
    new drain; a gate run of n1 then found a lost GPU while scontrol resumed it. The gate's drain must stand: n1
    drained for GPU_LOST after both end, the history's last drain after its last resume. It was: n1 idle, the
    history ending drain, resume (the gate's fault undone by a resume that never saw it)."""
    fake = _cluster(tmp_path)
    (fake / "fail").write_text("PCIE_DOWNGRADED")
    first = _prolog(fake)
    _, err = first.communicate(timeout=120)
    assert first.returncode == 1 and (fake / "nodes" / "n1").read_text().startswith("drained|torchimages:"), err
    (fake / "fail").unlink()
    (fake / "hold").touch()
    undrain = _undrain(fake)
    _wait_for(fake / "resuming")          # past its last look, inside scontrol's resume
    (fake / "fail").write_text("GPU_LOST")
    gate = _prolog(fake)
    end = time.monotonic() + 20          # the gate ends (no lock kept it), or reaches the breaker's lock and waits
    while gate.poll() is None and time.monotonic() < end and \
            "sinfo -h -N -o %N|%T|%E -n n1" not in (fake / "argv").read_text().split("resume", 1)[-1]:
        time.sleep(0.05)
    time.sleep(1.0)
    (fake / "go").touch()
    _, uerr = undrain.communicate(timeout=120)
    _, gerr = gate.communicate(timeout=120)
    assert "Traceback" not in uerr + gerr
    assert gate.returncode == 1, gerr                       # the lost GPU drains (Prolog=: exit 1)
    state = (fake / "nodes" / "n1").read_text()
    assert state.startswith("drained|torchimages:GPU_LOST #"), (state, uerr[-600:], gerr[-600:])
    events = [(e["event"], e["code"]) for e in history.read(str(fake / "state"), "n1").events]
    assert history.stands_drained(history.read(str(fake / "state"), "n1").events), events
    assert ("drain", "GPU_LOST") in events


def test_nvsentinel_return_to_service_waits_for_a_drain_under_way(tmp_path):
    """The other order: a drain of n1 is under way (the breaker's lock held) when make undrain's preflight passes.
    It is not resumed on a look taken before that drain is recorded: exit 3, not resumed, a resume-refused on
    record; the node stays drained with our reason."""
    import fcntl
    fake = _cluster(tmp_path)
    (fake / "fail").write_text("PCIE_DOWNGRADED")
    first = _prolog(fake)
    first.communicate(timeout=120)
    (fake / "fail").unlink()
    with open(fake / "state" / "breaker.lock", "a+") as held:
        fcntl.lockf(held, fcntl.LOCK_EX)
        undrain = _undrain(fake, "--budget", "1", "--grace", "1", "--return-passes", "1")
        _, err = undrain.communicate(timeout=180)
    assert undrain.returncode == 3, err
    assert "breaker's lock was not had" in err.strip().splitlines()[-1], err
    assert (fake / "nodes" / "n1").read_text().startswith("drained|torchimages:PCIE_DOWNGRADED #")
    assert [e["event"] for e in history.read(str(fake / "state"), "n1").events][-1] == "resume-refused"


def _gone(pid: int, limit: float = 10.0) -> bool:
    end = time.monotonic() + limit
    while alive(pid) and time.monotonic() < end:
        time.sleep(0.05)
    return not alive(pid)


def test_slurm_prolog_semantics_a_sigkilled_prolog_takes_verify_with_it(tmp_path):
    """slurmd's PrologEpilogTimeout: SIGKILL to the prolog's process group. verify, in a session of its own, was
    left running after the prolog died (orphaned, beside the next job's preflight); now it dies with the prolog."""
    fake = _cluster(tmp_path)
    (fake / "verify").write_text(f"#!/bin/sh\necho $$ > {fake}/verify.pid\nexec sleep 120\n")
    prolog = _prolog(fake)
    _wait_for(fake / "verify.pid")
    while not (fake / "verify.pid").read_text().strip():
        time.sleep(0.05)
    child = int((fake / "verify.pid").read_text())
    try:
        os.killpg(prolog.pid, signal.SIGKILL) if os.getpgid(prolog.pid) == prolog.pid else prolog.kill()
        prolog.communicate(timeout=30)
        assert _gone(child), "verify outlived the SIGKILLed prolog"
    finally:
        if alive(child):
            os.kill(child, signal.SIGKILL)


def _descendant_sessions(root: int) -> list[int]:
    """The pids of root's children that lead a session of their own."""
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdecimal():
            try:
                fields = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == root and int(fields[3]) == int(entry):
                found.append(int(entry))
    return found


def test_a_sigkilled_verify_takes_its_hung_check_with_it(tmp_path):
    """verify starts each check in a session of its own: a SIGKILLed verify (the OOM killer, the prolog's death
    above) left a check hung on its GPU running with no parent; now the check dies with verify."""
    env = {**os.environ, "VERIFY_TEST_HANG": "shm", "TMPDIR": str(tmp_path)}
    proc = subprocess.Popen([sys.executable, "-m", "verify", "--checks", "shm", "--timeout", "60", "--json",
                             str(tmp_path / "out.json")], cwd=ROOT, env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    end = time.monotonic() + 60
    while not any(tmp_path.rglob("hang-*")):       # the hook's scratch file: the check itself hangs now
        assert time.monotonic() < end and proc.poll() is None, "no check hung"
        time.sleep(0.05)
    checks = _descendant_sessions(proc.pid)
    assert checks
    try:
        proc.kill()
        proc.wait(timeout=30)
        assert all(_gone(c) for c in checks), "a check outlived the SIGKILLed verify"
    finally:
        for c in checks:
            if alive(c):
                os.kill(c, signal.SIGKILL)


def test_slurm_prolog_semantics_the_cap_fits_under_slurm_conf_s_prolog_epilog_timeout(tmp_path):
    """Slurm's prolog semantics: slurmd kills a Prolog= past PrologEpilogTimeout and drains the node (no reason of
    ours: past the breaker). With `PrologEpilogTimeout=15` in slurmd's slurm.conf and a verify that runs long, the
    prolog ends on its own within 15 s (its cap 5 s, said), not assessed and exit 0; it ran to its own cap of 90 s."""
    fake = _cluster(tmp_path)
    (fake / "verify").write_text("#!/bin/sh\nexec sleep 120\n")
    conf = fake / "slurm.conf"
    conf.write_text("ClusterName=c\nPrologEpilogTimeout=600\n  prologepilogtimeout=15 # a typo of 150\n")
    env_conf = {"SLURM_CONF": str(conf)}
    started = time.monotonic()
    proc = subprocess.run([sys.executable, "-m", "verify.prolog", "--python", str(fake / "verify"), "--no-kernel-log",
                           "--state-dir", str(fake / "state")], cwd=ROOT, capture_output=True, text=True, timeout=120,
                          check=False, env=_env(fake, SLURM_SCRIPT_CONTEXT="prolog_slurmd", SLURMD_NODENAME="n1",
                                                **env_conf))
    took = time.monotonic() - started
    assert proc.returncode == 0 and "NOT-ASSESSED" in proc.stdout, proc.stdout + proc.stderr
    assert took < 15, took
    assert "PrologEpilogTimeout=15 is under the prolog's cap of 90 s" in proc.stderr, proc.stderr
    assert not (fake / "argv").exists()               # nothing asked of Slurm


def test_the_timeout_is_read_leniently_and_only_where_it_binds(tmp_path):
    """slurm.conf's keys are case-blind; a value that is no count of seconds (UNLIMITED), a comment or no setting
    leaves the cap as it is; a timeout that holds the cap + 10 s changes nothing."""
    from verify.prolog import slurmconf
    conf = tmp_path / "slurm.conf"
    for text, want in (("PrologEpilogTimeout=UNLIMITED\n", None), ("#PrologEpilogTimeout=5\n", None),
                       ("NodeName=n1 CPUs=2\n", None), ("PROLOGEPILOGTIMEOUT = 45\n", 45.0),
                       ("PrologEpilogTimeout=300 PrologFlags=Alloc\nPrologEpilogTimeout=200\n", 200.0)):
        conf.write_text(text)
        assert slurmconf.prolog_timeout({"SLURM_CONF": str(conf)}) == (want, None), text
    assert slurmconf.fitted(90.0, 100.0) is None and slurmconf.fitted(90.0, None) is None
    assert slurmconf.fitted(90.0, 45.0) == 35.0
    os.mkfifo(tmp_path / "fifo")                    # a hostile file: one line, never a hang
    timeout, problem = slurmconf.prolog_timeout({"SLURM_CONF": str(tmp_path / "fifo")})
    assert timeout is None and "not read" in str(problem) and "FIFO" in str(problem)


def _verdict(folder: Path, node: str = "n1") -> str:
    text = (folder / f"torchimages_{node}.prom").read_text()
    return next(line for line in text.splitlines() if line.startswith("torchimages_prolog_verdict{"))


def test_node_exporter_keeps_the_outcome_of_the_run_that_started_last(tmp_path):
    """Two prologs of n1 at once: B began first and passes after A (begun later) drained n1 for a lost GPU. The
    metrics keep A's fault (exit 1); B's pass, written last, hid the drain."""
    fake = _cluster(tmp_path)
    metrics = ["--metrics-dir", str(fake / "metrics")]
    first = _prolog(fake, "n1", *metrics, WAIT_FOR=str(fake / "go"))     # B: its verify waits
    time.sleep(1.2)                                                     # stamps a second apart at least
    (fake / "fail").write_text("GPU_LOST")
    second = _prolog(fake, "n1", *metrics)
    _, aerr = second.communicate(timeout=120)
    assert second.returncode == 1 and 'verdict="fault"' in _verdict(fake / "metrics"), aerr
    (fake / "fail").unlink()
    (fake / "go").touch()
    out, berr = first.communicate(timeout=120)
    assert first.returncode == 0 and "PASS" in out, berr
    assert 'code="GPU_LOST"' in _verdict(fake / "metrics"), berr
    assert "holds the outcome (fault) of a run beside this one" in berr and "Traceback" not in berr
    assert sorted(p.name for p in (fake / "metrics").iterdir()) == ["torchimages_n1.prom"]


def test_a_metrics_file_stamped_in_the_future_never_freezes_the_node_s_metrics(tmp_path):
    """A file whose run is stamped past now + the clock-skew allowance (a clock that was ahead, set right since) is
    no later run: the next outcome replaces it; one a moment later than this run's start is kept."""
    pytest.importorskip("prometheus_client")
    from verify.prolog import metrics
    now = time.time()
    metrics.write(str(tmp_path), "n1", None, {"verdict": "fault", "exit": 1, "time": now + 86400})
    metrics.write(str(tmp_path), "n1", None, {"verdict": "pass", "exit": 0, "time": now})
    assert 'verdict="pass"' in _verdict(tmp_path)
    metrics.write(str(tmp_path), "n1", None, {"verdict": "fault", "exit": 1, "time": now + 2})
    with pytest.raises(metrics.Superseded):
        metrics.write(str(tmp_path), "n1", None, {"verdict": "pass", "exit": 0, "time": now + 1})
    assert 'verdict="fault"' in _verdict(tmp_path)


def test_of_runs_side_by_side_the_fault_stands_whichever_began_first(tmp_path):
    """A pass of a run that began after the drain's run began and ended before it (one moment of the node) never
    stands over the drain; a run that began after both had ended replaces either."""
    pytest.importorskip("prometheus_client")
    from verify.prolog import metrics
    now = time.time() - 60
    metrics.write(str(tmp_path), "n1", None, {"verdict": "pass", "exit": 0, "time": now + 1, "duration_s": 1})
    metrics.write(str(tmp_path), "n1", None, {"verdict": "fault", "code": "GPU_LOST", "exit": 1, "time": now,
                                              "duration_s": 5})
    assert 'verdict="fault"' in _verdict(tmp_path)
    with pytest.raises(metrics.Superseded):       # another pass beside it, begun later: the fault stands
        metrics.write(str(tmp_path), "n1", None, {"verdict": "pass", "exit": 0, "time": now + 2, "duration_s": 4})
    metrics.write(str(tmp_path), "n1", None, {"verdict": "pass", "exit": 0, "time": now + 10, "duration_s": 1})
    assert 'verdict="pass"' in _verdict(tmp_path)


WRAPPER = ROOT / "verify" / "bin" / "torchimages-prolog"


def _term_handled(pid: int) -> bool:
    """SIGTERM is ignored or caught by the process now (/proc's SigIgn, SigCgt), or the process is Python already."""
    try:
        if os.path.basename(os.readlink(f"/proc/{pid}/exe")).startswith("python"):
            return True
        fields = dict(line.split(":\t", 1) for line in Path(f"/proc/{pid}/status").read_text().splitlines()
                      if ":\t" in line)
    except OSError:
        return True
    bit = 1 << (signal.SIGTERM - 1)
    return bool((int(fields.get("SigIgn", "0"), 16) | int(fields.get("SigCgt", "0"), 16)) & bit)


# from the wrapper's first line on: within the shell's own start, before it, is the one window left (a millisecond)
@pytest.mark.parametrize("delay", [0.0, 0.03, 0.08, 0.15, 0.3])
def test_slurm_prolog_semantics_a_stop_while_the_prolog_loads_is_not_assessed(tmp_path, delay):
    """Slurm's prolog semantics: a Prolog= that a signal ends (exit 143) drains the node. SIGTERM at the start of a
    run (the wrapper, Python loading the prolog) ended it 143 with no trace; now exit 0 (or the run's own outcome
    where the stop was ignored before Python ran), never 143 and never a traceback."""
    fake = _cluster(tmp_path)
    env = _env(fake, SLURM_SCRIPT_CONTEXT="prolog_slurmd", SLURMD_NODENAME="n1")
    env["PATH"] = f"{Path(sys.executable).parent}:{env['PATH']}"
    proc = subprocess.Popen([str(WRAPPER), "--python", str(fake / "verify"), "--no-kernel-log", "--state-dir",
                             str(fake / "state")], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    end = time.monotonic() + 30
    while not _term_handled(proc.pid) and time.monotonic() < end:
        time.sleep(0.001)
    time.sleep(delay)
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 0 and "Traceback" not in err, (proc.returncode, err)
