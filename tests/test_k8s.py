"""Kubernetes, checked as far as it can be without a cluster (issue 18, item 9).

Every manifest `make k8s-verify` writes (1 and 2 nodes, GPUS=0 and 8, each platform of a multi-platform image)
passes `kubernetes-validate --strict` (the Kubernetes OpenAPI schemas the package bundles, offline: an unknown or
misspelled field fails) against the newest and the oldest Kubernetes it knows; and the `kubectl wait` line the command
prints returns on a failed Job as well as on a completed one (run against a stand-in kubectl)."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from scripts.fleet.cluster import job_name, k8s_wait
from tests.helpers import DATA, ROOT, run_cli

pytestmark = pytest.mark.host

MULTI = "2.15.0-cuda13.2-cudnn9-runtime-debian12"      # tests/data/matrix-platforms.yaml: linux/amd64 and arm64
VALIDATE = Path(sys.executable).parent / "kubernetes-validate"
OLDEST = "1.25.0"                           # the oldest schema kubernetes-validate 1.37.0 bundles


def _validate(paths: list[Path], *extra: str) -> subprocess.CompletedProcess[str]:
    if not VALIDATE.exists():
        pytest.fail(f"{VALIDATE} missing: `make setup` installs kubernetes-validate (requirements-dev.txt)")
    return subprocess.run([str(VALIDATE), "--strict", *extra, *map(str, paths)], capture_output=True, text=True,
                          timeout=600, check=False)


@pytest.fixture(scope="module")
def platforms_images(tmp_path_factory) -> Path:
    """images/ of the multi-platform test matrix."""
    from scripts.plan.compat import load_compat
    from scripts.plan.matrix import load_matrix
    from scripts.render import rendered_files, write_images
    where = tmp_path_factory.mktemp("k8s")
    specs = load_matrix(DATA / "matrix-platforms.yaml", load_compat(DATA / "compat.yaml"))
    assert any(s.tag == MULTI and len(s.platforms) == 2 for s in specs)
    write_images(rendered_files(specs), where / "images", where / "build")
    return where / "images"


@pytest.fixture(scope="module")
def manifests(platforms_images, tmp_path_factory) -> dict[tuple[str, int, int, str], list[Path]]:
    """`make k8s-verify` of every image, of the shipped images/ and of the multi-platform test matrix, for 1 and 2
    nodes, 0 and 8 GPUs, amd64 and arm64 (the images built for it)."""
    from scripts.render import load_rendered
    written: dict[tuple[str, int, int, str], list[Path]] = {}
    for source, images in (("shipped", ROOT / "images"), ("test", platforms_images)):
        specs = load_rendered(images)
        for platform in ("linux/amd64", "linux/arm64"):
            for nodes, gpus in ((1, 0), (1, 8), (2, 0), (2, 8)):
                # GPUs are asked of CUDA images only (a CPU image's GPUS=8 is refused: tests/test_launch_inputs.py)
                tags = ",".join(s.tag for s in specs if platform in s.platforms and (s.cuda or not gpus))
                if not tags:
                    continue
                build = tmp_path_factory.mktemp("build")
                proc = run_cli("k8s-verify", env={"LOCAL_IMAGE": "1", "IMAGES_DIR": str(images), "BUILD_DIR": str(build),
                                                  "IMAGE": tags, "NODES": str(nodes), "GPUS": str(gpus),
                                                  "PLATFORM": platform})
                assert proc.returncode == 0, proc.stderr
                written[(source, nodes, gpus, platform)] = sorted((build / "k8s").glob("*.yaml"))
                assert len(written[(source, nodes, gpus, platform)]) == tags.count(",") + 1
    assert ("test", 2, 8, "linux/arm64") in written
    return written


def test_every_generated_manifest_passes_kubernetes_validate_strict(manifests):
    paths = [p for group in manifests.values() for p in group]
    assert len(paths) > 8
    for extra in ((), ("-k", OLDEST)):
        proc = _validate(paths, *extra)
        assert proc.returncode == 0, proc.stdout + proc.stderr
        resources = [line for line in proc.stdout.splitlines() if " passed for resource " in line]
        kinds = sum(len(list(yaml.safe_load_all(p.read_text()))) for p in paths)
        assert len(resources) == kinds, proc.stdout


def test_the_validator_is_strict_about_what_we_write(manifests, tmp_path):
    """The check has teeth: a misspelled field, a wrong type and a GPU count as a number each fail it."""
    source = manifests[("test", 2, 8, "linux/amd64")][0]
    docs = list(yaml.safe_load_all(source.read_text()))
    job = docs[-1]
    container = job["spec"]["template"]["spec"]["containers"][0]
    breakages = {
        "misspelled.yaml": lambda c: c.__setitem__("volumeMount", c.pop("volumeMounts")),
        "typed.yaml": lambda c: c["ports"][0].__setitem__("containerPort", "29500"),
        "env.yaml": lambda c: c["env"].append({"name": "X", "valueFrom": {"fieldRef": {"path": "spec.nodeName"}}}),
    }
    for name, breaking in breakages.items():
        broken = yaml.safe_load(yaml.safe_dump(job))
        breaking(broken["spec"]["template"]["spec"]["containers"][0])
        (tmp_path / name).write_text(yaml.safe_dump(broken))
        proc = _validate([tmp_path / name])
        assert proc.returncode != 0, f"{name}: {proc.stdout}"
    assert container["resources"]["limits"]["nvidia.com/gpu"] == "8"


def test_cpu_nodes_request_no_gpu_and_run_one_gloo_process_per_pod(manifests):
    for (_, nodes, gpus, _), paths in manifests.items():
        for path in paths:
            job = list(yaml.safe_load_all(path.read_text()))[-1]
            pod = job["spec"]["template"]["spec"]
            container = pod["containers"][0]
            script = container["command"][-1]
            env = {e["name"]: e for e in container["env"]}
            assert env["NODE_NAME"]["valueFrom"]["fieldRef"]["fieldPath"] == "spec.nodeName"
            assert env["JOB_NAME"]["value"] == job["metadata"]["name"]
            assert f"--expect-gpus {gpus}" in script
            if gpus == 0:
                assert "resources" not in container and "tolerations" not in pod, path
                assert nodes == 1 or "--nproc-per-node=1 " in script
            else:
                assert container["resources"]["limits"]["nvidia.com/gpu"] == "8"
                assert nodes == 1 or "--nproc-per-node=8 " in script


# A stand-in kubectl, one process as the real one is (a kill ends it): `wait --for=condition=X` sleeps FAKE_X
# seconds, then exits with FAKE_X_RC.
FAKE_KUBECTL = """#!{python}
import os, sys, time
which = next((w for w in ("complete", "failed") if f"--for=condition={{w}}" in sys.argv), None)
if which:
    time.sleep(float(os.environ[f"FAKE_{{which.upper()}}"]))
    sys.exit(int(os.environ[f"FAKE_{{which.upper()}}_RC"]))
