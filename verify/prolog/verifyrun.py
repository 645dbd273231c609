"""One verify run as the prolog's child: its own verify (never a job's), stopped with its whole process group at
its limit or when the prolog is stopped, and its report read as a hostile file (bounded, never a traceback).
"""
from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import tempfile
from collections.abc import Iterator
from typing import Any

from .. import strictjson
from ..shared import deathsig
from . import settings, statefile
from .config import Interrupted
from .deadline import STOP_S, Overran

PACKAGE_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.realpath(__file__))))   # holds verify/
REPORT_CAP = 64 << 20           # bytes: no verify report comes near it


def _groups(root: int) -> list[int]:
    """The process groups of `root`'s descendants, read from /proc (ppid links) now: verify starts each check in a
    session of its own (verify/runner.py), which stopping verify's group alone leaves running. Empty without /proc."""
    children: dict[int, list[int]] = {}
    groups: dict[int, int] = {}
    try:
        entries = [e for e in os.listdir("/proc") if e.isdecimal()]
    except OSError:
        return []
    for entry in entries:
        try:
            with open(f"/proc/{entry}/stat", encoding="ascii", errors="replace") as fh:
                stat = fh.read()
        except OSError:
            continue
        fields = stat[stat.rfind(")") + 2:].split()        # after "pid (comm) ": state ppid pgrp ...
        if len(fields) > 2 and fields[1].isdecimal() and fields[2].isdecimal():
            children.setdefault(int(fields[1]), []).append(int(entry))
            groups[int(entry)] = int(fields[2])
    found, todo = set(), [root]
    while todo:
        for child in children.get(todo.pop(), []):
            if child not in found:
                found.add(child)
                todo.append(child)
    return sorted({groups[p] for p in found if groups.get(p) not in (None, root, 0, 1, os.getpgrp())})


def _signal_groups(groups: list[int], sig: int) -> None:
    for pgid in groups:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(pgid, sig)


def _stop(proc: subprocess.Popen[Any]) -> None:
    """SIGTERM, then SIGKILL, to the child's whole process group (verify and the checks it started) and to the groups
    of every process it started in a session of its own (a check: verify/runner.py), read before verify goes (its
    orphans lose their link to it): STOP_S at most. Those other groups get SIGKILL whatever verify did on SIGTERM:
    its own SIGKILL of a check comes 3 s after it forwards SIGTERM, after the prolog's."""
    others = _groups(proc.pid)
    try:
        for sig, wait in ((signal.SIGTERM, STOP_S * 2 / 3), (signal.SIGKILL, STOP_S / 3)):
            _signal_groups(others, sig)
            try:
                os.killpg(proc.pid, sig)
                proc.wait(timeout=wait)
                return
            except (ProcessLookupError, PermissionError):
                return
            except subprocess.TimeoutExpired:
                others = sorted(set(others) | set(_groups(proc.pid)))
                continue
            except (Overran, Interrupted):    # stopped while stopping it: the group is killed before going on
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.killpg(proc.pid, signal.SIGKILL)
                raise
    finally:
        _signal_groups(others, signal.SIGKILL)


def verify_command(python: str) -> list[str]:
    """This prolog's own verify, never one in the job's working folder or on its PYTHONPATH: `-I` (isolated: no
    working folder, no PYTHON* variable on sys.path; on 3.11+ it implies -P, and -P itself is refused before 3.11)
    with this package's root put first by hand, as verify/bin does."""
    return [python, "-I", "-c", "import runpy, sys; sys.path.insert(0, sys.argv.pop(1)); "
            "runpy.run_module('verify', run_name='__main__', alter_sys=True)", PACKAGE_ROOT]


# verify's test hooks (VERIFY_TEST_HANG, VERIFY_TEST_CRASH: verify/child.py) hang or crash a check on purpose. A
# first step's environment is the job's: there they reach verify only where the operator allowed them, by this file
# in the prolog's state folder (root's, which no job writes); under Prolog= the environment is slurmd's own
TEST_HOOKS_FILE = "test-hooks"


def hooks_allowed(mode: str, state_dir: str) -> bool:
    """Whether verify's test hooks may come from this environment: always outside a job's step (Prolog=, by hand),
    in a step only where the state folder holds TEST_HOOKS_FILE, a regular file (no link)."""
    if mode != "step":
        return True
    return settings.operators(state_dir, TEST_HOOKS_FILE)[0]     # and no group or other could have written it


