"""Verification under Slurm: one sbatch script per image, one launcher per kind of cluster.

Every launcher runs the same per-node script (`node_script`) on each node of the allocation, as one task per node:
  pyxis   srun --container-image=registry#image (enroot + pyxis; the default for GPU clusters)
  docker  srun docker run --rm --network host --ipc host ... (a Docker Engine on every node)
  oci     srun --container=<bundle> (Slurm's native OCI containers: oci.conf and runc on every node; the bundle is
          made from the image by `make oci-bundle`)
  none    srun python -m verify from a virtual environment on the hosts (this checkout's .venv, or TORCHIMAGES_PYTHON)
The per-node script first joins the collective across the nodes (torchrun, c10d rendezvous on a port derived from
the job id, a join timeout), then runs the single-node checks; the node's exit status keeps both results. Reports are
named by the node's host name. A first step runs the architecture guard on every node, outside any container.
"""
from __future__ import annotations

import json
import os
import re
import shlex
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import UserError
from ..plan.platforms import slurm_arch_guard
from ..plan.spec import ImageSpec
from .cluster import job_name as job_name  # the one name of both writers
from .job_knobs import JOIN, job_lines
from .launch_guards import docker_path_guard, verify_args_problem
from .stepscratch import SCRATCH_LINES

DEFAULT_LAUNCHER = "pyxis"
JOIN_TIMEOUT_S = 300        # the rendezvous waits this long for every node (TORCHIMAGES_JOIN_TIMEOUT overrides)
# TORCHIMAGES_JOIN_TIMEOUT is read at submission: a whole number of seconds in ASCII digits, 1 to 999999, or the job
# stops before any step (bash's test refuses '٣٠٠' or '5m' while torchrun's int() reads '٣٠٠', and 0 times out at once)
JOIN_GUARD = ('case "$RDZV_JOIN_TIMEOUT" in ""|0*|*[!0123456789]*|???????*) echo "torchimages: REFUSED: '
              'TORCHIMAGES_JOIN_TIMEOUT=$RDZV_JOIN_TIMEOUT is not a whole number of seconds (ASCII digits, 1 to '
              f'999999): unset it for {JOIN_TIMEOUT_S} s, or give e.g. 600" >&2; exit 2;; esac')
PORT_BASE, PORT_SPAN = 20000, 20000     # rendezvous port: PORT_BASE + job id % PORT_SPAN (two jobs on a node differ)
NODE_END = "TORCHIMAGES_NODE_SCRIPT_END"
# the marker `make oci-bundle` writes into the bundle's rootfs: the image's environment, sourced by the node script;
# a step that cannot see it runs on the host (Slurm without oci.conf ignores --container)
OCI_MARKER = "/etc/torchimages/bundle.env"
# environment a docker container gets from the step (the launcher's facts, the collective's settings, test hooks)
DOCKER_ENV_PREFIXES = ("SLURM", "TORCHIMAGES_", "RDZV_", "NCCL_", "GLOO_", "TORCH_", "VERIFY_")

NEEDS = {
    "pyxis": "enroot and the pyxis SPANK plugin on every node (srun --container-image); the image in a registry the "
             "nodes reach (enroot 3.x reads registry#image; a digest reference needs enroot 4 or newer)",
    "pyxis-sqsh": "enroot and the pyxis SPANK plugin on every node (srun --container-image=/path.sqsh); the squashfs "
                  "of `make sqsh` at the same path on every node (a shared filesystem); no registry",
    "docker": "a Docker Engine on every node that the submitting user may use (the docker group), the image present "
              "there or pullable; for GPUs, the NVIDIA Container Toolkit",
    "oci": "Slurm's native OCI containers: oci.conf beside slurm.conf on every node (runc; see docs/scaling-out.md) and the bundle "
           "made by `make oci-bundle` on a folder every node mounts at the same path",
    "none": "the virtual environment below, with torch, at the same path on every node (a shared folder)",
}


def pyxis_image(ref: str) -> str:
    """A Docker reference as enroot/pyxis read it: `registry#repository[:tag][@digest]`; Docker Hub names as they are.

    ghcr.io/acme/x:t → ghcr.io#acme/x:t; 127.0.0.1:5000/x:t → 127.0.0.1:5000#x:t; acme/x:t → acme/x:t;
    docker.io/acme/x:t → acme/x:t (enroot's default registry is Docker Hub)."""
    first, sep, rest = ref.partition("/")
    if not sep or not ("." in first or ":" in first or first == "localhost"):
        return ref
    if first in ("docker.io", "index.docker.io", "registry-1.docker.io"):
        return rest
    return f"{first}#{rest}"


