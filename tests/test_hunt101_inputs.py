"""Issue 36, a hundred-and-first hunt through the public interfaces: classes 5 (a hung checker), 7 (`make isolate`)
and 10 (the launchers).

Found:
- Class 7, `make isolate` keeps what its finished rounds saw when its own trouble stops a later round (medium: the
  node the rounds saw fail in no answer; a pair's step left running). A round that could not be run to its end for
  the runner's own trouble (a leftover folder where a round's report or log goes in a reused TORCHIMAGES_REPORTS, a
  step srun could not start: EAGAIN, a reports folder gone stale on NFS) ended the whole run "isolate: [Errno 21] Is
  a directory: '.../round2-pair2.json'", exit 2, with no isolate.json and no table: round 1's failed pair n1+n2 was
  in no answer, and the round's pairs already started (round2-pair1's srun) were left running, holding their nodes
  (only a signal stopped them). Repro: 4 nodes, n1 broken, `mkdir $TORCHIMAGES_REPORTS/round2-pair2.json`, then
  the isolate job. Practice: Slurm's batch semantics (a job's steps end with it, never left holding nodes) and the
  house rule for an interrupted run (hunt77: the finished rounds' evidence stands, nothing is cleared, not final).
  Fix (scripts/fleet/isolate_run.py): run_round stops every step it started on any exception, not only a signal;
  isolate() ends the rounds on an OSError as on a signal: the answer is written, "undetermined: interrupted by the
  runner's own error (...) after N finished round(s) ... not final", exit 2 (1 where the finished rounds named a
  node), the finished rounds' table beside it.

Tried and held (no change): class 5 through cli.main (three hung runs in a row drain PREFLIGHT_HUNG, a hand resume
restarts the streak and the flap rule flags the node for inspection; Prolog= and first-step runs count in one streak;
a clock stepped back two hours mid-streak neither delays nor doubles it (uptime placement); --hang-runs/
TORCHIMAGES_HANG_RUNS spellings; GPU subsets on a shared node); class 7 by a 3,000-case simulation of dead, flaky and
the tool's own failures over 2-9 nodes (no dead node ever "ok", no exit 0 with a failed pair on record); class 10
(RDMA_RESOURCE values: GPU names in any case, MIG, none/NONE, spaces, single-node and CPU jobs each said; the prolog
wrapper from a job folder holding verify/, runpy.py, sitecustomize.py with PYTHONPATH/PYTHONHOME/PYTHONSTARTUP set
runs its own code).
"""
from __future__ import annotations

import json
import signal
import subprocess
from pathlib import Path
from typing import Any, ClassVar

import pytest

from scripts.fleet import isolate_run
from tests.isolate_fakes import _isolate


@pytest.mark.host
def test_isolate_keeps_the_finished_rounds_when_its_own_trouble_stops_a_round(tmp_path: Path) -> None:
    """A reused reports folder holding a folder where round 2's report goes: round 1's failed pair stays on record,
    the answer is written and not final, exit 2, never "[Errno 21]" alone with no answer."""
    (tmp_path / "round2-pair2.json").mkdir()
    rc, lines = _isolate(tmp_path, ["n1", "n2", "n3", "n4"], {"bad": ["n1"]})
    assert rc == 2, lines
    assert lines[-1].startswith("isolate: undetermined: interrupted by the runner's own error (")
    assert "Is a directory" in lines[-1] and "not final" in lines[-1]
    answer = json.loads((tmp_path / "isolate.json").read_text())
    assert answer["interrupted"].startswith("the runner's own error")
    assert {"n1", "n2"} <= set(answer["undetermined"])
    assert [p["verdict"] for p in answer["pairs"]] == ["fail", "pass"]      # round 1, kept


class _Step:
    """A pair's srun as Popen returns it: still running until told to stop; the signals it got recorded."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self.signals: list[int] = []
        self.returncode: int | None = None
        _Step.made.append(self)

    made: ClassVar[list[_Step]] = []

    def poll(self) -> int | None:
        return self.returncode

    def send_signal(self, signum: int) -> None:
        self.signals.append(signum)
        self.returncode = -signum

    def wait(self, timeout: float | None = None) -> int:
        return self.returncode or 0

    def kill(self) -> None:
        self.send_signal(signal.SIGKILL)


@pytest.mark.unit
def test_a_round_its_own_trouble_stops_leaves_no_step_running(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Slurm's batch semantics: pair 1's step started, pair 2's log cannot be made (a folder there): pair 1's srun
    is stopped (SIGTERM) before the error goes up, never left holding its nodes."""
    _Step.made = []
    monkeypatch.setattr(subprocess, "Popen", _Step)       # the module isolate_run starts steps through
    (tmp_path / "round1-pair2.log").mkdir()
    with pytest.raises(OSError):
        isolate_run.run_round(1, [("n1", "n2"), ("n3", "n4")], ["srun", "--", "x"], tmp_path, 20000, 0, 30.0)
    assert len(_Step.made) == 1 and _Step.made[0].signals == [signal.SIGTERM]
