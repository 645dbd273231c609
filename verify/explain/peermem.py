"""The peer-memory module (GPUDirect RDMA through `nvidia_peermem`, or the older `nv_peer_mem`), as the fabric facts'
`peermem` (FACTS.md: the module in /proc/modules), from what a node prints about it:
- `lsmod` (or a grep of it, gpud's `lsmod_peermem` reading, leptonai/gpud#39): `nvidia_peermem 16384 0`: loaded;
  a whole `lsmod` (its `Module Size Used by` header) without the line: not loaded;
- the module refused: modprobe's `could not insert 'nv_peer_mem': Unknown symbol in module` / `Invalid argument`
  (insmod's `could not insert module nvidia-peermem.ko`, modprobe's `Module nvidia-peermem not found in directory`),
  and the kernel's `nv_peer_mem: Unknown symbol ib_register_peer_memory_client (err 0)` / `disagrees about version
  of symbol ...` (Mellanox/nv_peer_memory#84, #8): not loaded, whatever the reason;
- `modprobe -v`'s `insmod /lib/modules/<release>/...`: the running kernel's release (modprobe resolves modules under
  `uname -r`), the fabric facts' `kernel` (below 5.12 no dma-buf GPUDirect path exists: verify/checks/fabric/gdrready.py).
- an admin's transcript (batch 146, fix144): `lsmod | grep <part of the name>` answered by the next prompt with no
  module line (grep printed nothing: not in /proc/modules, not loaded); the running kernel's release from `uname -a`
  (`Linux <host> <release> #1 SMP ...`) or `uname -r` printed under its command, or from `modinfo <name>`'s
  `filename: /lib/modules/<release>/...` (modinfo resolves a bare name under `uname -r`, as modprobe does). Only a
  command's output is read, never the prose around it.
Where the text shows the module both loaded and refused, the later line stands."""
from __future__ import annotations

import re
from typing import Any

from ..shared.fastre import guarded
from . import peermemshell as transcript
from .verbslist import listed

_NAME = r"(?:nvidia[-_]peermem|nv[-_]peer[-_]mem)"
# blanks within the line only (`^\s*` would run over every blank line below each line start: quadratic)
_LOADED = re.compile(rf"^[ \t]*{_NAME}[ \t]+\d+[ \t]+\d+\b", re.MULTILINE)
# modprobe's and insmod's refusals, modprobe finding no such module for the running kernel, the kernel's symbol lines
_REFUSED = guarded(re.compile(rf"could not insert (?:module )?'?(?:\S*/)?{_NAME}\b|\bModule {_NAME} not found in directory "
                      rf"|\b{_NAME}: (?:Unknown symbol|disagrees about version of symbol) \w+"))
_LSMOD = re.compile(r"^[ \t]*Module[ \t]+Size[ \t]+Used by[ \t]*$", re.MULTILINE)
# the running kernel's release, where modprobe resolved the module (`insmod /lib/modules/<release>/...`, `not found
# in directory /lib/modules/<release>`)
_INSMOD = re.compile(rf"^[ \t]*insmod /lib/modules/([^/\s]+)/\S*{_NAME}\.ko|\bModule {_NAME} not found in "
                     r"directory /lib/modules/([^/\s]+)", re.MULTILINE)


def detect(text: str) -> bool:
    return bool(_LOADED.search(text) or _REFUSED.search(text) or transcript.grep_unloaded(text) is not None
                or transcript.sysfs_loaded(text))


def parse(text: str) -> dict[str, Any]:
    loaded, refused = list(_LOADED.finditer(text)), list(_REFUSED.finditer(text))
    if loaded or refused:
        last_loaded = loaded[-1].start() if loaded else -1
        last_refused = refused[-1].start() if refused else -1
        peermem: bool | None = last_loaded > last_refused
    else:
        peermem = True if transcript.sysfs_loaded(text) else (
            False if _LSMOD.search(text) or transcript.grep_unloaded(text) is not None else None)
    insmod = _INSMOD.search(text)
    kernel = (insmod.group(1) or insmod.group(2)) if insmod else transcript.running_kernel(text)
    # an `ibv_devices` listing pasted with it is read too (verbslist.py): the same record as its translation
    flavour = transcript.gpu_module(text)
    return {"peermem": peermem, **({"kernel": kernel} if kernel else {}),
            **({"gpu_module": flavour} if flavour else {}), **listed(text)}
