"""Verification on GPU clusters: Kubernetes manifests running `torchrun` (Slurm: fleet/slurm.py).

Kubernetes: one node → a Job running the whole suite; several nodes → an Indexed Job plus a headless
Service. Indexed Jobs are built into Kubernetes (no JobSet or Kubeflow operator to install), give each pod
a stable DNS name (<job>-<index>.<service>) and JOB_COMPLETION_INDEX, which is all torchrun's c10d
rendezvous needs. Rank 0 prints the JSON report between markers, so `kubectl logs` collects it.
"""
from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from typing import Any

from ..errors import UserError
from ..plan.platforms import k8s_arch_selection
from ..plan.spec import ImageSpec
from ..versions import version_key

RDZV_PORT = 29500
REPORT_BEGIN, REPORT_END = "----- BEGIN VERIFY REPORT -----", "----- END VERIFY REPORT -----"


NAME_MAX = 52       # an Indexed Job's pod host name is <job>-<index>-<5 characters>, within 63


def job_name(tag: str, nodes: int, prefix: str = "verify") -> str:
    """`<prefix>-<tag>-<nodes>n` as a DNS label (the Kubernetes Job, the Slurm script): a tag too long for NAME_MAX
    is cut and a hash of the whole tag added, so the node count and the tag's identity both stay in the name."""
    suffix = f"-{nodes}n"
    name = re.sub(r"[^a-z0-9-]", "-", f"{prefix}-{tag}".lower())
    if len(name) + len(suffix) > NAME_MAX:
        digest = hashlib.sha256(tag.encode("utf-8")).hexdigest()[:6]
        name = name[:NAME_MAX - len(suffix) - len(digest) - 1].rstrip("-") + "-" + digest
    return name + suffix


# The single-node checks: every check `verify --list` names, but the collective (run across nodes below).
# Taken from the image itself, so the check list lives only in verify/.
LOCAL_CHECKS = '$(verify --list | cut -d" " -f1 | grep -vx nccl | paste -sd, -)'


def local_checks(gpus: int) -> str:
    """The single-node part of the suite, run once per pod."""
    return f'verify --checks "{LOCAL_CHECKS}" --expect-gpus {gpus} --json /reports/node.json'


def torchrun_nccl(nodes: int, gpus: int, endpoint: str, rdzv_id: str) -> str:
    """The NCCL check across the whole group (c10d assigns the ranks); global rank 0 writes /reports/nccl.json."""
    parts = ["torchrun", f"--nnodes={nodes}", f"--nproc-per-node={gpus}", "--rdzv-backend=c10d",
             f"--rdzv-endpoint={endpoint}", f"--rdzv-id={rdzv_id}"]
    # each rank runs the image's verify command (`python3 -I`, its own package first), never `python -m verify` in
    # the pod's working folder (PYTHONSAFEPATH, which keeps that folder off sys.path, is 3.11+; the jammy image's is 3.10)
    return " ".join(parts) + f" --no-python verify --checks nccl --expect-gpus {gpus} --json /reports/nccl.json"


def _print_reports() -> str:
    return (f'status=$?; for f in /reports/*.json; do [ -f "$f" ] && echo "{REPORT_BEGIN} $f" && cat "$f" '
            f'&& echo "{REPORT_END}"; done; exit $status')


# the k8s-rdma-shared-dev-plugin's example resource: what RDMA_RESOURCE= opts in to (none by default: a pod requesting
# a resource no device plugin advertises pends forever)
RDMA_RESOURCE = "rdma/rdma_shared_device_a"


def _uses_rdma(gpus: int, nodes: int, rdma: str) -> bool:
    return bool(rdma) and gpus > 0 and nodes > 1


