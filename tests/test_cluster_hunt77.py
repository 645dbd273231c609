"""Issue 36, a seventy-seventh hunt through the public interfaces (make isolate's runner as the batch script starts
it, its plan and answer), classes 7, 8, 4 and 2 from the reading side.

Found:
- Class 7, `make isolate` never names a node on evidence its own answer disbelieves (medium: a healthy node named
  "failing", exit 1, the operator drains it). _clean_for took a partner as a known-good reference when its failures
  fell beside a node that never passed; _unexplained, which decides "intermittent", does not excuse those. Two
  flaky nodes (each passed once, each failed beside the broken ones) were the two references that named a healthy
  third, while the same answer listed one of them as intermittent. Repro: 5 nodes, n1 and n5 fail every
  all-reduce, n2 and n4 their first, third, ...: "at fault: n1 (failing), n3 (failing); intermittent: n2", exit 1
  (n3 is healthy). Practice: NVSentinel's isolation rule (a node is cleared, and a partner is a reference, only on
  evidence; a flapping check is a fault to investigate, not health). Fix (scripts/fleet/isolate.py _settled): a node
  the answer calls intermittent is no reference; named and intermittent are settled together until neither changes.
  Now "intermittent, undetermined: n2, n4 ...; undetermined: n1, n3, n5", exit 2: nothing named on that record.
- Class 7, a run killed half-way (medium: a stale "no node at fault" read as this run's answer; steps left running).
  The runner wrote isolate.json only at its end and never removed the one an earlier run left; on SIGTERM (scancel,
  the job's time limit) it died at once (Python's default), leaving every pair's srun running and the folder's old
  answer in place. Repro: a clean run into TORCHIMAGES_REPORTS=/shared/iso, then a run there whose round 2 hangs,
  SIGTERM to the runner: isolate.json still says "no node at fault", its sruns still run. Practice: Slurm's batch
  semantics (SIGTERM then SIGKILL after KillWait; a job's steps end with it) and the house rule (an answer is
  evidence of this run or of none). Fix (scripts/fleet/isolate_run.py): the old answer is removed before the first
  pair; SIGTERM, SIGINT and SIGHUP stop the rounds: the steps still running are stopped (SIGTERM, killed after 5 s),
  and the answer is written as "undetermined: interrupted by SIGTERM after N finished round(s) ... not final", exit
  2 (1 where the finished rounds already named a node), `interrupted` in isolate.json. With it (low): the steps
  past a round's timeout are stopped together, not one 30 s wait after another (a round of hung pairs ran out the
  job's own time limit, which then killed the runner unanswered).
- Class 1 in make isolate, a setting of ours is never the node's fault (medium: a healthy node named "failing").
  A pair's step stopped at TORCHIMAGES_ISOLATE_TIMEOUT was a failure of both nodes whatever the timeout: with
  `TORCHIMAGES_ISOLATE_TIMEOUT=30` and healthy pairs taking 25-28 s, a node whose pairs took 31 s (its image pulled
  on first use) was "at fault: n3 (failing)", exit 1. Repro: decide() on n1+n2 pass 25 s, n3+n4 timed out 30 s,
  n3+n1 timed out 30 s, n4+n2 pass 28 s. Practice: the prolog's confirmation rule for hangs (a hang is proven only
  with room to spare: verify/prolog/cli.py _confirm) and issue 36's class 1 ("a tiny budget blames the host"). Fix
  (scripts/fleet/isolate.py _tight, HANG_MARGIN): a step stopped at the timeout proves a hang only when the timeout is
  at least 2x the slowest step that ended on its own; otherwise that pair is not assessed, said with both times and
  "raise TORCHIMAGES_ISOLATE_TIMEOUT" (exit 2, never a node named on it).
- Class 8, impossible facts in a file the prolog reads (medium: a node's outcomes never recorded again). The prolog
  keeps node_exporter's torchimages_<node>.prom over a run's outcome when the file holds a run beside it with a graver
  verdict (hunt69's rule: runs that overlapped measured the node at once). A file whose run started an hour ago and
  lasted `1e9` s (garbled, or planted in the textfile folder) overlapped every run to come: its `fault` stood over
  each pass for good ("metrics not written: ... is kept"), node_exporter showing a repaired node faulty. Repro:
  torchimages_n1.prom with last_run_timestamp now-3600, duration 1e9, verdict fault; a passing Prolog= run with
  --metrics-dir: the file still says fault. Practice: evidence from the future is none (issue 36 class 9; a file is
  written when its run ends). Fix (verify/prolog/metricsorder.py): a kept run ending past now + the clock skew is no
  run kept; the new outcome is written.

Probed, held (no defect): the prolog's state folder with history/<node>.jsonl, history, kernlog/<node>.json,
kernlog, breaker.lock, settings and the lock files each a folder, a FIFO, a link, 5 KB of random bytes or a sparse
1 TiB file, under a pass and a lost GPU (80 Prolog= runs: each said or harmless, the lost GPU drained, no hang and no
traceback); two Prolog= runs of one node failing at once (one scontrol drain, both drains recorded, make undrain
then refused for GPU_LOST without a reset, resumed for PCIE_DOWNGRADED); the kernel-log cursor across a ring wrap,
identical lines at one stamp and journalctl/dmesg alternation (kernlog.consumed); the fleet folder with an empty,
BOM-prefixed, UTF-16, NaN, duplicate-key or two-document report and a cut report block (each listed invalid).

Left (low, said here): a .log/.txt under DIR with no report block at all (a pod that crashed before printing its
report) adds nothing and is not listed (make isolate's pair logs are such files, so listing them would fail every
isolate folder); a report named `*.JSON` is not read; a fleet METRICS_DIR keeps the file of a node absent from this
report (node_exporter shows its last fleet verdict; the folder may be shared by several fleets, so it is not
removed); a pair report no verify writes after a step that exited 0 still fails the pair (hunt71 kept that rule).
"""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from scripts.fleet.isolate import Outcome, decide
from scripts.fleet.isolate_run import exit_status
from tests.prolog_fakes import PROLOG_ENV, _gpu, _report, _verify_writes, install_fake
from verify.prolog import cli

