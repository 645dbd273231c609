"""hunt96, class 8 (files the cluster tooling reads are hostile): a history folder that is a link is never followed.

Defect (medium: a file made as root through a planted link). With STATE/history a symbolic link to another folder,
the prolog refused the history (read and append, "refused, not followed") but still made its metrics lock
`.<node>.metrics.lock` in the link's target, as root, each run. Repro: `python -m verify.prolog --state-dir S
--metrics-dir M` under Slurm's Prolog= with S/history -> /some/folder: the lock file appears there. Fix:
verify/prolog/metrics.py `write`: a lock whose folder is a link is not taken (the look alone, as without a lock).

Practice: open with O_NOFOLLOW, regular files only (issue 36 class 8); Slurm's prolog semantics: the tool's own
trouble never drains, the run still gates the node (exit 0 on a pass, the metrics still written).
"""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers import ROOT
from tests.prolog_procs import cluster, prolog_env

pytestmark = pytest.mark.host              # the prolog run as slurmd runs it


def test_o_nofollow_a_linked_history_folder_gets_no_file_of_ours(tmp_path: Path) -> None:
    """O_NOFOLLOW practice: the link's target holds no file of the prolog's after a run; the run passes the node and
    writes its metrics, and says that the history folder was refused."""
    fake = cluster(tmp_path)
    (fake / "state").mkdir()
    (fake / "metrics").mkdir()
    victim = tmp_path / "victim"
    victim.mkdir()
    (fake / "state" / "history").symlink_to(victim)
    env = prolog_env(fake, SLURM_SCRIPT_CONTEXT="prolog_slurmd", SLURMD_NODENAME="n1", SLURM_JOB_ID="7",
                     SLURM_JOB_PARTITION="gpu")
    done = subprocess.run([sys.executable, "-m", "verify.prolog", "--python", str(fake / "verify"), "--no-kernel-log",
                           "--state-dir", str(fake / "state"), "--metrics-dir", str(fake / "metrics")],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert os.listdir(victim) == []
    assert "symbolic link" in done.stderr and (fake / "nodes" / "n1").read_text() == "idle|none"
    assert (fake / "metrics" / "torchimages_n1.prom").is_file()