def _limits(gpus: int, nodes: int, rdma: str) -> dict[str, Any]:
    """GPUs, and for a multi-node GPU run the RDMA device plugin's resource (the HCAs NCCL crosses nodes over)."""
    limits = {"nvidia.com/gpu": str(gpus)} if gpus else {}
    if _uses_rdma(gpus, nodes, rdma):
        if rdma in limits:
            raise UserError(f"RDMA_RESOURCE={rdma} is a resource the pod requests already (its GPUs): it would "
                            "replace that request; give the RDMA device plugin's resource, or none")
        limits[rdma] = "1"
    return {"resources": {"limits": limits}} if limits else {}


def k8s_quantity(size: int) -> str:
    """Bytes as a Kubernetes quantity, exact: the largest binary suffix (Ki, Mi, Gi, Ti, Pi) that divides it, else the
    plain number of bytes (2g as Docker reads it, 2147483648 → 2Gi)."""
    for suffix, power in (("Pi", 50), ("Ti", 40), ("Gi", 30), ("Mi", 20), ("Ki", 10)):
        if size >= 1 << power and size % (1 << power) == 0:
            return f"{size >> power}{suffix}"
    return str(size)


def one_pod_per_node(name: str) -> dict[str, Any]:
    """A required pod anti-affinity: two pods the scheduler put on one node (GPUS=4 on 8-GPU nodes) all-reduce over
    that node's NVLink and shared memory, and the "multi-node" collective passes with the fabric never crossed (a
    fault hidden). The Job controller labels its pods job-name=<name>; they pend rather than share a node."""
    return {"requiredDuringSchedulingIgnoredDuringExecution": [
        {"labelSelector": {"matchLabels": {"job-name": name}}, "topologyKey": "kubernetes.io/hostname"}]}


