"""torchimages-prolog on a real Slurm with four nodes (tests/slurm.py: munged, slurmctld and four slurmd on this
host), issue 26: verify's own trouble (no report, a crash, a hang) leaves the node in service with exit 3; a host
fault confirmed by a second run drains; the breaker at 25 % of 4 nodes refuses the second drain and says so;
--revalidate resumes a node torchimages drained once the fault is gone, refuses while it persists, never touches a
node drained with another reason, and flags a node that fails again after a resume; the history records each step.
The faults are verify's real test hooks (VERIFY_TEST_HANG); verify's own trouble comes from a stand-in for the
Python that runs it (--python), which records its argv."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests import slurm
from tests.helpers import ROOT
from tests.prolog_fakes import allow_test_hooks

pytestmark = [pytest.mark.host, pytest.mark.slow]


@pytest.fixture(scope="module")
def cluster() -> Iterator[slurm.Cluster]:
    try:
        with slurm.cluster(nodes=4) as c:
            yield c
    except slurm.Unavailable as exc:
        if os.environ.get("REQUIRE_DOCKER") == "1":
            pytest.fail(f"REQUIRE_DOCKER=1 (CI) but no Slurm: {exc}")
        pytest.skip(str(exc))


@pytest.fixture(autouse=True)
def _back_in_service(cluster):
    yield
    for node, state in cluster.node_states().items():
        if "drain" in state:
            cluster.resume(node)


def _job(tmp_path: Path, node: str, name: str, *args: str) -> Path:
    allow_test_hooks(tmp_path / "state")         # the job's hooks hang or crash its checks: the operator allows them
    script = tmp_path / f"{name}.sbatch"
    script.write_text(f"""#!/bin/bash
