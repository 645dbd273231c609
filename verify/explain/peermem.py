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
Where the text shows the module both loaded and refused, the later line stands."""
from __future__ import annotations

import re
from typing import Any

from .verbslist import listed

_NAME = r"(?:nvidia[-_]peermem|nv[-_]peer[-_]mem)"
# blanks within the line only (`^\s*` would run over every blank line below each line start: quadratic)
_LOADED = re.compile(rf"^[ \t]*{_NAME}[ \t]+\d+[ \t]+\d+\b", re.MULTILINE)
# modprobe's and insmod's refusals, modprobe finding no such module for the running kernel, the kernel's symbol lines
_REFUSED = re.compile(rf"could not insert (?:module )?'?(?:\S*/)?{_NAME}\b|\bModule {_NAME} not found in directory "
                      rf"|\b{_NAME}: (?:Unknown symbol|disagrees about version of symbol) \w+")
_LSMOD = re.compile(r"^[ \t]*Module[ \t]+Size[ \t]+Used by[ \t]*$", re.MULTILINE)
# the running kernel's release, where modprobe resolved the module (`insmod /lib/modules/<release>/...`, `not found
# in directory /lib/modules/<release>`)
_INSMOD = re.compile(rf"^[ \t]*insmod /lib/modules/([^/\s]+)/\S*{_NAME}\.ko|\bModule {_NAME} not found in "
                     r"directory /lib/modules/([^/\s]+)", re.MULTILINE)


def detect(text: str) -> bool:
    return bool(_LOADED.search(text) or _REFUSED.search(text))


def parse(text: str) -> dict[str, Any]:
    loaded, refused = list(_LOADED.finditer(text)), list(_REFUSED.finditer(text))
    if loaded or refused:
        last_loaded = loaded[-1].start() if loaded else -1
        last_refused = refused[-1].start() if refused else -1
        peermem: bool | None = last_loaded > last_refused
    else:
        peermem = False if _LSMOD.search(text) else None
    kernel = _INSMOD.search(text)
    # an `ibv_devices` listing pasted with it is read too (verbslist.py): the same record as its translation
    return {"peermem": peermem, **({"kernel": kernel.group(1) or kernel.group(2)} if kernel else {}), **listed(text)}