pytestmark = pytest.mark.unit


def _pair(a: str, b: str, ok: bool) -> Outcome:
    return Outcome((a, b), ok, 10.0 if ok else None, "" if ok else "NCCL_WRONG_RESULT", 1.0)


# the record of the repro's rounds: n1, n5 broken; n2, n4 fail their odd all-reduces; n3 healthy
RECORD = [(1, _pair("n1", "n2", False)), (1, _pair("n3", "n4", False)),
          (2, _pair("n1", "n3", False)), (2, _pair("n2", "n4", True)),
          (3, _pair("n1", "n4", False)), (3, _pair("n2", "n3", False)),
          (4, _pair("n5", "n2", False))]


def test_nvsentinel_isolation_an_intermittent_node_is_no_reference_that_names_a_healthy_one() -> None:
    d = decide([f"n{i}" for i in range(1, 6)], RECORD)
    named = {f.node for f in d.named}
    assert "n3" not in named, d.summary
    # every node named had each of its strikes against partners the answer itself clears (ok, never intermittent)
    verdicts = {f.node: f.verdict for f in d.findings}
    assert not named or all(verdicts[m] == "ok" for n in named for t in d.tried
                            if n in t.outcome.nodes and t.verdict == "fail" for m in t.outcome.nodes if m != n)
    assert set(d.intermittent) == {"n2", "n4"}
    assert exit_status(d) == 2


def test_nvsentinel_isolation_a_broken_node_against_clean_references_is_still_named() -> None:
    # the rule's other side: a node failing beside two partners with a clean record is named as before
    d = decide(["n1", "n2", "n3", "n4"], [(1, _pair("n1", "n2", False)), (1, _pair("n3", "n4", True)),
                                         (2, _pair("n1", "n3", False)), (2, _pair("n2", "n4", True))])
    assert [f.node for f in d.named] == ["n1"] and exit_status(d) == 1