@dataclass(frozen=True)
class Job:
    """What one sbatch script verifies, where and how."""

    spec: ImageSpec
    image: str                  # the reference the nodes pull (REGISTRY/image) or the local image name
    nodes: int
    gpus: int
    launcher: str = DEFAULT_LAUNCHER
    platform: str | None = None
    preflight: bool = False
    verify_args: tuple[str, ...] = ()
    python: str = ".venv/bin/python"        # none: the interpreter of the venv on the hosts
    checkout: str = "."                      # none: the folder holding verify/ (PYTHONPATH)
    bundle: str = ""                         # oci: the bundle folder (rootfs + config.json)
    sqsh: str = ""                           # pyxis: the squashfs the nodes mount (make sqsh), not the registry's
    sqsh_sha256: str = ""                    # its sha256 as make sqsh recorded it; checked before the step
    clock_skew: float | None = None          # isolate: the job's TORCHIMAGES_CLOCK_SKEW default (make's CLOCK_SKEW)
    join_timeout: int | None = None          # the job's TORCHIMAGES_JOIN_TIMEOUT default, as make was given it
    isolate_timeout: float | None = None     # isolate: the job's TORCHIMAGES_ISOLATE_TIMEOUT default (job_knobs)

    @property
    def name(self) -> str:
        return job_name(self.spec.tag, self.nodes) + ("-preflight" if self.preflight else "")

    @property
    def procs(self) -> int:
        """Processes per node in the collective: one per GPU, one (gloo) on CPU nodes."""
        return max(self.gpus, 1)


# A module run with no working folder on sys.path on any Python: `-m` puts that folder first and PYTHONSAFEPATH, which
# stops it, is 3.11+ (the jammy image's Python and a venv's on the hosts may be 3.10), so a verify/ or verify.py in
# the job's folder ran in place of ours. `-c` puts '' first: it is dropped before any import not already loaded.
SAFE_RUN = ('import sys; sys.path[:] = [p for p in sys.path if p not in ("", ".")]; import runpy; '
            'runpy.run_module(sys.argv.pop(1), run_name="__main__", alter_sys=True)')


def _verify(job: Job) -> str:
    """verify as a command: the image's (`python3 -I`, its own package first), or the venv's through SAFE_RUN."""
    return f'"$TORCHIMAGES_PYTHON" -c {shlex.quote(SAFE_RUN)} verify' if job.launcher == "none" else "verify"


def _torchrun(job: Job) -> str:
    return (f'"$TORCHIMAGES_PYTHON" -c {shlex.quote(SAFE_RUN)} torch.distributed.run' if job.launcher == "none"
            else "torchrun")


def ranks_run(job: Job) -> str:
    """What torchrun starts on each rank: that same verify command (--no-python), never `-m verify`, which runs
    `python -m verify` in the step's working folder."""
    return f"--no-python {_verify(job)}"


def _node_prelude(job: Job) -> list[str]:
    """The node script's start: refuse to run outside the image (oci), name the node, pass signals to the check."""
    return [
        "set -uo pipefail",
        *([f'. {OCI_MARKER} 2>/dev/null || {{ echo "torchimages: REFUSED: this step runs on the host, not in the image: '
           f'Slurm ignores --container without oci.conf; install oci.conf on every node (docs/scaling-out.md: Slurm, oci)" >&2; '
           f'exit 2; }}'] if job.launcher == "oci" else []),
        # the report's name. Slurm's native containers get the environment srun was given (SLURMD_NODENAME: the
        # batch host's, for every node) and none of the task's own (SLURM_NODEID...): there the host name is the node's
        *(['node=$(hostname -s)', 'export SLURMD_NODENAME=$node'] if job.launcher == "oci"
          else ['node=${SLURMD_NODENAME:-$(hostname -s)}']),
        'export TORCHIMAGES_NODE=$node',
        # Python 3.11+ puts no working folder first on sys.path (what verify starts inherits it; before 3.11 its
        # commands drop it themselves: SAFE_RUN, the image's `python3 -I`)
        'export PYTHONSAFEPATH=1',
        # and none of the job's Python settings: srun --export=ALL hands every node the submitting shell's, and a
        # `module load` of another torch on PYTHONPATH was imported by every check (CHECK_CRASHED owned by the image,
        # SHM_TOO_SMALL on a 23 GiB /dev/shm); the prolog's verify runs the same way (verify/prolog/verifyrun.py).
        # The images' own PYTHONUNBUFFERED stays (output as it comes); their PYTHONPATH is bin/verify's own root
        'for var in $(compgen -e); do case $var in PYTHON*) [ "$var" = PYTHONSAFEPATH ] || unset "$var" ;; esac; done',
        'export PYTHONNOUSERSITE=1 PYTHONUNBUFFERED=1',
        *([f"export PYTHONPATH={shlex.quote(job.checkout)}"] if job.launcher == "none" else []),
        'out=$TORCHIMAGES_REPORTS_IN',
        # the step's temp files go in a folder of its own, removed when the step ends, and the ones steps killed by
        # SIGKILL left are removed at the next start (stepscratch.py; without one, the step still runs)
        *SCRATCH_LINES,
        'child=""',
        'forward() { [ -n "$child" ] && kill -s "$1" "$child" 2>/dev/null; }',
        "trap 'forward TERM' TERM; trap 'forward INT' INT",
        # run in the background and wait, so a trapped signal is passed on at once and the check still gets to
        # write its report; then its real exit status
        'run() { "$@" & child=$!; wait "$child"; local s=$?; '
        'while kill -0 "$child" 2>/dev/null; do wait "$child"; s=$?; done; child=""; return $s; }',
    ]