#SBATCH --nodes=1
#SBATCH --nodelist={node}
#SBATCH --no-requeue
#SBATCH --output={tmp_path}/{name}-%j.out
export PATH={ROOT / ".venv" / "bin"}:$PATH PYTHONPATH={ROOT}
srun --ntasks-per-node=1 {ROOT}/verify/bin/torchimages-prolog --python {ROOT / ".venv" / "bin" / "python3"} --state-dir {tmp_path}/state {" ".join(args)}
""")
    return script


def _run_job(cluster: slurm.Cluster, tmp_path: Path, node: str, name: str, *args: str,
             env: dict[str, str] | None = None) -> tuple[dict[str, str], str]:
    job = cluster.sbatch(_job(tmp_path, node, name, *args), cwd=tmp_path, env=env)
    fields = cluster.wait(job, 600)
    return fields, (tmp_path / f"{name}-{job}.out").read_text(errors="replace")


def _revalidate(cluster: slurm.Cluster, tmp_path: Path, node: str, *args: str,
                env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """--revalidate from this host, as the node itself (a drained node runs no job): every node runs on this host,
    but under its own UTS host name, so the revalidation runs under it too (issue 36: Slurm's NodeHostName for the
    node must be this host's name; SLURMD_NODENAME alone proves nothing)."""
    argv = [sys.executable, "-m", "verify.prolog", "--revalidate", "--node", node, "--state-dir", str(tmp_path / "state"),
            *args]
    return subprocess.run(cluster.as_node(node, argv), cwd=ROOT, capture_output=True, text=True, timeout=300,
                          env={**cluster.env, "SLURMD_NODENAME": node, **(env or {})}, check=False)


def _history(tmp_path: Path, node: str) -> list[tuple[str, str | None]]:
    path = tmp_path / "state" / "history" / f"{node}.jsonl"
    lines = path.read_text().splitlines() if path.exists() else []
    return [(e["event"], e["code"]) for e in map(json.loads, lines)]


def _reason(cluster: slurm.Cluster, node: str) -> str:
    return next((r for r in cluster.reasons().splitlines() if r.startswith(f"{node}|")), "")


def test_verify_s_own_trouble_leaves_the_node_in_service(cluster, tmp_path):
    argv_log = tmp_path / "python.argv"
    for behaviour, body in (("no-report", "exit 0"), ("crash", "kill -SEGV $$"), ("hang", "sleep 300")):
        python = tmp_path / f"python-{behaviour}"
        python.write_text(f'#!/bin/sh\nprintf "%s\\n" "$*" >> {argv_log}\n{body}\n')
        python.chmod(0o755)
        fields, out = _run_job(cluster, tmp_path, "n1", behaviour, "--budget", "2", "--grace", "3",
                               "--python", str(python))
        assert fields["ExitCode"] == "3:0", out                 # its own status: not pass (0), not a fault (1)
        assert "prolog: NOT-ASSESSED PREFLIGHT_" in out and "stays in service" in out, out
        assert cluster.node_states()["n1"] == "idle" and not _reason(cluster, "n1")
    assert [e for e, _ in _history(tmp_path, "n1")] == ["not-assessed"] * 3
    # isolated, with the prolog's own package root first (issue 36: never a verify.py in the job's working folder)
    assert all(line.startswith("-I -c ") and f"{ROOT} --preflight --budget 2 --json " in line
               for line in argv_log.read_text().splitlines())


def test_a_confirmed_host_fault_drains_and_the_breaker_refuses_the_second(cluster, tmp_path):
    hang = {"VERIFY_TEST_HANG": "shm"}
    args = ("--budget", "6", "--confirm-factor", "2", "--breaker", "0.25", "--grace", "300")
    fields, out = _run_job(cluster, tmp_path, "n2", "first", *args, env=hang)
    assert fields["JobState"] == "FAILED" and fields["ExitCode"] == "1:0", out
    assert "alone with 12 s to confirm" in out            # shm (and, on a busy host, another check) again
    line = _reason(cluster, "n2")
    assert "|torchimages:CHECK_TIMEOUT " in line and "confirmed" in line and "drain" in line.split("|")[1], line
    fields, out = _run_job(cluster, tmp_path, "n3", "second", *args, env=hang)
    assert fields["ExitCode"] == "4:0", out
    assert "BREAKER CHECK_TIMEOUT on n3" in out and "1 of 4 node(s) of partition test already drained" in out, out
    assert cluster.node_states()["n3"] == "idle" and not _reason(cluster, "n3")
    assert _history(tmp_path, "n2") == [("fault", "CHECK_TIMEOUT"), ("drain", "CHECK_TIMEOUT")]
    assert _history(tmp_path, "n3") == [("fault", "CHECK_TIMEOUT"), ("drain-refused", "CHECK_TIMEOUT")]


def test_revalidate_resumes_only_what_torchimages_drained_once_it_passes(cluster, tmp_path):
    hang = {"VERIFY_TEST_HANG": "shm"}
    fault = ("--budget", "6", "--confirm-factor", "2", "--breaker", "0.5", "--grace", "300")
    fields, out = _run_job(cluster, tmp_path, "n4", "drain", *fault, env=hang)
    assert fields["ExitCode"] == "1:0" and "drain" in cluster.node_states()["n4"], out
    # the fault persists: refused, still drained
    still = _revalidate(cluster, tmp_path, "n4", *fault, env=hang)
    assert still.returncode == 1 and "n4 stays drained: CHECK_TIMEOUT" in still.stderr, still.stdout + still.stderr
    assert "drain" in cluster.node_states()["n4"]
    # the fault is gone: resumed
    back = _revalidate(cluster, tmp_path, "n4", "--budget", "30")
    assert back.returncode == 0 and "RESUMED n4" in back.stderr, back.stdout + back.stderr
    assert cluster.node_states()["n4"].startswith("idle")       # idle* too: a slurmd slow to answer on a busy host
    # drained by someone else: never touched
    cluster.run("scontrol", "update", "nodename=n3", "state=drain", "reason=bios update by ops")
    other = _revalidate(cluster, tmp_path, "n3", "--budget", "30")
    assert other.returncode == 5 and "drained with another reason ('bios update by ops')" in other.stderr, other.stderr
    assert "drain" in cluster.node_states()["n3"] and "bios update by ops" in _reason(cluster, "n3")
    # the same fault again soon after the resume: flagged for inspection, and not resumed even once it passes
    fields, out = _run_job(cluster, tmp_path, "n4", "again", *fault, env=hang)
    assert fields["ExitCode"] == "1:0" and "INSPECT n4" in out, out
    flagged = _revalidate(cluster, tmp_path, "n4", "--budget", "30")
    assert flagged.returncode == 5 and "flagged for hardware inspection" in flagged.stderr, flagged.stderr
    assert "drain" in cluster.node_states()["n4"]
    assert [e for e, _ in _history(tmp_path, "n4")] == ["fault", "drain", "resume-refused", "resume", "fault",
                                                        "drain", "inspect", "inspect"]
    assert [e for e, _ in _history(tmp_path, "n3")] == ["resume-refused"]
