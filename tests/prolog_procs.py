"""Real concurrent prolog processes against recorded Slurm commands (hunt69's and hunt70's host tests): a fake
cluster folder (scontrol, sinfo and a verify stand-in on PATH, node states as files) and `python -m verify.prolog`
started as slurmd starts it."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.helpers import ROOT
from tests.prolog_fakes import SINFO_ARGV_SH

# scontrol as slurmctld answers it; a resume waits (at most 20 s) for $FAKE_DIR/go once $FAKE_DIR/hold exists
SCONTROL = """#!/bin/sh
printf '%s\\n' "scontrol $*" >> "$FAKE_DIR/argv"
[ "$1 $2" = "show node" ] && { printf 'NodeName=%s NodeHostName=%s Gres=gpu:8\\n' "$4" "$(uname -n)"; exit 0; }
[ "$1" = update ] || exit 0
node=${2#nodename=}
if [ "$3" = state=resume ] && [ -f "$FAKE_DIR/hold" ]; then
  touch "$FAKE_DIR/resuming"; i=0
  while [ ! -f "$FAKE_DIR/go" ] && [ $i -lt 200 ]; do sleep 0.1; i=$((i+1)); done
fi
case "$3" in
  state=drain) printf 'drained|%s' "${4#reason=}" > "$FAKE_DIR/nodes/.$node" ;;
  state=resume) printf 'idle|none' > "$FAKE_DIR/nodes/.$node" ;;
esac
mv "$FAKE_DIR/nodes/.$node" "$FAKE_DIR/nodes/$node"
"""
# verify as --python runs it: a report of 8 GPUs, failing with the code in $FAKE_DIR/fail when it exists; it waits for
# $WAIT_FOR first where that is set
VERIFY = """#!/bin/sh
while [ $# -gt 0 ]; do [ "$1" = --json ] && out=$2; shift; done
i=0
while [ -n "$WAIT_FOR" ] && [ ! -f "$WAIT_FOR" ] && [ $i -lt 300 ]; do sleep 0.1; i=$((i+1)); done
now=$(date -u +%Y-%m-%dT%H:%M:%SZ)
if [ -f "$FAKE_DIR/fail" ]; then
  printf '{"status": "fail", "created": "%s", "checks": [{"name": "gpu", "status": "fail", "code": "%s", "owner": \
"host", "summary": "a fault", "metrics": {"nvml_devices": {"value": 8.0, "unit": "count"}}}]}' "$now" \
"$(cat "$FAKE_DIR/fail")" > "$out"
else
  printf '{"status": "pass", "created": "%s", "checks": [{"name": "gpu", "status": "pass", "summary": "8 GPUs", \
"metrics": {"nvml_devices": {"value": 8.0, "unit": "count"}}}, {"name": "shm", "status": "pass", "summary": "2 GiB", \
"metrics": {}}, {"name": "nccl", "status": "pass", "summary": "all-reduce verified", "metrics": {}}]}' "$now" > "$out"
fi
"""


def cluster(tmp_path: Path, nodes: int = 4) -> Path:
    for sub in ("bin", "nodes"):
        (tmp_path / sub).mkdir()
    for name, body in (("bin/sinfo", SINFO_ARGV_SH), ("bin/scontrol", SCONTROL), ("verify", VERIFY)):
        (tmp_path / name).write_text(body)
        (tmp_path / name).chmod(0o755)
    for i in range(1, nodes + 1):
        (tmp_path / "nodes" / f"n{i}").write_text("idle|none")
    return tmp_path


def prolog_env(fake: Path, **extra: str) -> dict[str, str]:
    # TMPDIR: what a killed prolog leaves (its report folder) stays in the test's folder
    return {"PATH": f"{fake / 'bin'}:/usr/bin:/bin", "FAKE_DIR": str(fake), "TMPDIR": str(fake), **extra}


def start_prolog(fake: Path, node: str = "n1", *args: str, **extra: str) -> subprocess.Popen[str]:
    """Slurm's Prolog= of `node` (slurmd's environment), its state in fake/state."""
    env = prolog_env(fake, SLURM_SCRIPT_CONTEXT="prolog_slurmd", SLURMD_NODENAME=node, SLURM_JOB_ID="7",
               SLURM_JOB_PARTITION="gpu", **extra)
    return subprocess.Popen([sys.executable, "-m", "verify.prolog", "--python", str(fake / "verify"),
                             "--no-kernel-log", "--state-dir", str(fake / "state"), "--breaker", "0.5", *args],
                            cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