@pytest.mark.host
def test_nvsentinel_isolation_the_runner_names_no_healthy_node_beside_two_flaky_ones(tmp_path: Path) -> None:
    from tests.isolate_fakes import _isolate
    rc, lines = _isolate(tmp_path, [f"n{i}" for i in range(1, 6)], {"bad": ["n1", "n5"], "flaky": ["n2", "n4"]})
    last = lines[-1]
    assert rc == 2 and "at fault" not in last and "n3" in last and "intermittent" in last, lines


@pytest.mark.host
def test_slurm_batch_semantics_a_runner_stopped_half_way_leaves_no_clean_answer_and_no_step(tmp_path: Path) -> None:
    from scripts.fleet.isolate_job import RUNNER_BOOT
    from tests.helpers import ROOT
    from tests.isolate_fakes import _isolate
    rc, _ = _isolate(tmp_path, ["n1", "n2", "n3", "n4"], {})
    assert rc == 0 and "no node at fault" in json.loads((tmp_path / "isolate.json").read_text())["summary"]
    # the same folder again: n1+n2 pass in round 1, n3 waits, and round 2's n3+n1 hangs until the runner is stopped
    real = tmp_path / "bin" / "srun"
    real.rename(tmp_path / "bin" / "srun-real")
    real.write_text(f'#!/bin/sh\ncase "$*" in *n3*) echo $$ >> {tmp_path}/hung; exec sleep 120;; esac\n'
                    f'exec {tmp_path}/bin/srun-real "$@"\n')
    real.chmod(0o755)
    env = {"PATH": f"{tmp_path / 'bin'}:/usr/bin:/bin", "ISO_SCEN": str(tmp_path / "scen.json"),
           "ISO_HOSTS": "n1\nn2\nn3", "TORCHIMAGES_ISOLATE_STEP": json.dumps(["srun", "--", "bash", "-c", "x"]),
           "TORCHIMAGES_REPORTS": str(tmp_path), "RDZV_PORT": "20000", "SLURM_JOB_NODELIST": "n[1-3]",
           "TORCHIMAGES_ISOLATE_TIMEOUT": "100"}
    proc = subprocess.Popen([sys.executable, "-I", "-c", RUNNER_BOOT, str(ROOT)], env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True)
    hung = tmp_path / "hung"
    end = time.monotonic() + 60
    while not hung.exists() and time.monotonic() < end:
        time.sleep(0.1)
    proc.send_signal(signal.SIGTERM)
    out, _ = proc.communicate(timeout=60)
    assert proc.returncode == 2, out
    last = out.strip().splitlines()[-1]
    assert last.startswith("isolate: undetermined: interrupted by SIGTERM after 1 finished round(s)"), out
    answer = json.loads((tmp_path / "isolate.json").read_text())
    assert answer["interrupted"] == "SIGTERM" and "no node at fault" not in answer["summary"].split("(")[0]
    assert "Traceback" not in out
    pid = int(hung.read_text().split()[0])
    with pytest.raises(ProcessLookupError):     # the hung step was stopped with the runner, not left behind
        os.kill(pid, 0)


