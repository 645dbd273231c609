"""An admin's shell transcript about the peer-memory module (GPUDirect RDMA class, batch 146): what its commands
printed, never the prose around them.

- `lsmod | grep nv_peer` answered by the next prompt with no line of its own: grep found no such module in
  /proc/modules (lsmod reads it): not loaded. Output cut by the excerpt's end, or a line that is no lsmod row, decides
  nothing.
- the running kernel's release: `uname -a` (`Linux <host> <release> #1 SMP ...`), `uname -r` printed under its command,
  or `modinfo <name>`'s `filename: /lib/modules/<release>/...` (modinfo without -k resolves a bare module name under
  `uname -r`, as modprobe does; a module's `vermagic` is only what it was built for, and is not read).
- `cat /sys/module/<name>/version` printing a version (FACTS.md: the module in /sys/module), or the legacy peer-memory
  registration `cat /sys/kernel/mm/memory_peers/nv_mem/version` printing one: loaded. Their absence decides nothing
  (the in-driver `nvidia_peermem` creates no memory_peers entry: h800-driver-550.54.15-nvidia-peermem-loaded-...).
- the GPU kernel module's flavour (`gpu_module`) from `/proc/driver/nvidia/version`'s `NVRM version:` line: `Open
  Kernel Module` is the open module, any other flavour (`x86_64 Kernel Module`) the proprietary one."""
from __future__ import annotations

import re

_NAMES = ("nvidia_peermem", "nv_peer_mem")
# a shell prompt: `# `, `$ `, `[user@host dir]$ `, `user@host:~$ `
_PROMPT = r"[ \t]*(?:\[[^\]\n]*\][#$]|[\w.-]+@[\w.-]+(?::[^\s#$]*)?[#$]|[#$])"
_IS_PROMPT = re.compile(rf"^{_PROMPT}(?:[ \t]|$)")
_GREP = re.compile(rf"^{_PROMPT}[ \t]*lsmod[ \t]*\|[ \t]*grep[ \t]+((?:-\w+[ \t]+)*)['\"]?([\w-]+)['\"]?[ \t]*$")
_LSMOD_ROW = re.compile(r"^[ \t]*\w+[ \t]+\d+[ \t]+\d+\b")
_UNAME_A = re.compile(r"^[ \t]*Linux[ \t]+\S+[ \t]+(\d+\.\d+[\w.+~-]*)[ \t]+#\d+", re.MULTILINE)
_UNAME_R = re.compile(rf"^(?:{_PROMPT})?[ \t]*uname[ \t]+-r[ \t]*\n[ \t]*(\d+\.\d+[\w.+~-]*)[ \t]*$", re.MULTILINE)
_MODINFO = re.compile(rf"^(?:{_PROMPT})?[ \t]*modinfo[ \t]+(?:{'|'.join(_NAMES)})[ \t]*$", re.MULTILINE)
_VERSION_LINE = r"\n[ \t]*\d+(?:\.\d+)+[\w.-]*[ \t]*$"
_SYSFS = re.compile(rf"^(?:{_PROMPT})?[ \t]*cat[ \t]+/sys/(?:module/(?:{'|'.join(_NAMES)})|kernel/mm/memory_peers/"
                    rf"nv_mem(?:_nc)?)/version[ \t]*{_VERSION_LINE}", re.MULTILINE)
_NVRM = re.compile(r"NVRM version: NVIDIA UNIX (Open Kernel Module|[\w-]+ Kernel Module)\b")
_FILENAME = re.compile(rf"^filename:[ \t]+/lib/modules/([^/\s]+)/\S*(?:{'|'.join(_NAMES)})\.ko(?:\.\w+)?[ \t]*$",
                       re.MULTILINE)


def _matches_module(pattern: str, flags: str) -> bool:
    if "v" in flags:            # an inverted grep lists everything else
        return False
    folded = pattern.lower() if "i" in flags else pattern
    return any(folded.replace("-", "_") in name for name in _NAMES)


def grep_unloaded(text: str) -> bool | None:
    """False where a `lsmod | grep` for the module printed no module line before the next prompt; else None."""
    lines = text.splitlines()
    for n, line in enumerate(lines):
        m = _GREP.match(line)
        if not m or not _matches_module(m.group(2), m.group(1)):
            continue
        for after in lines[n + 1:]:
            if _IS_PROMPT.match(after):
                return False    # the prompt came back: every line grep printed (none of them the module) was read
            if after.strip() and not _LSMOD_ROW.match(after):
                break           # not lsmod's output: prose or another tool, nothing decided
            if any(after.strip().startswith(name) for name in _NAMES):
                break           # the module's own row: loaded (peermem.py reads it)
    return None


def running_kernel(text: str) -> str | None:
    for pattern in (_UNAME_A, _UNAME_R):
        if m := pattern.search(text):
            return m.group(1)
    if _MODINFO.search(text) and (m := _FILENAME.search(text)):
        return m.group(1)
    return None


def sysfs_loaded(text: str) -> bool:
    """Whether a `cat` of the module's /sys/module version (or its memory_peers registration) printed a version."""
    return bool(_SYSFS.search(text))


def gpu_module(text: str) -> str | None:
    m = _NVRM.search(text)
    return None if not m else "open" if m.group(1).startswith("Open") else "proprietary"
