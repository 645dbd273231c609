"""Issue 35, batch 313 (pyxis): a container Slurm's pyxis plugin (with enroot) could not start, read from slurmstepd's
`pyxis:` lines by `verify explain` (verify/explain/pyxis.py) and judged by the train check by class
(verify/checks/train/pyxis.py), the same on both roads (the facts replayed, the text explained):
- the node's, where pyxis's or enroot's own words name the node: the running kernel refusing pyxis's seccomp filter
  (`seccomp filter failed: Function not implemented`), enroot's runtime/data path not creatable under the site's
  enroot.conf (`mkdir: cannot create directory '/run/enroot': Permission denied`), FUSE missing on the node;
- the job's: an image reference the registry refuses or lacks (`401 Unauthorized`, `404`, `manifest unknown`,
  `Invalid image reference`), a --container-mounts source that does not exist, a container name in use;
- the image's: the entrypoint or command not in the image (enroot-switchroot, verify/checks/train/imagefault.py);
- any other pyxis failure: never the host's (the job's to read, no drain).
Each rule has its no-false-drain case: a job's or image's pyxis failure is never owner host."""
from __future__ import annotations

import pytest

from tests.judging import explained, raw, replayed, verdict
from verify.checks import CHECKS
from verify.judging import judge
from verify.options import Options

pytestmark = pytest.mark.unit

SECCOMP = "centos-7-stateless-node-cn03-srun-pyxis-seccomp-filter-failed-function-not-implemented-stateful-nodes-fine-host"
RUNTIME = ("slurm-node-vm-standard2-1-srun-pyxis-import-mkdir-run-enroot-permission-denied-enroot-alone-works-runtime-"
           "path-site-config-host")
AZURECR = "slurm-pyxis-azurecr-image-without-hash-separator-fetched-from-docker-hub-401-unauthorized-job-image-uri"
SWITCHROOT = ("azure-hpc-pg0-two-vm-srun-pyxis-enroot-switchroot-failed-to-execute-bin-bash-no-such-file-both-tasks-"
              "image")
HOST = ("fail", "TRAIN_FAILED", "host")
JOB = ("fail", "TRAIN_FAILED", "job")
IMAGE = ("fail", "TRAIN_FAILED", "image")


def _replay(kind: str, message: str) -> tuple[str, str | None, str | None]:
    """The train judge on one pyxis failure, as a replay of translated facts gives it."""
    failure = {"rank": 0, "node": "node1", "phase": "init", "type": kind, "message": message}
    return verdict(judge(CHECKS["train"], {"failures": [failure]}, Options()))


def _log(*lines: str, summary: str = "failed to import docker image") -> str:
    """A job's output as srun prints pyxis's failure: pyxis's summary, enroot's log lines, the task's end."""
    return "\n".join([
        "slurmstepd: error: pyxis: child 4242 failed with error code: 1",
        f"slurmstepd: error: pyxis: {summary}",
        "slurmstepd: error: pyxis: printing enroot log file:",
        *(f"slurmstepd: error: pyxis:     {line}" for line in lines),
        "slurmstepd: error: pyxis: couldn't start container",
        "slurmstepd: error: spank: required plugin spank_pyxis.so: task_init() failed with rc=-1",
        "srun: error: node1: task 0: Exited with exit code 1",
    ]) + "\n"


def _both(text: str, kind: str, message: str) -> set[tuple[str, str | None, str | None]]:
    """The verdicts of the two roads (a set of one where they agree)."""
    return {verdict(explained(text)), _replay(kind, message)}


def test_pyxis_seccomp_filter_refused_by_the_running_kernel_is_the_node_s():
    assert replayed(SECCOMP) == {"train": HOST}
    assert verdict(explained(raw(SECCOMP))) == HOST
    assert _replay("spank plugin task_init failed", "pyxis: seccomp filter failed: Function not implemented") == HOST
    # no false drain: the same launch failing on the job's image reference is not the node's
    assert _replay("spank plugin task_init failed", "pyxis:     [ERROR] URL https://registry-1.docker.io/v2/library/"
                   "nosuch/manifests/latest returned error code: 404 Not Found") == JOB


