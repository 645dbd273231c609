"""make slurm LAUNCHER=docker and LAUNCHER=oci on a real Slurm (tests/slurm.py: two slurmd on this host) with the CPU
image `make build` builds: verify on 1 and 2 nodes, the gloo all-reduce across both, reports named by node; a cancelled
docker job leaves no container and a report that is not pass; without oci.conf the oci job refuses in one line.

TORCHIMAGES_SLURM_TEST_IMAGE names another image to run (e.g. one with this checkout's verify/ in it); default: the
CPU image, built here through the project's commands when absent (and kept)."""
from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path

import pytest

from scripts.builder.engine import image_exists
from tests import slurm
from tests.helpers import run_cli

pytestmark = [pytest.mark.docker, pytest.mark.slow]
TAG = slurm.CPU_IMAGE_TAG
QUICK = {"VERIFY_ARGS": "--checks shm,hdf5"}


@pytest.fixture(scope="module")
def cpu_image(docker_client) -> str:
    wanted = os.environ.get("TORCHIMAGES_SLURM_TEST_IMAGE") or f"torchimages:{TAG}"
    if not image_exists(docker_client, wanted):
        assert "TORCHIMAGES_SLURM_TEST_IMAGE" not in os.environ, f"{wanted} is not in the engine"
        for command in ("base", "build"):
            proc = run_cli(command, env={"IMAGE": TAG}, timeout=1800)
            assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    return wanted


def _submit_both(cluster: slurm.Cluster, work: Path, launcher: str, image: str,
                 extra: dict[str, str] | None = None) -> dict[int, tuple[Path, str]]:
    """A 1-node and a 2-node job at once (each takes one CPU per node): nodes → (script, job id)."""
    jobs = {}
    for nodes in (2, 1):
        folder = work / f"{nodes}n"
        folder.mkdir()
        script = slurm.write_job(folder, launcher, nodes, env=QUICK)
        env = {"TORCHIMAGES_IMAGE": image, "TORCHIMAGES_JOIN_TIMEOUT": "90", **(extra or {})}
        jobs[nodes] = (script, cluster.sbatch(script, *(["--nodelist=n2"] if nodes == 1 else []), cwd=folder, env=env))
    return jobs


def _check_passed(cluster: slurm.Cluster, work: Path, jobs: dict[int, tuple[Path, str]], reports_root: Path | None,
                  launcher: str) -> None:
    for nodes, (script, job) in jobs.items():
        fields = cluster.wait(job, 240)
        folder = work / f"{nodes}n"
        out = slurm.output(folder, script, job)
        assert fields["JobState"] == "COMPLETED" and fields["ExitCode"] == "0:0", out
        found = slurm.reports((reports_root or folder) / f"reports-{job}")
        names = ["n1", "n2"] if nodes == 2 else ["n2"]
        assert set(found) == {"nccl.json", *(f"node-{n}.json" for n in names)}, out
        nccl = next(c for c in found["nccl.json"]["checks"] if c["name"] == "nccl")
        assert f"world size {nodes}" in nccl["summary"], nccl
        # train across the nodes, where the image's verify has it (TORCHIMAGES_SLURM_TEST_IMAGE may be older)
        train = next((c for c in found["nccl.json"]["checks"] if c["name"] == "train"), None)
        assert train is None or (train["status"] == "pass" and f"world size {nodes} on {nodes} node(s)" in train["summary"]), train
        for name in names:
            checks = {c["name"]: c["status"] for c in found[f"node-{name}.json"]["checks"]}
            assert checks == {"shm": "pass", "hdf5": "pass"}, (name, checks)
            assert f"torchimages: node {name} local checks exit 0, collective exit 0" in out
        assert f"launcher {launcher}, rendezvous at n" in out


def test_docker_launcher_on_two_nodes_and_on_one(slurm_cluster, cpu_image, docker_client, tmp_path):
    jobs = _submit_both(slurm_cluster, tmp_path, "docker", cpu_image)
    _check_passed(slurm_cluster, tmp_path, jobs, None, "docker")
    for _, job in jobs.values():
        assert not docker_client.containers.list(all=True, filters={"name": f"torchimages-{job}-"})
    # written as the caller (--user), not as the image's user
    report = next((tmp_path / "2n").glob("reports-*/node-n1.json"))
    assert report.stat().st_uid == os.getuid()
    # the fleet report over the 2-node job's output: both nodes' reports and the collective's, nothing to drain
    folder = report.parent
    proc = run_cli("fleet-report", env={"DIR": str(folder)}, timeout=300)
    fleet = json.loads((folder / "fleet.json").read_text())
    passing = {n["report"].rsplit("/", 1)[-1]: n["passing"] for n in fleet["nodes"]}
    assert set(passing) == {"node-n1.json", "node-n2.json", "nccl.json"} and fleet["drain"] == []
    assert passing["node-n1.json"] and passing["node-n2.json"]
    # gloo on CPUs is a skip, never a pass: without anything else judged the fleet report says so and exits 1, with
    # nothing to drain; train across both nodes (in the collective's report where the image has it) is judged over gloo
    judged = [c["name"] for c in json.loads((folder / "nccl.json").read_text())["checks"] if c["status"] in ("pass", "warn")]
    assert judged in ([], ["train"]), judged
    assert passing["nccl.json"] == bool(judged) and proc.returncode == (0 if judged else 1), proc.stdout + proc.stderr
    assert "time to first step" in proc.stdout and "n2" in proc.stdout