"""


@pytest.mark.parametrize(("complete", "failed", "code", "said"), [
    ((0.2, 0), (120, 0), 0, ""),                            # completed: 0 at once, the failed-wait killed
    ((120, 0), (0.2, 0), 1, "failed"),                      # failed: 1 at once (a lone --for=complete sits 30m)
    ((0.2, 1), (0.2, 1), 1, ""),                            # both waits timed out: not a success
])
def test_the_printed_kubectl_wait_returns_on_failure_too(tmp_path, complete, failed, code, said):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "kubectl").write_text(FAKE_KUBECTL.format(python=sys.executable))
    (bin_dir / "kubectl").chmod(0o755)
    line = k8s_wait("verify-x-2n")
    env = {**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}", "FAKE_COMPLETE": str(complete[0]),
           "FAKE_COMPLETE_RC": str(complete[1]), "FAKE_FAILED": str(failed[0]), "FAKE_FAILED_RC": str(failed[1])}
    for shell in ("sh", "bash"):                             # what a user's shell hands on: the line is one sh -c
        if not shutil.which(shell):
            continue
        start = time.monotonic()
        proc = subprocess.run([shell, "-c", line], env=env, capture_output=True, text=True, timeout=60, check=False)
        assert proc.returncode == code, proc.stderr
        assert time.monotonic() - start < 10, "returned when the first wait ended, not at the timeout"
        assert said in proc.stderr


def test_make_k8s_verify_prints_that_wait_line(platforms_images, tmp_path):
    proc = run_cli("k8s-verify", env={"LOCAL_IMAGE": "1", "IMAGES_DIR": str(platforms_images), "BUILD_DIR": str(tmp_path),
                                      "IMAGE": MULTI, "NODES": "2", "GPUS": "0"})
    assert proc.returncode == 0, proc.stderr
    name = job_name(MULTI, 2)
    assert f"&& {k8s_wait(name)}" in proc.stdout
    assert "--for=condition=failed" in proc.stdout
    readme = (ROOT / "docs" / "scaling-out.md").read_text()
    assert "--for=condition=failed" in readme and "kubernetes-validate --strict" in readme