def test_enroot_runtime_path_not_creatable_under_the_site_s_enroot_conf_is_the_node_s():
    assert replayed(RUNTIME) == {"train": HOST}
    assert verdict(explained(raw(RUNTIME))) == HOST
    line = "mkdir: cannot create directory '/raid/enroot-data/user-1000': Permission denied"
    assert _both(_log(line), "failed to import docker image", f"pyxis:     {line}") == {HOST}
    # no false drain: a mkdir the job's own script runs (no enroot path) is not enroot's runtime path
    assert _replay("failed to import docker image", "pyxis:     mkdir: cannot create directory '/home/me/out': "
                   "Permission denied") != HOST


def test_fuse_or_enroot_s_fuse_helpers_missing_on_the_node_is_the_node_s():
    for line in ("[ERROR] Command not found: squashfuse", "[ERROR] Command not found: fuse-overlayfs",
                 "fuse: device not found, try 'modprobe fuse' first"):
        assert _both(_log(line, summary="container start failed with error code: 1"), "container start failed",
                     f"pyxis:     {line}") == {HOST}
    # no false drain: another program not found by enroot (a hook's tool) is not this rule: never the host's here
    assert _replay("container start failed", "pyxis:     [ERROR] Command not found: jq") == JOB


@pytest.mark.parametrize("line", [
    "[ERROR] URL https://registry-1.docker.io/v2/evuedsoacr.azurecr.io/dc-ecosys-appl-eng/mlperf-nvidia/manifests/"
    "stable_diffusion-pyt returned error code: 401 Unauthorized",
    "[ERROR] URL https://nvcr.io/v2/nvidia/pytorch/manifests/99.99-py3 returned error code: 404 Not Found",
    "[ERROR] Invalid image reference: docker://nvcr.io/nvidia/pytorch:24.05-py3",
    "manifest unknown: manifest unknown",
])
def test_an_image_reference_the_registry_refuses_or_lacks_is_the_job_s(line):
    # no false drain: the job's --container-image, never the node's
    assert _both(_log(line), "failed to import docker image", f"pyxis:     {line}") == {JOB}


def test_the_real_401_of_an_image_uri_without_its_registry_separator_is_the_job_s_not_the_node_s():
    assert "401 Unauthorized" in raw(AZURECR)
    assert verdict(explained(raw(AZURECR))) == JOB


def test_a_container_mounts_source_that_does_not_exist_is_the_job_s():
    line = "enroot-mount: failed to mount: /scratch/nosuch at /tmp/enroot-data/user-1000/pyxis_4.0/data: No such file or directory"
    summary = "container start failed with error code: 1"
    # no false drain: the job's --container-mounts, never the node's
    assert _both(_log(line, summary=summary), "container start failed", f"pyxis:     {line}") == {JOB}


def test_a_container_name_already_in_use_is_the_job_s():
    line = "[ERROR] File already exists: /tmp/enroot-data/user-1000/pyxis_ubuntu3"
    summary = "failed to create container filesystem"
    # no false drain: the job's --container-name, never the node's
    assert _both(_log(line, summary=summary), "failed to create container filesystem", f"pyxis:     {line}") == {JOB}


def test_the_entrypoint_or_command_not_in_the_image_is_the_image_s():
    assert replayed(SWITCHROOT) == {"train": IMAGE}
    assert verdict(explained(raw(SWITCHROOT))) == IMAGE
    line = "enroot-switchroot: failed to execute: /usr/bin/python3: No such file or directory"
    # no false drain: the image's tree, never the node's
    assert _both(_log(line, summary="container start failed with error code: 1"), "container start failed",
                 f"pyxis:     {line}") == {IMAGE}


def test_an_unknown_pyxis_failure_is_never_the_host_s():
    # the judge cannot tell whose: the job's to read, no drain
    assert _replay("couldn't start container", "pyxis:     [ERROR] /etc/enroot/hooks.d/99-site.sh exited with "
                   "return code 1") == JOB
    assert _replay("spank plugin task_init failed", "pyxis: something new went wrong") == JOB
    # explain does not guess a class it cannot read: not recognised, never a host's fail
    text = _log("[ERROR] /etc/enroot/hooks.d/99-site.sh exited with return code 1")
    assert verdict(explained(text))[2] != "host"


def test_pyxis_words_quoted_in_prose_are_not_read():
    text = "If you see `slurmstepd: error: pyxis: seccomp filter failed: Function not implemented`, upgrade the kernel.\n"
    assert verdict(explained(text))[2] != "host"