def drop_test_hooks(environ: Any) -> None:
    """verify's test hooks taken out of this process's environment (a job's step the operator did not allow them
    in): verify and its checks inherit it."""
    for key in [k for k in environ if k.startswith("VERIFY_TEST_")]:
        del environ[key]


# what else of an environment reaches the preflight's judgement. A torchrun group's variables, in every mode (the
# preflight is one node's gate: with RANK, WORLD_SIZE and MASTER_ADDR exported by a job script its nccl check joins a
# group that never forms, times out, and the confirmation does too: a healthy node drained); and, in a job's step,
# verify's paths and floors (VERIFY_SHM_PATH: the shm check on a folder of the job's, SHM_TOO_SMALL the host's;
# TORCHIMAGES_DRIVER_MIN above the real floor: DRIVER_TOO_OLD, the host's; TORCHIMAGES_HOST_ARCH: emulation). The
# driver floor is then CUDA's own table (verify/checks/gpu/node.py): an image's higher one is the job's to meet.
# Nor the job's LD_PRELOAD or LD_AUDIT: the dynamic loader runs them in every process verify starts, the door round 53
# closed for sitecustomize (a library that sleeps timed every check out: a confirmed "hang" of a healthy node).
# LD_LIBRARY_PATH stays: Apptainer's --nv finds the driver's own libcuda and NVML through it alone (without them
# the step's verify sees no driver).
# NCCL's and gloo's own settings are the job's too in its step (NCCL_SOCKET_IFNAME naming no interface of the node:
# the local all-reduce's NCCL_FAILED, the host's): the node's own are /etc/nccl.conf, as under Prolog=
# So are PyTorch's and CUDA's runtime knobs (hunt98): a job's TORCH_DISTRIBUTED_DEBUG=bogus crashed the gpu check
# (CHECK_CRASHED, the image's: a job's first step failed on the image), PYTORCH_CUDA_ALLOC_CONF with a key torch
# refuses fails the first allocation, CUDA_FORCE_PTX_JIT / CUDA_DISABLE_PTX_JIT had the kernels built another way
# (ARCH_NOT_IN_BUILD, the image's), CUDA_DEVICE_WAITS_ON_EXCEPTION halts a faulting kernel for a debugger (a "hang").
# Slurm's own CUDA variables stay: CUDA_VISIBLE_DEVICES (the step's GPUs), CUDA_DEVICE_ORDER (how its indices map),
# CUDA_MPS_* (gres/mps: the MPS daemon and the share the job was given)
# So are the CUDA math libraries' knobs and the job's scratch folder (hunt100): CUBLAS_WORKSPACE_CONFIG, CUBLASLT_* and
# CUDNN_* (logging every call to a file, workspace sizes), NVIDIA_TF32_OVERRIDE steer the gpu check's own matmul;
# and a job's TMPDIR (srun exports the submitting shell's: a quota'd $HOME/tmp or a nearly full scratch) held every
# check's scratch folder and the prolog's own, so its ENOSPC was DISK_FULL, the host's: a healthy node drained for
# the job's quota. The node's scratch is its own /tmp (verify/runner.scratch_base), as under Prolog=
JOB_PREFIXES = ("NCCL_", "GLOO_", "TORCH_", "PYTORCH_", "TORCHINDUCTOR_", "TORCHDYNAMO_", "CUDA_", "CUBLAS_",
                "CUBLASLT_", "CUDNN_")
SLURM_CUDA = ("CUDA_VISIBLE_DEVICES", "CUDA_DEVICE_ORDER")
SLURM_CUDA_PREFIX = "CUDA_MPS_"
GROUP_VARS = ("RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE", "GROUP_RANK", "GROUP_WORLD_SIZE", "ROLE_RANK",
              "ROLE_WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT")
JOB_SETTINGS = ("TORCHIMAGES_DRIVER_MIN", "TORCHIMAGES_HOST_ARCH", "TORCHIMAGES_NODE", "LD_PRELOAD", "LD_AUDIT",
                "NVIDIA_TF32_OVERRIDE", "TMPDIR")