@pytest.mark.host
def test_slurm_batch_semantics_a_stop_while_a_step_starts_still_stops_that_step(tmp_path: Path) -> None:
    """scancel landing as a pair's srun starts: the step is stopped with the runner, never left behind holding its
    nodes. (CI once saw one left alive: the signal fell between fork and the list of running steps; that window is
    too narrow to hit on demand, so the next test drives the handler through it.)"""
    from scripts.fleet.isolate_job import RUNNER_BOOT
    from tests.helpers import ROOT
    (tmp_path / "bin").mkdir()
    started = tmp_path / "started"
    # each step tells the runner to stop the moment it runs: the signal lands while the runner starts the step
    (tmp_path / "bin" / "srun").write_text(f"#!/bin/sh\necho $$ >> {started}\nkill -TERM $PPID\nexec sleep 120\n")
    (tmp_path / "bin" / "srun").chmod(0o755)
    (tmp_path / "bin" / "scontrol").write_text("#!/bin/sh\nprintf 'n1\\nn2\\nn3\\nn4\\n'\n")
    (tmp_path / "bin" / "scontrol").chmod(0o755)
    env = {"PATH": f"{tmp_path / 'bin'}:/usr/bin:/bin", "TORCHIMAGES_ISOLATE_STEP": json.dumps(["srun", "--", "x"]),
           "TORCHIMAGES_REPORTS": str(tmp_path), "RDZV_PORT": "20000", "SLURM_JOB_NODELIST": "n[1-4]"}
    proc = subprocess.run([sys.executable, "-I", "-c", RUNNER_BOOT, str(ROOT)], env=env, capture_output=True,
                          text=True, timeout=60, check=False)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 2 and "interrupted by SIGTERM" in out and "Traceback" not in out, out
    pids = [int(p) for p in started.read_text().split()]
    assert pids
    for pid in pids:
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)


def test_a_stop_signal_while_a_step_starts_is_raised_once_it_is_listed() -> None:
    import scripts.fleet.isolate_run as run
    listed: list[str] = []
    previous = signal.signal(signal.SIGTERM, run._interrupt)
    try:
        with pytest.raises(run.Interrupted) as stop, run._starting():
            run._interrupt(signal.SIGTERM, None)      # the handler, as the signal would call it
            listed.append("step")                       # still done: the step is on the list _stop_all reads
        assert stop.value.args[0] == "SIGTERM" and listed == ["step"] and not run._held
        with pytest.raises(run.Interrupted):                 # outside a start, at once as before
            run._interrupt(signal.SIGTERM, None)
    finally:
        signal.signal(signal.SIGTERM, previous)
        signal.signal(signal.SIGINT, signal.default_int_handler)
        signal.signal(signal.SIGHUP, signal.SIG_DFL)


@pytest.mark.parametrize("kept", ["fault", "not-assessed"])
def test_a_kept_run_that_ends_in_the_future_never_freezes_node_exporter_s_file(tmp_path, monkeypatch, capsys, kept):
    pytest.importorskip("prometheus_client")
    install_fake(monkeypatch)
    prom = tmp_path / "prom"
    prom.mkdir()
    target = prom / "torchimages_n1.prom"
    target.write_text(f'torchimages_prolog_last_run_timestamp_seconds{{node="n1"}} {time.time() - 3600:.3f}\n'
                      'torchimages_prolog_duration_seconds{node="n1"} 1e9\n'
                      f'torchimages_prolog_verdict{{node="n1",verdict="{kept}"}} 1\n')
    _verify_writes(monkeypatch, json.dumps(_report(_gpu())).encode())
    status = cli.main(["--state-dir", str(tmp_path / "state"), "--no-kernel-log", "--metrics-dir", str(prom)],
                      PROLOG_ENV)
    said = capsys.readouterr().err
    assert status == 0 and "is kept" not in said, said
    assert 'verdict="pass"' in target.read_text() and "1e9" not in target.read_text()


def test_a_run_beside_a_real_drain_still_keeps_the_drain(tmp_path):
    # the rule's other side (hunt69): a fault of a run that overlapped this one, ended before now, still stands
    pytest.importorskip("prometheus_client")
    from verify.prolog import metrics
    now = time.time() - 60
    metrics.write(str(tmp_path), "n1", None, {"verdict": "fault", "code": "GPU_LOST", "exit": 1, "time": now,
                                              "duration_s": 30})
    with pytest.raises(metrics.Superseded):
        metrics.write(str(tmp_path), "n1", None, {"verdict": "pass", "exit": 0, "time": now + 1, "duration_s": 40})


