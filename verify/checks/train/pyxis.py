"""A container that Slurm's pyxis plugin (with enroot) could not start, and whose it is (issue 35, batch 313):

    slurmstepd: error: pyxis: seccomp filter failed: Function not implemented
    slurmstepd: error: pyxis: failed to import docker image
    slurmstepd: error: pyxis:     mkdir: cannot create directory '/run/enroot': Permission denied
    slurmstepd: error: pyxis:     [ERROR] URL https://.../manifests/tag returned error code: 401 Unauthorized
    slurmstepd: error: spank: required plugin spank_pyxis.so: task_init() failed with rc=-1

pyxis prints enroot's own log (`printing enroot log file:`) under its lines; the words say whose it is:
- the node's: the running kernel refusing pyxis's seccomp filter (`seccomp filter failed: Function not implemented`,
  ENOSYS: the booted kernel, `enroot-check --verify`); enroot's runtime, data or cache path not writable for the user
  (`mkdir: cannot create directory '/run/enroot': Permission denied`: the site's enroot.conf, ENROOT_RUNTIME_PATH and
  its kin, on the node); FUSE or its helpers missing on the node (`fuse: device not found`, `/dev/fuse`,
  `[ERROR] Command not found: squashfuse`, `fuse-overlayfs`);
- the job's: an image reference that does not exist or is not authorised (the registry's `401 Unauthorized`,
  `404 Not Found`, `manifest unknown`, enroot's `Invalid image reference`: the job's --container-image), a
  --container-mounts source that does not exist (`enroot-mount: failed to mount: SRC at DST: No such file or
  directory`), a container name already in use (`File already exists`, `already in use`);
- the image's: the entrypoint or command not in the image (enroot-switchroot), judged before this
  (verify/checks/train/imagefault.py).
Any other pyxis or enroot failure is never the host's: this tool cannot tell whose it is (the job's to read, no
drain)."""
from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, NamedTuple

from ...codes import Owner

# a failure pyxis or enroot printed (slurmstepd's `pyxis:` lines, the plugin's own name, enroot's log)
PYXIS = re.compile(r"\bpyxis:|\bspank_pyxis\b|\benroot(?:-[\w-]+)?\b", re.IGNORECASE)
# pyxis's seccomp filter refused by the running kernel (pyxis's `seccomp filter failed: %s`)
_SECCOMP = re.compile(r"\bseccomp filter failed: (?:Function not implemented|Invalid argument)")
# enroot's runtime/data/cache path (or the per-user one under /run/user) it could not create or write
_PATH = re.compile(r"\bmkdir: cannot create directory ['‘`]?[^'’`\n]*(?:enroot|/run/user/\d+|pyxis)[^'’`\n]*['’`]?: "
                   r"(?:Permission denied|Read-only file system)")
# FUSE on the node: the device, the module, enroot's helpers (`[ERROR] Command not found: squashfuse`)
_FUSE = re.compile(r"\bfuse: device not found\b|/dev/fuse\b|\bCommand not found: (?:squashfuse|fuse-overlayfs)\b")
# the registry's answer to the image the job named (enroot's `URL ... returned error code: 401 Unauthorized`)
_REFERENCE = re.compile(r"\breturned error code: (?:401|403|404)\b|\bmanifest unknown\b|\bMANIFEST_UNKNOWN\b|"
                        r"\bInvalid image reference\b|\bpull access denied\b|\bunauthorized: authentication required\b")
# a --container-mounts source that does not exist (enroot-mount's `failed to mount: SRC at DST: ...`)
_MOUNT = re.compile(r"\bfailed to mount: \S+ at \S+: No such file or directory\b")
# a container name the job reuses (enroot create's `File already exists`, pyxis's own words)
_NAME = re.compile(r"\bFile already exists\b|\bcontainer name \S+ already (?:in use|exists)\b|\balready in use\b")


class Start(NamedTuple):
    why: str
    fix: str
    owner: Owner


_KERNEL = Start("the node's running kernel refuses the seccomp filter pyxis installs (ENOSYS): the node's booted kernel "
                "or OS image, not the job or the image",
                "Check the node's kernel with `enroot-check --verify` and boot one that provides seccomp filters; keep "
                "container jobs off the node until then (no hardware fault).", "host")
_RUNTIME = Start("enroot, run by pyxis as the user, cannot create its runtime, data or cache path: the site's "
                 "enroot.conf (ENROOT_RUNTIME_PATH, ENROOT_DATA_PATH, ENROOT_CACHE_PATH) on the node",
                 "Point enroot's paths at per-user directories the user can create (/etc/enroot/enroot.conf, e.g. "
                 "/run/enroot/user-$(id -u), or a prolog or tmpfiles rule that makes them); no hardware fault.",
                 "host")
_NOFUSE = Start("FUSE (/dev/fuse, the fuse module, squashfuse or fuse-overlayfs) is missing on the node, which enroot "
                "needs to mount the image: the node's set-up",
                "Load the fuse module and install enroot's dependencies (squashfuse, fuse-overlayfs) on the node "
                "(`enroot-check --verify`).", "host")
_IMAGE_REF = Start("the registry refused or does not hold the image the job named (--container-image): the job's "
                   "reference or credentials, not the node",
                   "Fix --container-image (registry#image:tag, e.g. nvcr.io#nvidia/pytorch:24.05-py3) and the "
                   "credentials in ~/.config/enroot/.credentials; drain nothing.", "job")
_NO_SOURCE = Start("a --container-mounts source the job named does not exist on the node: the job's mounts",
                   "Fix --container-mounts to name paths that exist on the node; drain nothing.", "job")
_NAME_USED = Start("the container name the job gave is already in use: the job's --container-name",
                   "Use another --container-name, or remove the old container (`enroot remove`); drain nothing.",
                   "job")
_UNKNOWN = Start("pyxis/enroot could not start the container, for a reason this tool does not tell apart: read enroot's "
                 "log above; not shown to be the node's",
                 "Read pyxis's and enroot's lines for the cause (the image reference, the mounts, the node's enroot "
                 "set-up) before acting; drain nothing on this alone.", "job")
_RULES = ((_SECCOMP, _KERNEL), (_PATH, _RUNTIME), (_FUSE, _NOFUSE), (_REFERENCE, _IMAGE_REF), (_MOUNT, _NO_SOURCE),
          (_NAME, _NAME_USED))


def cause(text: str) -> Start | None:
    """The class pyxis's or enroot's words name, or None where they name none of the rules'."""
    return next((start for pattern, start in _RULES if pattern.search(text)), None)


def started(failure: Mapping[str, Any]) -> Start | None:
    """Whose failure it is where pyxis or enroot could not start the container; None where the failure is not
    theirs."""
    text = f"{failure.get('type') or ''}: {failure.get('message') or ''}"
    if not PYXIS.search(text):
        return None
    return cause(text) or _UNKNOWN