def _node_checks(job: Job, verify: str, extra: str) -> list[str]:
    """The collective across the nodes, then the local checks; the exit status of the two together."""
    torchrun = (f'{_torchrun(job)} --nnodes={job.nodes} --nproc-per-node={job.procs} --rdzv-backend=c10d '
                f'--rdzv-endpoint="$RDZV_ENDPOINT" --rdzv-id="$SLURM_JOB_ID" --rdzv-conf="$rdzv_conf" '
                # each node by its own name: c10d tells nodes apart by (address, pid), and containers on host
                # networking share the engine host's name while their PIDs often coincide (one node seen twice)
                f'--local-addr="$node" '
                # train across the nodes too: its replicas must agree on every rank of every node
                f'{ranks_run(job)} --checks nccl,train --expect-gpus {job.gpus} --json "$out/nccl.json"')
    return [
        # the first node hosts the rendezvous store: said outright, as torchrun's own guess compares the endpoint
        # with the host name, which a container may not share (docker --network host names it after the engine's host)
        'rdzv_conf="join_timeout=$RDZV_JOIN_TIMEOUT"',
        '[ "${RDZV_ENDPOINT%:*}" = "$node" ] && rdzv_conf="$rdzv_conf,is_host=1"',
        # the collective first: every node reaches it at the step's start, so the join timeout only has to cover
        # container starts, not the local checks' run times
        "started=$(date +%s)",
        f"run {torchrun}",
        "nccl=$?",
        'if [ $nccl -ne 0 ] && [ ! -f "$out/nccl.json" ] && [ $(( $(date +%s) - started )) -ge "$RDZV_JOIN_TIMEOUT" ]; then',
        '  echo "torchimages: RDZV_TIMEOUT on $node (owner job): not every node joined the rendezvous at '
        '$RDZV_ENDPOINT within ${RDZV_JOIN_TIMEOUT}s; see the other nodes\' output" >&2',
        "fi",
        f'checks=$({verify} --list | cut -d" " -f1 | grep -vx nccl | paste -sd, -)',
        f'run {verify} --checks "$checks" --expect-gpus {job.gpus} --json "$out/node-$node.json" '
        f'--junit "$out/node-$node.xml"{extra}',
        "local_checks=$?",
        'echo "torchimages: node $node local checks exit $local_checks, collective exit $nccl"',
        "[ $local_checks -ne 0 ] && exit $local_checks",
        "exit $nccl",
    ]


def node_script(job: Job) -> str:
    """What runs on each node, inside the image (or the venv): the collective, then the local checks; exit status
    0 only when both passed, else the local checks' status (128+N when a signal cut them off), else the collective's.
    SIGTERM/SIGINT (scancel, a cancelled step) are passed to the running check, which writes its partial report."""
    verify, extra = _verify(job), shlex.join(job.verify_args)
    extra = f" {extra}" if extra else ""
    if job.preflight:
        return "\n".join([
            *_node_prelude(job),
            f'run {verify} --preflight --expect-gpus {job.gpus} --json "$out/preflight-$node.json"{extra}',
            "status=$?",
            'echo "torchimages: node $node preflight exit $status"',
            "exit $status",
        ])
    return "\n".join(_node_prelude(job) + _node_checks(job, verify, extra))


# docker: the node's RDMA adapters (InfiniBand, RoCE, EFA) reach the container only when passed: their devices, an
# unlimited locked-memory limit (verbs pins its buffers) and the right to lock. A node without adapters runs without.
FABRIC_FLAGS = "--device /dev/infiniband --ulimit memlock=-1 --cap-add IPC_LOCK"
FABRIC_GUARD = f"fabric_args=()\n[ -d /dev/infiniband ] && fabric_args=({FABRIC_FLAGS})"
# pyxis: enroot's 99-mellanox.sh hook (installed by default) mounts /dev/infiniband/rdma_cm, each visible mlx4/mlx5
# uverbs device and their /sys entries when MELLANOX_VISIBLE_DEVICES is set, and fails the start when the node has no
# rdma_cm: set only where it exists (on the batch node; the nodes of one job are alike). It skips other drivers (EFA).
PYXIS_FABRIC = ('[ -e /dev/infiniband/rdma_cm ] && export MELLANOX_VISIBLE_DEVICES="${MELLANOX_VISIBLE_DEVICES:-all}"')