def drop_job_settings(environ: Any, job: bool) -> None:
    """The group's variables out of this process's environment (verify inherits it), and in a job's step verify's
    own settings (VERIFY_*, but its test hooks: hooks_allowed decides those) and the floors above."""
    for key in list(environ):
        group = key in GROUP_VARS or key.startswith("TORCHELASTIC_")
        verify_own = key.startswith("VERIFY_") and not key.startswith("VERIFY_TEST_")
        slurms = key in SLURM_CUDA or key.startswith(SLURM_CUDA_PREFIX)
        if group or (job and (key in JOB_SETTINGS or verify_own or (key.startswith(JOB_PREFIXES) and not slurms))):
            del environ[key]
    if environ is os.environ and "TMPDIR" not in environ:
        tempfile.tempdir = None         # the prolog's own temporary folder chosen again, without the job's TMPDIR


# Return to service proves the whole node (NVSentinel's return to service reruns the failed check on the node, not on a
# sample of it). `make undrain` runs in an operator's shell: its CUDA_VISIBLE_DEVICES, left from debugging the faulted
# GPU ("0-4,6,7"), hid that GPU from every check but NVML's count, and its NCCL_P2P_DISABLE=1 or VERIFY_SHM_PATH had
# the preflight measure another all-reduce or folder than the node's own (/etc/nccl.conf stays NCCL's): a broken node
# resumed on a pass of what the shell left. A revalidation's verify sees the node as Prolog= does, each dropped name said.
VISIBLE_VARS = ("CUDA_VISIBLE_DEVICES", "NVIDIA_VISIBLE_DEVICES", "HIP_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES",
                "GPU_DEVICE_ORDINAL")


def drop_shell_settings(environ: Any) -> list[str]:
    """A revalidation's environment made the node's: the shell's GPU narrowing and verify's, NCCL's and gloo's own
    settings out (drop_job_settings' job rule); one note naming them, or none."""
    before = set(environ)
    drop_job_settings(environ, True)
    for key in VISIBLE_VARS:
        environ.pop(key, None)
    gone = sorted(before - set(environ) - set(GROUP_VARS))
    return [f"--revalidate proves the whole node: the shell's {', '.join(gone[:8])}{' ...' if len(gone) > 8 else ''} "
            "not given to its preflight (unset them to silence this)"] if gone else []


# Slurm's prolog semantics: Prolog= runs with no search path ("for security reasons, these programs do not have a
# search path set": SchedMD's Prolog and Epilog Guide), so sinfo, scontrol and journalctl were looked up in /bin:/usr/bin
# alone (Python's fallback): a Slurm built from source (/usr/local/bin) or under /opt/slurm (AWS ParallelCluster) had
# no sinfo there, the breaker could not count, and every host fault was "not drained". A job's step runs with the
# job's PATH: a `sinfo` or `journalctl` of its own answered for Slurm and the kernel log. Both get the prefix of the
# slurmd that started it first (the Slurm that slurmd is; in a step only a prefix root owns: the job's user owns its
# own folders, and a step's SLURM_CONF is the job's to set), then the system's folders (the shells' default, sudo's
# secure_path) and Slurm's usual prefix; an operator's PATH (by hand, `make undrain`) is kept.
SYSTEM_PATH = ("/usr/local/sbin", "/usr/local/bin", "/usr/sbin", "/usr/bin", "/sbin", "/bin", "/opt/slurm/bin")


def _root_folder(path: str, job: bool = False) -> bool:
    """A folder only root (or, outside a job's step, this user: slurmd's own) can write: slurmd's prefix, no job's."""
    try:
        info = os.stat(path)
    except OSError:
        return False
    owners = (0,) if job else (0, os.geteuid())
    return os.path.isdir(path) and info.st_uid in owners and not info.st_mode & 0o022


def slurm_folders(env: Any, proc: str = "/proc", job: bool = False) -> list[str]:
    """Where slurmd's Slurm is: <prefix>/bin beside the slurmd (or a step's slurmstepd) that started us (its /proc
    exe: a configless node's SLURM_CONF is slurmd's cache, no prefix) and beside SLURM_CONF (<prefix>/etc). In a job's
    step (job) both are the job's to fake (its own slurmstepd, its SLURM_CONF): a prefix root owns alone."""
    places = []
    try:
        exe = os.readlink(os.path.join(proc, str(os.getppid()), "exe"))
        if os.path.basename(exe) in ("slurmd", "slurmstepd"):
            places.append(os.path.join(os.path.dirname(os.path.dirname(exe)), "bin"))
    except OSError:
        pass
    conf = env.get("SLURM_CONF", "")
    if os.path.isabs(conf):
        places.append(os.path.join(os.path.dirname(os.path.dirname(conf)), "bin"))
    return [p for i, p in enumerate(places) if p not in places[:i] and _root_folder(p, job)]