def k8s_manifests(spec: ImageSpec, image: str, nodes: int, gpus: int, shm: str = "2Gi",
                  platform: str | None = None, rdma: str = "") -> list[dict[str, Any]]:
    """The Job (Indexed Job + headless Service for nodes > 1) verifying `image`, on nodes of the image's CPU
    architecture (kubernetes.io/arch; `platform` picks one of the image's platforms). `rdma`: the RDMA device
    plugin's resource a multi-node GPU pod requests ("", the default: none); IPC_LOCK lets verbs pin memory. `shm`:
    the /dev/shm emptyDir's sizeLimit (a quantity: SHM_SIZE through k8s_quantity)."""
    name = job_name(spec.tag, nodes)
    if nodes == 1:
        script = f"verify --expect-gpus {gpus} --json /reports/report.json; {_print_reports()}"
    else:
        endpoint = f"{name}-0.{name}:{RDZV_PORT}"
        nccl = torchrun_nccl(nodes, gpus, endpoint, name)
        if gpus == 0:       # CPU nodes: one gloo process per pod
            nccl = nccl.replace("--nproc-per-node=0", "--nproc-per-node=1")
        script = (f"{local_checks(gpus)}; local=$?; {nccl}; "
                  f"[ $? -eq 0 ] && [ $local -eq 0 ]; {_print_reports()}")
    container: dict[str, Any] = {
        "name": "verify",
        "image": image,
        "command": ["/bin/bash", "-c", script],
        # GPUS=0: CPU nodes, nothing to request
        **_limits(gpus, nodes, rdma),
        # the node the pod landed on (the report's environment.scheduler.node: what the fleet report names and a
        # drain cordons), and the job
        # Python 3.11+ puts no working folder first on sys.path (torchrun's ranks inherit it): a verify.py or
        # verify/ in the pod's working folder is never imported in place of the image's
        "env": [{"name": "NCCL_DEBUG", "value": "WARN"}, {"name": "PYTHONSAFEPATH", "value": "1"},
                {"name": "NODE_NAME", "valueFrom": {"fieldRef": {"fieldPath": "spec.nodeName"}}},
                {"name": "JOB_NAME", "value": name},
                {"name": "TORCHIMAGES_LAUNCHER", "value": "kubernetes"}],
        "ports": [{"containerPort": RDZV_PORT, "name": "rdzv"}],
        "securityContext": {"runAsNonRoot": True, "runAsUser": 1000, "allowPrivilegeEscalation": False,
                            **({"capabilities": {"add": ["IPC_LOCK"]}} if _uses_rdma(gpus, nodes, rdma) else {})},
        "volumeMounts": [{"name": "dshm", "mountPath": "/dev/shm"}, {"name": "reports", "mountPath": "/reports"}],
    }
    pod_spec: dict[str, Any] = {
        "restartPolicy": "Never",
        "containers": [container],
        # DataLoader workers and NCCL need far more than the 64 MB /dev/shm a pod gets by default: SHM_SIZE, as make
        # verify gives its container (a memory emptyDir's sizeLimit: the kubelet evicts a pod that writes past it)
        "volumes": [{"name": "dshm", "emptyDir": {"medium": "Memory", "sizeLimit": shm}},
                    {"name": "reports", "emptyDir": {}}],
        **({"tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}]} if gpus else {}),
        **k8s_arch_selection(spec.platforms, platform),     # Grace (arm64) and x86_64 GPU nodes
    }
    labels = {"app.kubernetes.io/name": "torchimages-verify", "io.torchimages/tag": spec.tag[:63]}
    job_spec: dict[str, Any] = {"backoffLimit": 0, "activeDeadlineSeconds": 1800, "ttlSecondsAfterFinished": 86400,
                "template": {"metadata": {"labels": dict(labels)}, "spec": pod_spec}}
    manifests: list[dict[str, Any]] = []
    if nodes > 1:
        job_spec.update(completionMode="Indexed", completions=nodes, parallelism=nodes)
        pod_spec["subdomain"] = name
        pod_spec.setdefault("affinity", {})["podAntiAffinity"] = one_pod_per_node(name)
        manifests.append({"apiVersion": "v1", "kind": "Service", "metadata": {"name": name, "labels": dict(labels)},
                          "spec": {"clusterIP": "None", "selector": {"job-name": name},
                                   "publishNotReadyAddresses": True,
                                   "ports": [{"name": "rdzv", "port": RDZV_PORT, "targetPort": RDZV_PORT}]}})
    manifests.append({"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": name, "labels": labels},
                      "spec": job_spec})
    return manifests


def k8s_wait(name: str, timeout: str = "30m") -> str:
    """A POSIX shell line that returns when the Job ends either way: 0 when it completed, 1 when it failed or the
    wait timed out. `kubectl wait --for=condition=complete` alone sits out its whole timeout on a failed Job, so a
    second wait watches for `failed`; whichever ends first decides and the other is killed (no `wait -n`: macOS's
    bash 3.2 and dash lack it)."""
    job = f"job/{name}"
    return (f"sh -c 'kubectl wait --for=condition=complete --timeout={timeout} {job} & ok=$!; "
            f"kubectl wait --for=condition=failed --timeout={timeout} {job} >/dev/null & bad=$!; "
            f"while kill -0 $ok 2>/dev/null && kill -0 $bad 2>/dev/null; do sleep 1; done; "
            f"if ! kill -0 $ok 2>/dev/null; then kill $bad 2>/dev/null; wait $ok; "
            f"else kill $ok 2>/dev/null; wait $bad && echo {job} failed >&2; exit 1; fi'")


def default_gpus(spec: ImageSpec, given: int | None, others: Sequence[ImageSpec] = ()) -> int:
    """GPUS when given; else what the image can use: 0 for a CPU image (a GPU request would fail GPU_NOT_VISIBLE on
    purpose-built CPU nodes and hold GPUs it never touches), 1 for a CUDA image. GPUs asked of a CPU image are
    refused (UserError, naming a CUDA tag of `others` to use): its torch cannot use them, so the job would hold them
    for nothing and its verdict would blame the nodes (GPU_NOT_VISIBLE) for a setting of ours."""
    if given is None:
        return 1 if spec.cuda else 0
    if given > 0 and not spec.cuda:
        cuda = cuda_alternative(spec, others)
        raise UserError(f"GPUS={given} asks GPUs of {spec.tag}, a CPU image (its torch has no CUDA): give GPUS=0 (or "
                        f"leave GPUS unset) for CPU nodes, or "
                        + (f"a CUDA image for GPU nodes, e.g. IMAGE={cuda.tag}" if cuda else
                           "render a CUDA image (matrix.yaml) for GPU nodes"))
    return given


def cuda_alternative(spec: ImageSpec, others: Sequence[ImageSpec]) -> ImageSpec | None:
    """The CUDA image closest to the CPU image `spec`: the same torch, distro and extras first, then the newest."""
    cuda = [o for o in others if o.cuda]

    def closeness(o: ImageSpec) -> tuple[bool, bool, bool, bool, tuple[int, ...]]:
        return (o.torch == spec.torch, o.distro == spec.distro, o.access == spec.access, o.flavor == "runtime",
                version_key(o.torch))
    return max(cuda, key=closeness, default=None)


# launchers that start no registry image: a venv on the hosts, a runc bundle on a shared folder
NO_PULL_LAUNCHERS = ("none", "oci")


def local_name_refusal(reference: str, registry: str, local_image: bool, launcher: str) -> str:
    """Why a job may not name `reference` (empty: it may): with no REGISTRY and no push record, the reference is the
    engine's local name, which Docker Hub resolves to an image nobody pushed."""
    if registry or local_image or launcher in NO_PULL_LAUNCHERS:
        return ""
    return (f"no registry holds {reference} (it is this engine's local name): give REGISTRY=<host[:port]/prefix> "
            f"(after make push REGISTRY=...), or LOCAL_IMAGE=1 for nodes that hold the image already (or a squashfs "
            f"through TORCHIMAGES_IMAGE=...)")


def unpushed_refusal(tag: str, tagged: str, registry: str, pushed_as: str | None, record: str, unpinned: bool,
                     launcher: str) -> str:
    """Why a job may not run REGISTRY's tag `tagged` unpinned (empty: it may): make push recorded no digest of `tag`
    in that registry (`pushed_as`: where it did push it, if elsewhere), so the nodes would run whatever the tag points
    at, or an image nobody pushed. UNPINNED=1 asks for the tag (pushed another way: CI, bake)."""
    if not registry or unpinned or launcher in NO_PULL_LAUNCHERS:
        return ""
    where = f"{record} has it pushed as {pushed_as}" if pushed_as else f"{record} records no digest of it"
    return (f"{tag} was not pushed to REGISTRY={registry} ({where}): run `make push IMAGE={tag} REGISTRY={registry}` "
            f"first, then this again (the job pins the pushed digest), or UNPINNED=1 to run the tag {tagged} as the "
            f"registry holds it (pushed another way)")


def rdma_hint(nodes: int, gpus: int, rdma: str) -> str | None:
    """What a user must know of the RDMA request of a multi-node GPU job (None: nothing to say)."""
    if nodes < 2 or gpus < 1:
        # a knob given and not applied is said (a pod spec without it reads as the knob ignored by mistake)
        return None if not rdma else (f"note: RDMA_RESOURCE={rdma} is not requested: "
                                      + ("a single-node job crosses no fabric" if nodes < 2 else
                                         "pods without GPUs all-reduce over gloo's TCP sockets, never RDMA"))
    if rdma:
        return (f"note: each pod requests 1 {rdma}: it needs an RDMA device plugin advertising it (the "
                "k8s-rdma-shared-dev-plugin, NVIDIA's network operator), or the pods pend forever; RDMA_RESOURCE=none "
                "turns it off")
    return (f"note: the pods request no RDMA device, so NCCL crosses the nodes over TCP sockets unless the pods see the "
            f"HCAs; where an RDMA shared device plugin runs, RDMA_RESOURCE={RDMA_RESOURCE} (or the resource it "
            "advertises) requests it")
