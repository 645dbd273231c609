"""Round 70 of issue 36's hunt, the host tier: two `make undrain NODE=n1` as real processes at once (Slurm's sinfo and
scontrol as shell stand-ins keeping each node's state in a file, verify as a script), as a person and a script would.

NVSentinel's return to service: a cordon is lifted on proof, once. Both revalidations pass their preflight; the first
to take the breaker's lock resumes n1, the second finds Slurm's drain gone and the first's resume in the history. It
exited 5 ("REFUSED ... its drain changed") and recorded a refusal after the resume, for a node in service on a proof;
now it says "RESUMED n1 already" and exits 0, and the history holds one drain and one resume
(tests/test_cluster_hunt70.py has the rule's cases).
"""
from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.helpers import ROOT
from tests.prolog_procs import cluster as _cluster
from tests.prolog_procs import prolog_env as _env
from tests.prolog_procs import start_prolog as _prolog
from verify.prolog import history

pytestmark = pytest.mark.host

# verify as --python runs it: a report of 8 GPUs and the shm check (failing while $FAKE_DIR/fail exists), once
# $FAKE_DIR/go exists (both preflights run at once); each run leaves $FAKE_DIR/started.<pid> as it starts
VERIFY_SHM = """#!/bin/sh
while [ $# -gt 0 ]; do [ "$1" = --json ] && out=$2; shift; done
touch "$FAKE_DIR/started.$$"
i=0
while [ ! -f "$FAKE_DIR/go" ] && [ $i -lt 300 ]; do sleep 0.1; i=$((i+1)); done
if [ -f "$FAKE_DIR/fail" ]; then
  printf '{"status": "fail", "created": "%s", "checks": [{"name": "shm", "status": "fail", "code": "SHM_TOO_SMALL", \
"owner": "host", "summary": "64 MiB", "metrics": {}}]}' "$(date -u +%Y-%m-%dT%H:%M:%SZ)" > "$out"
else
  printf '{"status": "pass", "created": "%s", "checks": [{"name": "gpu", "status": "pass", "summary": "8 GPUs", \
"metrics": {"nvml_devices": {"value": 8.0, "unit": "count"}}}, {"name": "shm", "status": "pass", "summary": "2 GiB", \
"metrics": {}}, {"name": "nccl", "status": "pass", "summary": "all-reduce verified", "metrics": {}}]}' \
"$(date -u +%Y-%m-%dT%H:%M:%SZ)" > "$out"
fi
"""


def _undrain(fake: Path) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-m", "verify.prolog", "--revalidate", "--node", "n1", "--python",
                             str(fake / "verify"), "--no-kernel-log", "--state-dir", str(fake / "state")],
                            cwd=ROOT, env=_env(fake), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def test_nvsentinel_two_undrains_at_once_resume_once_and_both_exit_0(tmp_path):
    fake = _cluster(tmp_path)
    (fake / "verify").write_text(VERIFY_SHM)
    (fake / "fail").touch()
    (fake / "go").touch()
    gate = _prolog(fake)                   # n1 drained for its /dev/shm, by the prolog itself
    _, err = gate.communicate(timeout=120)
    assert gate.returncode == 1 and (fake / "nodes" / "n1").read_text().startswith("drained|torchimages:"), err
    (fake / "fail").unlink()
    (fake / "go").unlink()
    for marker in fake.glob("started.*"):
        marker.unlink()
    both = [_undrain(fake), _undrain(fake)]
    # "at once": both in their preflight before either may resume (a loaded CI started the second interpreter after
    # the first had resumed n1: that is a later undrain, ci40)
    deadline = time.monotonic() + 120
    while len(list(fake.glob("started.*"))) < 2 and time.monotonic() < deadline and all(p.poll() is None for p in both):
        time.sleep(0.05)
    (fake / "go").touch()
    said = [p.communicate(timeout=180) for p in both]
    errs = "".join(e for _, e in said)
    assert "Traceback" not in errs
    assert [p.returncode for p in both] == [0, 0], errs
    assert sum("RESUMED n1 already" in e for _, e in said) == 1, errs
    assert (fake / "nodes" / "n1").read_text() == "idle|none"
    events = [e["event"] for e in history.read(str(fake / "state"), "n1").events]
    assert events.count("resume") == 1 and "resume-refused" not in events, events
