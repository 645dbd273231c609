"""torchimages-prolog with real processes (issue 36): prologs of one multi-node job failing at once against the
breaker, and SIGTERM to the prolog while verify runs. sinfo and scontrol are stand-ins on PATH (shell scripts that
record their argv and keep each node's state in a file), so the race is between real processes, in well under a
second of work each. The three nodes run on this host, as the Slurm test cluster's do: scontrol shows each with
this host's name for NodeHostName (a job's step drains only the node Slurm says is this host)."""
from __future__ import annotations

import multiprocessing
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.helpers import ROOT, alive
from tests.prolog_fakes import SINFO_ARGV_SH
from verify.prolog import cli, history
from verify.prolog.verdict import EXIT_BREAKER, EXIT_FAULT, FAULT, Verdict

pytestmark = pytest.mark.host

SCONTROL = """#!/bin/sh
printf '%s\\n' "scontrol $*" >> "$FAKE_DIR/argv"
[ "$1 $2" = "show node" ] && { printf 'NodeName=%s NodeHostName=%s\\n' "$4" "$(uname -n)"; exit 0; }
[ "$1" = update ] || exit 0
node=${2#nodename=}
case "$3" in
  state=drain) printf 'drained|%s' "${4#reason=}" > "$FAKE_DIR/nodes/.$node" ;;
  state=resume) printf 'idle|none' > "$FAKE_DIR/nodes/.$node" ;;
esac
mv "$FAKE_DIR/nodes/.$node" "$FAKE_DIR/nodes/$node"
"""


def _fake_slurm(tmp_path: Path, nodes: int) -> Path:
    (tmp_path / "bin").mkdir()
    (tmp_path / "nodes").mkdir()
    for name, body in (("sinfo", SINFO_ARGV_SH), ("scontrol", SCONTROL)):
        (tmp_path / "bin" / name).write_text(body)
        (tmp_path / "bin" / name).chmod(0o755)
    for i in range(1, nodes + 1):
        (tmp_path / "nodes" / f"n{i}").write_text("idle|none")
    return tmp_path


def _claim(node: str, state_dir: str, start: multiprocessing.synchronize.Barrier) -> None:
    """One node's prolog at the drain: its exit status is what cli._drain returned."""
    cfg = cli.config(cli._parser().parse_args(["--node", node, "--state-dir", state_dir, "--breaker", "0.2",
                                               "--partition", "gpu", "--no-kernel-log"]), {"SLURM_STEP_ID": "0"})
    start.wait(timeout=30)
    os._exit(cli._drain(cfg, Verdict(FAULT, "GPU_LOST", "host", "a bad driver roll-out", "gpu")))


def _race(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, shared: bool) -> tuple[list[int], dict[str, str]]:
    fake = _fake_slurm(tmp_path, 5)
    monkeypatch.setenv("PATH", f"{fake / 'bin'}:{os.environ['PATH']}")
    monkeypatch.setenv("FAKE_DIR", str(fake))
    ctx = multiprocessing.get_context("fork")
    start = ctx.Barrier(3)
    procs = [ctx.Process(target=_claim, args=(n, str(tmp_path / ("state" if shared else f"state-{n}")), start))
             for n in ("n1", "n2", "n3")]
    for p in procs:
        p.start()
    for p in procs:
        p.join(timeout=60)
    statuses = [p.exitcode if p.exitcode is not None else -1 for p in procs]
    states = {p.name: p.read_text() for p in (fake / "nodes").iterdir() if not p.name.startswith(".")}
    return statuses, states


def test_three_prologs_failing_at_once_drain_one_of_five_under_a_20_percent_breaker(tmp_path, monkeypatch):
    """NVSentinel's breaker under concurrency: three prologs of one job fail at once (a bad driver roll-out); with
    the state folder shared, the breaker's lock makes count-and-claim atomic: exactly one of five nodes drained,
    the other two refused (exit 4) and say so in their histories."""
    statuses, states = _race(tmp_path, monkeypatch, shared=True)
    assert sorted(statuses) == [EXIT_FAULT, EXIT_BREAKER, EXIT_BREAKER], statuses
    drained = [n for n, s in states.items() if s.startswith("drained|torchimages:GPU_LOST #")]
    assert len(drained) == 1, states
    argv = (tmp_path / "argv").read_text().splitlines()
    assert argv.count("sinfo -h -N -o %N|%T|%E -p gpu") == 3 + 1            # each counts; the one claim re-counts
    assert sum(a.startswith("scontrol update nodename=") and "state=drain" in a for a in argv) == 1
    events = {n: [e["event"] for e in history.read(str(tmp_path / "state"), n).events] for n in ("n1", "n2", "n3")}
    assert sorted(map(tuple, events.values())) == [("drain",), ("drain-refused",), ("drain-refused",)], events


def test_without_a_shared_lock_the_recount_still_never_passes_the_breaker(tmp_path, monkeypatch):
    """NVSentinel's breaker, with a state folder per node (no shared lock): each claim is followed by a re-count,
    and a claim that took the partition past its share is given back; never more than the share stays drained."""
    statuses, states = _race(tmp_path, monkeypatch, shared=False)
    drained = [n for n, s in states.items() if s.startswith("drained|")]
    assert len(drained) <= 1 and statuses.count(EXIT_FAULT) == len(drained), (statuses, states)


def test_racing_claims_all_given_back_claim_again_until_the_share_is_drained(tmp_path, monkeypatch):
    """NVSentinel's breaker, liveness: with a state folder per node, three prologs failing at once each saw the
    others' claims and all three gave theirs back: none of the three broken nodes was drained where the breaker
    allowed one, and a job on the same three nodes races the same way every time. A claim given back for racing
    ones is made again after a random wait (each re-counted: the share is never passed), so exactly the share is
    drained."""
    for attempt in range(3):
        run = tmp_path / str(attempt)
        run.mkdir()
        statuses, states = _race(run, monkeypatch, shared=False)
        drained = [n for n, s in states.items() if s.startswith("drained|")]
        assert len(drained) == 1 and sorted(statuses) == [EXIT_FAULT, EXIT_BREAKER, EXIT_BREAKER], (statuses, states)


def test_sigterm_to_the_prolog_stops_verify_s_whole_process_group(tmp_path):
    """Slurm's prolog semantics: slurmd sends SIGTERM to a prolog past PrologEpilogTimeout; the prolog must stop
    its child and the child's own children (the process group), leave a trace, and exit."""
    python = tmp_path / "python"
    python.write_text(f"#!/bin/sh\nsleep 300 &\necho $! > {tmp_path}/child\nwait\n")
    python.chmod(0o755)
    proc = subprocess.Popen([sys.executable, "-m", "verify.prolog", "--python", str(python), "--no-kernel-log",
                             "--state-dir", str(tmp_path / "state"), "--mode", "step", "--node", "n1"],
                            cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    while not (tmp_path / "child").exists() or not (tmp_path / "child").read_text().strip():
        assert time.monotonic() < deadline and proc.poll() is None, proc.communicate()
        time.sleep(0.05)
    child = int((tmp_path / "child").read_text())
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=30)
    assert proc.returncode == 128 + signal.SIGTERM, err
    assert "PROLOG_INTERRUPTED" in err and "Traceback" not in err
    gone = time.monotonic() + 10
    while alive(child) and time.monotonic() < gone:
        time.sleep(0.05)
    assert not alive(child)
    assert [(e["event"], e["code"]) for e in history.read(str(tmp_path / "state"), "n1").events] == \
        [("not-assessed", "PROLOG_INTERRUPTED")]