@pytest.mark.host
def test_a_round_of_hung_pairs_is_stopped_together_and_each_timed_out(tmp_path: Path) -> None:
    """The steps past the timeout are stopped together (once each waited 30 s in turn for a srun that ignored the
    SIGTERM): each pair fails "timed out", no step is left running."""
    from tests.isolate_fakes import _isolate
    (tmp_path / "hang").mkdir()
    hung = tmp_path / "hung"
    srun = tmp_path / "hang" / "srun"
    srun.write_text(f"#!/bin/sh\necho $$ >> {hung}\nexec sleep 120\n")
    srun.chmod(0o755)
    began = time.monotonic()
    rc, lines = _isolate(tmp_path, ["n1", "n2", "n3", "n4"], {}, env={"TORCHIMAGES_ISOLATE_TIMEOUT": "1",
                                                                   "PATH": f"{tmp_path / 'hang'}:{tmp_path / 'bin'}:/usr/bin:/bin"})
    assert time.monotonic() - began < 60
    assert rc == 2 and "no pair passed" in lines[-1], lines
    assert sum("timed out" in line for line in lines) >= 4, lines
    for pid in map(int, hung.read_text().split()):
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)


@pytest.mark.host
def test_slurm_batch_semantics_a_runner_stopped_before_any_round_names_no_node(tmp_path: Path) -> None:
    """Stopped while it asks Slurm for the allocation's nodes (scontrol hangs): one line, exit 2 (undetermined),
    never a traceback's exit 1 ("node(s) named"), and no answer file."""
    from scripts.fleet.isolate_job import RUNNER_BOOT
    from tests.helpers import ROOT
    (tmp_path / "bin").mkdir()
    asked = tmp_path / "asked"
    (tmp_path / "bin" / "scontrol").write_text(f"#!/bin/sh\ntouch {asked}\nexec sleep 120\n")
    (tmp_path / "bin" / "scontrol").chmod(0o755)
    env = {"PATH": f"{tmp_path / 'bin'}:/usr/bin:/bin", "TORCHIMAGES_ISOLATE_STEP": json.dumps(["srun", "--", "x"]),
           "TORCHIMAGES_REPORTS": str(tmp_path), "RDZV_PORT": "20000", "SLURM_JOB_NODELIST": "n[1-3]"}
    proc = subprocess.Popen([sys.executable, "-I", "-c", RUNNER_BOOT, str(ROOT)], env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True)
    end = time.monotonic() + 60
    while not asked.exists() and time.monotonic() < end:
        time.sleep(0.1)
    proc.send_signal(signal.SIGINT)
    out, _ = proc.communicate(timeout=60)
    assert proc.returncode == 2 and "interrupted by SIGINT" in out and "Traceback" not in out, out
    assert not (tmp_path / "isolate.json").exists()


def _hung(a: str, b: str, seconds: float) -> Outcome:
    return Outcome((a, b), False, None, "timed out", seconds, hung=True)


def _took(a: str, b: str, seconds: float) -> Outcome:
    return Outcome((a, b), True, 10.0, "", seconds)


def test_a_timeout_too_tight_to_prove_a_hang_names_no_node() -> None:
    d = decide(["n1", "n2", "n3", "n4"], [(1, _took("n1", "n2", 25.0)), (1, _hung("n3", "n4", 30.2)),
                                         (2, _hung("n3", "n1", 30.1)), (2, _took("n4", "n2", 28.0))])
    assert not d.named and exit_status(d) == 2, d.summary
    assert "raise TORCHIMAGES_ISOLATE_TIMEOUT" in d.summary and "n4+n2 took 28 s" in d.summary


def test_a_hang_with_room_to_spare_still_names_the_node() -> None:
    # the default 300 s against pairs of 25-28 s: the hung node is named as before
    d = decide(["n1", "n2", "n3", "n4"], [(1, _took("n1", "n2", 25.0)), (1, _hung("n3", "n4", 300.0)),
                                         (2, _hung("n3", "n1", 300.0)), (2, _took("n4", "n2", 28.0))])
    assert [f.node for f in d.named] == ["n3"] and exit_status(d) == 1, d.summary