def test_a_cancelled_docker_job_stops_its_container_and_its_report_is_not_pass(slurm_cluster, cpu_image, docker_client,
                                                                                tmp_path):
    script = slurm.write_job(tmp_path, "docker", 1, env={"VERIFY_ARGS": "--checks shm"})
    job = slurm_cluster.sbatch(script, cwd=tmp_path, env={"TORCHIMAGES_IMAGE": cpu_image, "VERIFY_TEST_HANG": "shm"})
    deadline = time.monotonic() + 120
    while "shm: running" not in slurm.output(tmp_path, script, job):
        assert time.monotonic() < deadline, slurm.output(tmp_path, script, job)
        time.sleep(0.3)
    assert docker_client.containers.list(filters={"name": f"torchimages-{job}-"})
    time.sleep(1)
    slurm_cluster.run("scancel", job)
    fields = slurm_cluster.wait(job, 60)
    out = slurm.output(tmp_path, script, job)
    assert fields["JobState"] == "CANCELLED", out
    deadline = time.monotonic() + 30         # docker stop --time 10, then --rm
    while docker_client.containers.list(all=True, filters={"name": f"torchimages-{job}-"}):
        assert time.monotonic() < deadline, "the cancelled job's container is still there"
        time.sleep(0.5)
    report = slurm.reports(tmp_path / f"reports-{job}")["node-n1.json"]
    assert report["status"] != "pass", report
    shm = next(c for c in report["checks"] if c["name"] == "shm")
    assert shm["status"] != "pass" and shm["code"] == "INTERRUPTED" and "SIGTERM" in shm["summary"], shm


def test_oci_launcher_refuses_without_oci_conf_then_runs_in_the_bundle(slurm_cluster, cpu_image, tmp_path):
    build = tmp_path / "build"
    env = {"BUILD_DIR": str(build), "IMAGE": TAG}
    if cpu_image != f"torchimages:{TAG}":       # the bundle of another image: the same commands, by hand
        from scripts.builder.engine import connect
        from scripts.fleet.slurm import make_bundle
        bundle = make_bundle(connect(os.environ), cpu_image, build / "slurm" / f"{TAG}.bundle")
    else:
        proc = run_cli("oci-bundle", env=env, timeout=600)
        assert proc.returncode == 0, proc.stdout + proc.stderr
        bundle = build / "slurm" / f"{TAG}.bundle"
    assert (bundle / "rootfs" / "etc" / "torchimages" / "bundle.env").is_file()
    assert not Path("/etc/torchimages/bundle.env").exists()
    try:
        # no oci.conf: Slurm runs `srun --container` on the host without a word; the script sees it and refuses
        slurm_cluster.disable_oci()
        (tmp_path / "refused").mkdir()
        script = slurm.write_job(tmp_path / "refused", "oci", 1, env=QUICK)
        job = slurm_cluster.sbatch(script, cwd=tmp_path / "refused", env={"TORCHIMAGES_BUNDLE": str(bundle)})
        fields = slurm_cluster.wait(job, 60)
        out = slurm.output(tmp_path / "refused", script, job)
        assert fields["JobState"] == "FAILED" and fields["ExitCode"] == "2:0", out
        refusals = [line for line in out.splitlines() if "REFUSED" in line]
        assert refusals == ["torchimages: REFUSED: this step runs on the host, not in the image: Slurm ignores "
                            "--container without oci.conf; install oci.conf on every node (docs/scaling-out.md: Slurm, oci)"], out
        # with oci.conf (runc): both jobs run in the bundle; reports land in the bundle's mounted reports folder
        slurm_cluster.enable_oci()
        jobs = _submit_both(slurm_cluster, tmp_path, "oci", cpu_image, {"TORCHIMAGES_BUNDLE": str(bundle)})
        _check_passed(slurm_cluster, tmp_path, jobs, bundle / "reports", "oci")
    finally:
        slurm_cluster.disable_oci()
        subprocess.run(["rm", "-rf", str(bundle)], check=False)