def _docker_step(job: Job) -> str:
    """The host side of one node's docker task: the container, named per job, step and node; killed with the step."""
    gpus = ""
    if job.gpus:
        # the GPUs Slurm gave this step, by their host index (CUDA_VISIBLE_DEVICES may be cgroup-relative)
        # Slurm may print them as ranges (0-3,5): docker's device= takes a list, so the ranges are spelt out (a
        # GPU-<uuid> is no range)
        gpus = ('gpu_ids=${SLURM_STEP_GPUS:-${SLURM_JOB_GPUS:-${CUDA_VISIBLE_DEVICES:-}}}\n'
                'gpu_list=()\n'
                'IFS=, read -ra gpu_parts <<<"$gpu_ids"\n'
                'for part in "${gpu_parts[@]}"; do\n'
                '    if [[ $part =~ ^([0-9]+)-([0-9]+)$ ]]; then\n'
                '        for ((i = BASH_REMATCH[1]; i <= BASH_REMATCH[2]; i++)); do gpu_list+=("$i"); done\n'
                '    else gpu_list+=("$part"); fi\n'
                'done\n'
                'gpu_ids=$(IFS=,; echo "${gpu_list[*]}")\n'
                'gpu_args=(--gpus "\\"device=$gpu_ids\\"")\n')
    prefixes = "|".join(DOCKER_ENV_PREFIXES)
    return f"""set -uo pipefail
name="torchimages-$SLURM_JOB_ID-${{SLURM_STEP_ID:-0}}-${{SLURMD_NODENAME:-$(hostname -s)}}"
export TORCHIMAGES_NODE=${{SLURMD_NODENAME:-$(hostname -s)}}
env_args=()
for var in $(compgen -e | grep -E '^({prefixes})'); do env_args+=(--env "$var"); done
gpu_args=()
{gpus}{FABRIC_GUARD}
# scancel (or a failed node, with --kill-on-bad-exit) ends this task: stop the container with it, giving the check
# inside 10 s to write its report; `docker run` alone would leave it running under dockerd
trap 'docker stop --time 10 "$name" >/dev/null 2>&1' TERM INT HUP
# An image from a registry is pulled first, timed apart: the pull joins the time-to-first-step phases (TORCHIMAGES_PULL_S)
# and the container's start is counted from its end
registry=${{TORCHIMAGES_IMAGE%%/*}}
if [ "$registry" != "$TORCHIMAGES_IMAGE" ] && [[ $registry == *[.:]* || $registry == localhost ]]; then
    pull_t0=$(date +%s.%N)
    docker pull --quiet "$TORCHIMAGES_IMAGE" >/dev/null || {{ echo "torchimages: docker pull $TORCHIMAGES_IMAGE failed on $TORCHIMAGES_NODE" >&2; exit 1; }}
    TORCHIMAGES_PULL_S=$(awk -v t0="$pull_t0" -v t1="$(date +%s.%N)" 'BEGIN {{ printf "%.3f", t1 - t0 }}')
    export TORCHIMAGES_PULL_S TORCHIMAGES_T0=$(date +%s.%N)
    env_args+=(--env TORCHIMAGES_PULL_S)
fi
docker run --rm --init --name "$name" --network host --ipc host --user "$(id -u):$(id -g)" \\
    --env HOME=/tmp --env TORCHIMAGES_REPORTS_IN=/reports --workdir /tmp \\
    --volume "$TORCHIMAGES_REPORTS:/reports" "${{env_args[@]}}" "${{gpu_args[@]}}" "${{fabric_args[@]}}" \\
    "$TORCHIMAGES_IMAGE" bash -c "$TORCHIMAGES_NODE_SCRIPT" &
pid=$!
wait $pid; status=$?
while kill -0 $pid 2>/dev/null; do wait $pid; status=$?; done
exit $status"""


def _image_ref(job: Job) -> str:
    """What the step's launcher is given: the squashfs path, the pyxis reference, or the image as it is."""
    if job.sqsh:
        return job.sqsh
    return pyxis_image(job.image) if job.launcher == "pyxis" else job.image


