"""Issue 25, item 5: the launchers give the container the node's RDMA adapters. docker: --device /dev/infiniband
--ulimit memlock=-1 --cap-add IPC_LOCK, decided on each node; oci: the config.json equivalents; pyxis: enroot's
99-mellanox hook, switched on only where the node has rdma_cm; Kubernetes: the RDMA device plugin's resource (a
knob) and IPC_LOCK. What the flags do in a real container: tests/integration/test_fabric.py."""
from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from scripts.errors import UserError
from scripts.fleet.cluster import RDMA_RESOURCE, k8s_manifests
from scripts.fleet.slurm import FABRIC_FLAGS, MEMLOCK_UNLIMITED, PYXIS_FABRIC, Job, bundle_config, rdma_devices, slurm_script
from scripts.settings import Settings
from tests.helpers import run_cli


@pytest.fixture
def gpu(test_specs):
    return next(s for s in test_specs if s.tag == "2.15.0-cuda13.2-cudnn9-runtime-debian12")


def _bash_n(text: str) -> None:
    proc = subprocess.run(["bash", "-n"], input=text, text=True, capture_output=True, check=False)
    assert proc.returncode == 0, proc.stderr


@pytest.mark.host
def test_the_docker_step_passes_the_fabric_only_where_the_node_has_adapters(gpu):
    text = slurm_script(Job(gpu, "ghcr.io/acme/x:t", 2, 8, "docker"))
    _bash_n(text)
    assert FABRIC_FLAGS == "--device /dev/infiniband --ulimit memlock=-1 --cap-add IPC_LOCK"
    assert f"[ -d /dev/infiniband ] && fabric_args=({FABRIC_FLAGS})" in text
    assert '"${gpu_args[@]}" "${fabric_args[@]}"' in text
    # the guard runs inside the per-node step (after srun), not once on the batch host
    assert text.index("TORCHIMAGES_DOCKER_STEP <<") < text.index("fabric_args=()") < text.index("srun --ntasks-per-node=1 "
                                                                                                 "--kill-on-bad-exit=1 --export=ALL bash")


@pytest.mark.host
def test_the_guard_gives_the_flags_on_a_node_with_adapters_and_none_without(tmp_path):
    """The guard line itself, run by bash against a folder that is there and one that is not."""
    guard = "fabric_args=()\n[ -d /dev/infiniband ] && fabric_args=(" + FABRIC_FLAGS + ")\necho \"${fabric_args[*]}\""
    present = tmp_path / "infiniband"
    present.mkdir()
    for folder, expected in ((present, FABRIC_FLAGS.replace("/dev/infiniband", str(present))),
                             (tmp_path / "absent", "")):
        script = guard.replace("/dev/infiniband", str(folder))
        out = subprocess.run(["bash", "-c", script], capture_output=True, text=True, check=True).stdout.strip()
        assert out == expected


@pytest.mark.host
def test_the_pyxis_script_switches_enroots_mellanox_hook_on_only_with_rdma_cm(gpu):
    text = slurm_script(Job(gpu, "ghcr.io/acme/x:t", 2, 8, "pyxis"))
    _bash_n(text)
    assert PYXIS_FABRIC in text.splitlines()
    assert PYXIS_FABRIC.startswith("[ -e /dev/infiniband/rdma_cm ] && export MELLANOX_VISIBLE_DEVICES=")
    assert '"${MELLANOX_VISIBLE_DEVICES:-all}"' in PYXIS_FABRIC          # a site's own choice is kept
    assert text.index(PYXIS_FABRIC) < text.index("--container-image=")   # exported before the step (--export=ALL)
    assert "99-mellanox hook" in text and "PropagateResourceLimitsExcept=MEMLOCK" in text