@contextlib.contextmanager
def system_path(environ: Any, job: bool, env: Any, proc: str = "/proc") -> Iterator[None]:
    """environ's PATH, while the prolog runs, set to slurmd's prefix and the system's folders where it is a job's
    (replaced: the job's own sinfo or journalctl answered for the host) or there is none (Slurm gives Prolog= none);
    restored afterwards."""
    before = environ.get("PATH")
    if job or not (before or "").strip():
        first = slurm_folders(env, proc, job)
        environ["PATH"] = os.pathsep.join([*first, *(f for f in SYSTEM_PATH if f not in first)])
    try:
        yield
    finally:
        if before is None:
            environ.pop("PATH", None)
        else:
            environ["PATH"] = before


def _verify_env(env: Any) -> dict[str, str]:
    """verify's environment: the checks it starts (`python -m verify.checks...`, not isolated) find this package
    first (PYTHONPATH) and, on 3.11+, no working folder on sys.path (PYTHONSAFEPATH); they run in / (cwd), which no
    job can write, so before 3.11 too no verify/ of the job's is found first. As `-I` does for verify itself, no
    PYTHON* variable of the job's reaches them, nor its user site (PYTHONNOUSERSITE): Python imports a
    sitecustomize/usercustomize from sys.path at every start, so a job's PYTHONPATH holding one ran the job's code
    inside each check (one that sleeps times every check out: a confirmed host "hang" that drained a healthy node)."""
    kept = {k: v for k, v in env.items() if not k.startswith("PYTHON")}
    return {**kept, "PYTHONSAFEPATH": "1", "PYTHONNOUSERSITE": "1", "PYTHONPATH": PACKAGE_ROOT}


def _run_verify(cmd: list[str], limit: float) -> tuple[int | None, str]:
    """(exit status or None when it ran past `limit`, the tail of stderr); its whole process group is stopped when
    it runs past it, and when the prolog itself is stopped (Interrupted) while it runs."""
    with tempfile.TemporaryFile(mode="w+", encoding="utf-8", errors="replace") as err:
        try:
            # its own session (stopped as a group), tied to the prolog's life: slurmd's SIGKILL of the prolog's
            # group at PrologEpilogTimeout reaches no new session, and left verify running beside the next job's
            proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=err, start_new_session=True, cwd="/",
                                    env=_verify_env(os.environ), preexec_fn=deathsig.with_parent())
        except OSError as exc:
            return 127, f"{cmd[0]}: {exc.strerror or exc}"
        try:
            rc: int | None = proc.wait(timeout=max(0.0, limit))
        except subprocess.TimeoutExpired:
            rc = None
        finally:
            if proc.returncode is None:
                _stop(proc)
        err.seek(0, os.SEEK_END)
        err.seek(max(0, err.tell() - 8192))
        lines = [ln for ln in err.read().splitlines() if ln.strip()]
    return rc, (lines[-1] if lines else "")


def load_report(path: str) -> tuple[Any, str | None, str]:
    """(the report verify wrote, or why there is none, and whether that is "none" (no JSON: verify's trouble) or
    "invalid" (one no verify could have written: too large, nested too deep))."""
    try:
        tail = statefile.read_tail(path, REPORT_CAP + 1)
    except OSError as exc:
        return None, f"no report ({statefile.problem(exc, path)})", "none"
    if tail.cut or tail.size > REPORT_CAP:
        return None, f"a report of {tail.size} bytes, more than any verify writes ({REPORT_CAP} at most)", "invalid"
    try:
        return strictjson.loads(tail.text, non_finite=True), None, ""
    except RecursionError:
        return None, "a report nested deeper than any verify writes", "invalid"
    except json.JSONDecodeError as exc:
        return None, f"a report that is not JSON ({str(exc)[:80]})", "none"
    except ValueError as exc:         # an integer past a float's range, a key twice: no verify writes one
        return None, f"a report no verify writes ({str(exc)[:80]})", "invalid"