def pyxis_path_guard() -> list[str]:
    """pyxis splits --container-mounts=SRC:DST[:FLAGS][,...] on ':' and ',' (and a squashfs path given to
    --container-image with them is no file it finds): a reports folder or a squashfs path holding one is refused in
    one line naming the character, before any node mounts anything. make slurm refuses such a SQSH= already; these
    are the paths only the submission knows ($PWD, TORCHIMAGES_REPORTS=, TORCHIMAGES_IMAGE=/x.sqsh)."""
    def refuse(what: str, fix: str) -> str:
        return (f'echo "torchimages: REFUSED: {what} holds \'$bad\', which pyxis splits --container-mounts and '
                f'--container-image on: {fix}" >&2; exit 2')
    return [
        "# pyxis' argument syntax: ',' separates mounts and ':' a mount's source, target and flags",
        "for bad in ',' ':'; do",
        '    case "$TORCHIMAGES_REPORTS" in *"$bad"*) '
        + refuse("the reports folder $TORCHIMAGES_REPORTS", "submit from a folder without it, or give "
                 "TORCHIMAGES_REPORTS=<a folder without it>") + ';; esac',
        '    case "$TORCHIMAGES_IMAGE" in /*"$bad"*|./*"$bad"*) '
        + refuse("the squashfs path $TORCHIMAGES_IMAGE", "rename or move the file (and its .json sidecar) to a "
                 "path without it") + ';; esac',
        'done',
    ]


def sqsh_check(job: Job) -> list[str]:
    """Before any node mounts it: the squashfs is there and is the file make sqsh recorded (and make attest signed)
    by its sha256; one line and exit 2 otherwise. Hashed once, on the batch node: the nodes read the same shared
    file."""
    want, tag = shlex.quote(job.sqsh_sha256), job.spec.tag
    return [
        "# The squashfs make sqsh wrote: pyxis mounts it as it is (no import on the nodes), once its sha256 is the one",
        "# recorded beside the image's digest (the .sqsh.json sidecar, make push's record, the signed attestation)",
        f"export TORCHIMAGES_SQSH_SHA256={want}",
        f'[ -f "$TORCHIMAGES_IMAGE" ] && [ -r "$TORCHIMAGES_IMAGE" ] || {{ echo "torchimages: REFUSED: no readable '
        f'squashfs at $TORCHIMAGES_IMAGE on $(hostname -s): copy make sqsh\'s {tag}.sqsh there" >&2; exit 2; }}',
        'sqsh_sum=$(sha256sum < "$TORCHIMAGES_IMAGE" | cut -d" " -f1)',
        f'[ "$sqsh_sum" = "$TORCHIMAGES_SQSH_SHA256" ] || {{ echo "torchimages: REFUSED: $TORCHIMAGES_IMAGE has '
        f'sha256 $sqsh_sum, not $TORCHIMAGES_SQSH_SHA256 as make sqsh recorded for {tag}: copy the file again, or '
        f'make sqsh and make slurm SQSH=... for the new one" >&2; exit 2; }}',
        'echo "torchimages: squashfs $TORCHIMAGES_IMAGE, sha256 $sqsh_sum as recorded"',
    ]


def _script_head(job: Job) -> str:
    """The sbatch header: what the script is, what the cluster needs, the #SBATCH lines and the image."""
    spec, launcher = job.spec, job.launcher
    knobs = f"IMAGE={spec.tag} NODES={job.nodes} GPUS={job.gpus} LAUNCHER={launcher}" + (" PREFLIGHT=1" if job.preflight else "")
    gres = f"#SBATCH --gres=gpu:{job.gpus}\n" if job.gpus else ""
    what = "the preflight (verify --preflight)" if job.preflight else "verify (the collective across the nodes, then the local checks)"
    head = f"""#!/bin/bash
# GENERATED by `make slurm {knobs}`: {what} of {job.image}
# on {job.nodes} node(s) x {job.gpus} GPU(s), one task per node, launcher {launcher}. Submit: sbatch {job.name}.sbatch
# This cluster needs: {NEEDS["pyxis-sqsh" if job.sqsh else launcher]}.
# {'GPUs: requested as generic resources (--gres=gpu:N): the nodes need GresTypes=gpu and a gres.conf.' if job.gpus else
   'GPUS=0: no GPU is requested (CPU nodes; the collective runs over gloo).'}
# Reports: one per node, named by its host name, in $TORCHIMAGES_REPORTS (default ./reports-<job id>); the collective's
# from global rank 0 (nccl.json). Rendezvous join timeout: {job.join_timeout or JOIN_TIMEOUT_S} s (TORCHIMAGES_JOIN_TIMEOUT=<s> sbatch changes it).
#SBATCH --job-name={job.name}
#SBATCH --nodes={job.nodes}
#SBATCH --ntasks-per-node=1
{gres}#SBATCH --time=00:30:00
#SBATCH --output={job.name}-%j.out
set -uo pipefail
export TORCHIMAGES_LAUNCHER={launcher}
export TORCHIMAGES_IMAGE=${{TORCHIMAGES_IMAGE:-{shlex.quote(_image_ref(job))}}}
"""
    if note := docker_hub_note(job):
        head += f"# {note}\n"
    return head