@pytest.mark.unit
@pytest.mark.skipif(os.geteuid() != 0, reason="mknod of character devices needs root")
def test_the_oci_bundle_carries_the_hosts_rdma_devices_memlock_and_ipc_lock(tmp_path):
    ib = tmp_path / "infiniband"
    ib.mkdir()
    os.mknod(ib / "uverbs0", stat.S_IFCHR | 0o666, os.makedev(231, 192))
    os.mknod(ib / "rdma_cm", stat.S_IFCHR | 0o666, os.makedev(10, 58))
    (ib / "not-a-device").write_text("x")
    devices = rdma_devices(ib)
    assert [(Path(d["path"]).name, d["major"], d["minor"], d["type"]) for d in devices] == [
        ("rdma_cm", 10, 58, "c"), ("uverbs0", 231, 192, "c")]
    assert rdma_devices(tmp_path / "absent") == []
    runc_spec: dict[str, Any] = {"process": {"rlimits": [{"type": "RLIMIT_NOFILE", "hard": 1024, "soft": 1024}],
                             "capabilities": {"bounding": ["CAP_KILL"], "effective": ["CAP_KILL"],
                                              "permitted": ["CAP_KILL"]}},
                 "root": {"path": "rootfs"}, "linux": {"namespaces": [], "resources": {"devices": [
                     {"allow": False, "access": "rwm"}]}}, "mounts": []}
    config = bundle_config({"Env": []}, runc_spec, [], devices)
    process, linux = config["process"], config["linux"]
    assert {"type": "RLIMIT_MEMLOCK", "hard": MEMLOCK_UNLIMITED, "soft": MEMLOCK_UNLIMITED} in process["rlimits"]
    assert {"type": "RLIMIT_NOFILE", "hard": 1024, "soft": 1024} in process["rlimits"]
    assert all("CAP_IPC_LOCK" in process["capabilities"][k] for k in ("bounding", "effective", "permitted"))
    assert [d["path"] for d in linux["devices"]] == [str(ib / "rdma_cm"), str(ib / "uverbs0")]
    # runc's deny-all rule first, then one allow per device
    assert linux["resources"]["devices"][0] == {"allow": False, "access": "rwm"}
    assert {"allow": True, "type": "c", "major": 231, "minor": 192, "access": "rwm"} in linux["resources"]["devices"]
    # a bundle made where there is no adapter is runc's own spec: no device, limit or capability added
    bare = bundle_config({"Env": []}, runc_spec, [])
    assert "devices" not in bare["linux"] and bare["process"]["rlimits"] == runc_spec["process"]["rlimits"]
    assert bare["process"]["capabilities"] == runc_spec["process"]["capabilities"]


def _container(docs):
    job = next(d for d in docs if d["kind"] == "Job")
    return job["spec"]["template"]["spec"]["containers"][0]


@pytest.mark.unit
def test_k8s_pods_of_a_multi_node_gpu_job_request_the_rdma_resource_and_ipc_lock(gpu):
    # opt-in (issue 36): by default no RDMA device is requested, a cluster without the plugin would leave pods pending
    assert "capabilities" not in _container(k8s_manifests(gpu, "r/x:t", 2, 8))["securityContext"]
    two = _container(k8s_manifests(gpu, "r/x:t", 2, 8, rdma=RDMA_RESOURCE))
    assert two["resources"]["limits"] == {"nvidia.com/gpu": "8", RDMA_RESOURCE: "1"}
    assert two["securityContext"]["capabilities"] == {"add": ["IPC_LOCK"]}
    assert two["securityContext"]["runAsNonRoot"] is True and two["securityContext"]["allowPrivilegeEscalation"] is False
    for nodes, gpus, rdma in ((1, 8, RDMA_RESOURCE), (2, 0, RDMA_RESOURCE), (2, 8, "")):
        other = _container(k8s_manifests(gpu, "r/x:t", nodes, gpus, rdma=rdma))
        assert RDMA_RESOURCE not in other.get("resources", {}).get("limits", {})
        assert "capabilities" not in other["securityContext"]


@pytest.mark.unit
def test_rdma_resource_is_a_checked_knob():
    def load(value: str) -> str:
        return Settings.load({"RDMA_RESOURCE": value}, {}, ("RDMA_RESOURCE",)).rdma_resource
    assert load("") == "" == Settings().rdma_resource          # opt-in (issue 36): none unless asked for
    assert load("none") == "" and load("nvidia.com/hostdev") == "nvidia.com/hostdev"
    assert load(RDMA_RESOURCE) == RDMA_RESOURCE
    with pytest.raises(UserError, match=r"RDMA_RESOURCE='rdma /x' is not a Kubernetes resource name"):
        load("rdma /x")


@pytest.mark.host
def test_make_k8s_verify_with_a_site_rdma_resource_passes_kubernetes_validate_strict(tmp_path, rendered):
    proc = run_cli("k8s-verify", env={"LOCAL_IMAGE": "1", "IMAGES_DIR": str(rendered), "BUILD_DIR": str(tmp_path / "b"), "NODES": "2",
                                      "GPUS": "8", "IMAGE": "2.15.0-cuda13.2-cudnn9-runtime-debian12",
                                      "RDMA_RESOURCE": "nvidia.com/hostdev"})
    assert proc.returncode == 0, proc.stderr
    paths = sorted((tmp_path / "b" / "k8s").glob("*.yaml"))
    assert len(paths) == 1
    assert _container(list(yaml.safe_load_all(paths[0].read_text())))["resources"]["limits"]["nvidia.com/hostdev"] == "1"
    validate = Path(sys.executable).parent / "kubernetes-validate"
    checked = subprocess.run([str(validate), "--strict", str(paths[0])], capture_output=True, text=True, timeout=600,
                             check=False)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    bad = run_cli("k8s-verify", env={"LOCAL_IMAGE": "1", "IMAGES_DIR": str(rendered), "BUILD_DIR": str(tmp_path / "c"),
                                     "RDMA_RESOURCE": "no such/thing"})
    assert bad.returncode != 0 and "is not a Kubernetes resource name" in bad.stderr and "Traceback" not in bad.stderr