def docker_hub_note(job: Job) -> str | None:
    """What the default launcher needs where no REGISTRY was given (said in the script and by make slurm itself):
    pyxis looks a bare name up on Docker Hub, where no torchimages image is, and every node's step fails."""
    if job.launcher != "pyxis" or job.sqsh or "#" in pyxis_image(job.image) or "/" in job.image:
        return None
    return (f"No REGISTRY was given: pyxis looks {job.image} up on Docker Hub. Push it (make push REGISTRY=...)"
            f" and render again, or import it to a shared folder (enroot import -o x.sqsh dockerd://{job.image})"
            f" and submit with TORCHIMAGES_IMAGE=/that/x.sqsh sbatch ...")


def _launcher_env(job: Job) -> list[str]:
    """Where the reports go on the host, and what the launcher needs there (the bundle; the venv and checkout)."""
    if job.launcher == "oci":
        bundle = shlex.quote(job.bundle)
        return [f"export TORCHIMAGES_BUNDLE=${{TORCHIMAGES_BUNDLE:-{bundle}}}",
                # the bundle's config.json mounts this folder at the same path: reports go below it
                "export TORCHIMAGES_REPORTS=${TORCHIMAGES_REPORTS:-$TORCHIMAGES_BUNDLE/reports/reports-$SLURM_JOB_ID}",
                f'[ -f "$TORCHIMAGES_BUNDLE/rootfs{OCI_MARKER}" ] || {{ echo "torchimages: no bundle at '
                f'$TORCHIMAGES_BUNDLE: make oci-bundle IMAGE={job.spec.tag}" >&2; exit 2; }}']
    env = ['export TORCHIMAGES_REPORTS=${TORCHIMAGES_REPORTS:-$PWD/reports-$SLURM_JOB_ID}']
    if job.launcher == "pyxis":
        env += pyxis_path_guard()
    if job.launcher == "docker":
        env += docker_path_guard()
    if job.launcher == "pyxis" and job.sqsh:
        env += sqsh_check(job)
    if job.launcher == "none":
        env += [f"export TORCHIMAGES_PYTHON=${{TORCHIMAGES_PYTHON:-{shlex.quote(job.python)}}}",
                f"export PYTHONPATH={shlex.quote(job.checkout)}${{PYTHONPATH:+:$PYTHONPATH}}"]
    return env


def join_lines(job: Job) -> list[str]:
    """RDZV_JOIN_TIMEOUT: sbatch's TORCHIMAGES_JOIN_TIMEOUT, else the one make was given, else the default; guarded."""
    default = str(job.join_timeout or JOIN_TIMEOUT_S)
    return [*job_lines(JOIN, "RDZV_JOIN_TIMEOUT", default),
            JOIN_GUARD.replace(f"unset it for {JOIN_TIMEOUT_S} s", f"unset it for {default} s")]


def _rendezvous_and_guard(job: Job, node: str) -> list[str]:
    """The rendezvous endpoint, the architecture guard on every node, and the node script as a variable."""
    inside = {"pyxis": "/reports", "docker": "/reports"}.get(job.launcher, "$TORCHIMAGES_REPORTS")
    return [
        f'export TORCHIMAGES_REPORTS_IN="{inside}"',
        'mkdir -p "$TORCHIMAGES_REPORTS"',
        f"export RDZV_PORT=$(( {PORT_BASE} + SLURM_JOB_ID % {PORT_SPAN} ))",
        # assigned, then exported: `export X=$(...)` would hide the command's failure (shellcheck SC2155)
        'RDZV_ENDPOINT="$(scontrol show hostnames "$SLURM_JOB_NODELIST" | head -n 1):$RDZV_PORT"; export RDZV_ENDPOINT',
        *join_lines(job),
        'echo "torchimages: job $SLURM_JOB_ID on $SLURM_JOB_NODELIST, launcher $TORCHIMAGES_LAUNCHER, rendezvous at '
        '$RDZV_ENDPOINT (join timeout ${RDZV_JOIN_TIMEOUT}s), reports in $TORCHIMAGES_REPORTS"',
        "",
        "# The architecture guard, on every node (outside any container: the node's own machine)",
        f"srun --ntasks-per-node=1 --kill-on-bad-exit=1 bash -c {shlex.quote(slurm_arch_guard(job.spec.platforms, job.platform))}"
        " || exit 1",
        "",
        "# What runs on each node, in the image",
        f"read -r -d '' TORCHIMAGES_NODE_SCRIPT <<'{NODE_END}'",
        node,
        NODE_END,
        "export TORCHIMAGES_NODE_SCRIPT",
        "",
        "# the start of the step, for the time-to-first-step phases (verify reads it)",
        "TORCHIMAGES_T0=$(date +%s.%N); export TORCHIMAGES_T0",
    ]


def _step(job: Job) -> list[str]:
    """The verify step: srun through the launcher, then the job's exit status."""
    srun = "srun --ntasks-per-node=1 --kill-on-bad-exit=1 --export=ALL"
    if job.launcher == "pyxis":
        step = ["# pyxis mounts a tmpfs /dev/shm sized by the node's configuration; the shm check says if it is too small.",
                "# RDMA: enroot's 99-mellanox hook passes the Mellanox adapters when MELLANOX_VISIBLE_DEVICES is set; the",
                "# memlock limit is the step's own (slurm.conf PropagateResourceLimitsExcept=MEMLOCK keeps slurmd's).",
                PYXIS_FABRIC,
                f'{srun} --container-image="$TORCHIMAGES_IMAGE" \\',
                '     --container-mounts="$TORCHIMAGES_REPORTS:/reports" --container-workdir=/tmp \\',
                '     bash -c "$TORCHIMAGES_NODE_SCRIPT"']
    elif job.launcher == "docker":
        step = [f"read -r -d '' TORCHIMAGES_DOCKER_STEP <<'{NODE_END}'", _docker_step(job), NODE_END,
                f'{srun} bash -c "$TORCHIMAGES_DOCKER_STEP"']
    elif job.launcher == "oci":
        step = [f'{srun} --container="$TORCHIMAGES_BUNDLE" bash -c "$TORCHIMAGES_NODE_SCRIPT"']
    else:
        step = [f'{srun} bash -c "$TORCHIMAGES_NODE_SCRIPT"']
    return step + ["status=$?",
                   'echo "reports: $TORCHIMAGES_REPORTS (nccl.json from global rank 0); job exit $status"',
                   "exit $status", ""]


def slurm_script(job: Job) -> str:
    """The sbatch script: header, the guard step on every node, then the verify step through the launcher."""
    if problem := verify_args_problem(job.verify_args):
        raise UserError(problem)
    node = node_script(job)
    if any(line.strip() == NODE_END for line in node.splitlines()):
        raise UserError(f"VERIFY_ARGS holds a line '{NODE_END}', which would end the script's node part early")
    return _script_head(job) + "\n".join(_launcher_env(job) + _rendezvous_and_guard(job, node) + _step(job))


# ---- oci: a runc bundle made from the image ----

MEMLOCK_UNLIMITED = 2**64 - 1       # RLIM_INFINITY as runc's config.json writes it


def rdma_devices(folder: Path = Path("/dev/infiniband")) -> list[dict[str, Any]]:
    """The RDMA character devices in `folder` (uverbs*, rdma_cm, umad*) as config.json device entries; none when
    the host has no adapters. runc creates them in the container by number, so a node without them only fails
    to open them (what the fabric check reports), and the bundle still starts."""
    found = []
    for path in sorted(folder.glob("*")) if folder.is_dir() else []:
        info = path.stat()
        if stat.S_ISCHR(info.st_mode):
            found.append({"path": str(path), "type": "c", "major": os.major(info.st_rdev),
                          "minor": os.minor(info.st_rdev), "fileMode": 0o666, "uid": 0, "gid": 0})
    return found


def _fabric(config: dict[str, Any], devices: list[dict[str, Any]]) -> None:
    """RDMA in the container (docker's --device /dev/infiniband --ulimit memlock=-1 --cap-add IPC_LOCK): the
    devices with a cgroup rule allowing each, an unlimited RLIMIT_MEMLOCK, and CAP_IPC_LOCK; nothing without devices
    (as docker's guard: raising the limit needs a runtime allowed to, which a host without adapters need not have)."""
    if not devices:
        return
    process, linux = config["process"], config.setdefault("linux", {})
    process["rlimits"] = [r for r in process.get("rlimits", []) if r.get("type") != "RLIMIT_MEMLOCK"] + [
        {"type": "RLIMIT_MEMLOCK", "hard": MEMLOCK_UNLIMITED, "soft": MEMLOCK_UNLIMITED}]
    caps = process.setdefault("capabilities", {})
    for kind in ("bounding", "effective", "permitted"):
        caps[kind] = sorted(set(caps.get(kind, [])) | {"CAP_IPC_LOCK"})
    linux["devices"] = [d for d in linux.get("devices", []) if d["path"] not in {x["path"] for x in devices}] + devices
    rules = linux.setdefault("resources", {}).setdefault("devices", [])
    rules += [{"allow": True, "type": "c", "major": d["major"], "minor": d["minor"], "access": "rwm"} for d in devices]


def bundle_config(image_config: dict[str, Any], spec: dict[str, Any], mounts: list[str],
                  devices: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    """`runc spec`'s config.json made fit for verify under Slurm: no terminal, a writable root, the node's network,
    host name (reports are named by it), /dev/shm and /etc/hosts; `mounts` bound at the same path (reports); the
    RDMA `devices` (rdma_devices()) with unlimited locked memory and CAP_IPC_LOCK."""
    config: dict[str, Any] = json.loads(json.dumps(spec))
    process = config["process"]
    process["terminal"] = False
    process["cwd"] = "/tmp"
    process["env"] = list(image_config.get("Env") or []) + ["HOME=/tmp"]
    config["root"]["readonly"] = False
    config.pop("hostname", None)
    linux = config.setdefault("linux", {})
    linux["namespaces"] = [n for n in linux.get("namespaces", []) if n.get("type") not in ("network", "uts")]
    kept = [m for m in config.get("mounts", []) if m.get("destination") not in ("/dev/shm", "/etc/hosts", "/etc/resolv.conf")]
    binds = [("/dev/shm", ["rbind", "rw", "nosuid", "nodev"]), ("/etc/hosts", ["rbind", "ro"]),
             ("/etc/resolv.conf", ["rbind", "ro"])] + [(m, ["rbind", "rw"]) for m in mounts]
    config["mounts"] = kept + [{"destination": d, "type": "bind", "source": d, "options": o} for d, o in binds]
    _fabric(config, devices or [])
    return config


def bundle_env(image_config: dict[str, Any], image: str) -> str:
    """The marker file's text: the image's environment as shell exports (the step's environment is the host's)."""
    lines = ["# written by `make oci-bundle`: the image's environment (Slurm hands a container the host's)"]
    for item in image_config.get("Env") or []:
        key, _, value = item.partition("=")
        if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", key):
            lines.append(f"export {key}={shlex.quote(value)}")
    lines += [f"export TORCHIMAGES_BUNDLE_IMAGE={shlex.quote(image)}", "export HOME=/tmp", ""]
    return "\n".join(lines)


def _write_config(path: Path, image_config: dict[str, Any], reports: Path, echo: Any) -> None:
    """`runc spec`'s config.json at `path` rewritten by bundle_config, with this host's RDMA devices."""
    devices = rdma_devices()
    echo(f"RDMA devices in the bundle: {', '.join(d['path'] for d in devices) or 'none (no /dev/infiniband here)'}")
    config = bundle_config(image_config, json.loads(path.read_text()), [str(reports)], devices)
    path.write_text(json.dumps(config, indent=1))


def make_bundle(client: Any, image: str, folder: Path, runc: str = "runc", echo: Any = print) -> Path:
    """folder/rootfs (the image's filesystem, `docker export` of a container never started), folder/config.json
    (`runc spec`, then `bundle_config`), the marker with the image's environment, and folder/reports (mounted)."""
    import shutil
    import subprocess
    import tarfile
    import tempfile

    from docker.errors import DockerException, ImageNotFound
    try:
        found = client.images.get(image)
    except ImageNotFound:
        raise UserError(f"{image} is not in the local engine: make build IMAGE=... (or docker pull it) first") from None
    if shutil.which(runc) is None:
        raise UserError(f"{runc} is not installed: apt-get install runc (Slurm's oci.conf runs it on every node)")
    try:
        folder.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UserError(f"cannot create {folder.parent}: {exc.strerror}") from None
    staging = Path(tempfile.mkdtemp(prefix=f".{folder.name}.", dir=folder.parent))
    try:
        rootfs = staging / "rootfs"
        rootfs.mkdir()
        container = client.containers.create(image, command=["true"])
        try:
            echo(f"exporting {image} into {folder}/rootfs")
            with tempfile.TemporaryFile() as tar:
                for chunk in container.export():
                    tar.write(chunk)
                tar.seek(0)
                with tarfile.open(fileobj=tar) as archive:
                    archive.extractall(rootfs, filter="tar")
        finally:
            container.remove(force=True)
        proc = subprocess.run([runc, "spec", "--bundle", str(staging)], capture_output=True, text=True, check=False)
        if proc.returncode != 0:
            raise UserError(f"runc spec failed: {proc.stderr.strip()}")
        image_config = found.attrs.get("Config") or {}
        _write_config(staging / "config.json", image_config, folder.absolute() / "reports", echo)
        marker = rootfs / OCI_MARKER.lstrip("/")
        marker.parent.mkdir(parents=True, exist_ok=True)
        marker.write_text(bundle_env(image_config, image))
        (staging / "reports").mkdir(mode=0o1777)
        (staging / "reports").chmod(0o1777)      # every user's jobs write their reports here
        (rootfs / "tmp").mkdir(exist_ok=True)
        (rootfs / "tmp").chmod(0o1777)
        staging.chmod(0o755)
        if folder.exists():
            shutil.rmtree(folder)
        staging.rename(folder)
    except DockerException as exc:
        shutil.rmtree(staging, ignore_errors=True)
        raise UserError(f"exporting {image} failed: {exc}") from None
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return folder
