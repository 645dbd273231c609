"""A container's /dev/infiniband as `ls -l /dev/infiniband` prints it (the RDMA device plugins' test pods:
`crw-rw-rw- 1 root root 231, 192 Nov 21 02:18 uverbs0`, `... 10, 57 ... rdma_cm`), or as `find /dev/infiniband`
prints it (one path a line), or as plain `ls` prints it (`issm0  rdma_cm  umad0  uverbs0`, a row of device
names and nothing else), or as an RDMA device plugin logs what it gives the container (the SR-IOV network device
plugin's `AllocateResponse send: &AllocateResponse{...Devices:[]*DeviceSpec{&DeviceSpec{ContainerPath:/dev/infiniband/
uverbs11,HostPath:...}`, protobuf's text form `container_path:"/dev/infiniband/uverbs0"`: the kubelet creates exactly
those nodes in the container, batch 111): what the container was given, into the fabric facts' `uverbs` and `rdma_cm`.
Only character devices (`ls -l`'s `c`), whole paths, rows of device names alone or a DeviceSpec's container path count,
so a name quoted in an error message is not a listing."""
from __future__ import annotations

import re
from typing import Any

from .verbslist import listed

# `ls -l`'s character device: mode (an SELinux `.` or ACL `+` after it), links, owner, group, `major, minor`, date, name
_CHAR = re.compile(r"^c[rwxsStT-]{9}[.+@]?\s+\d+\s+\S+\s+\S+\s+\d+,\s*\d+\s+.*?\s(\S+)$")
_PATH = re.compile(r"^/dev/infiniband/(\S+)$")
_VERBS = re.compile(r"uverbs\d+")
_RDMA_NAMES = re.compile(r"(?:uverbs|umad|issm|ucm)\d+|rdma_cm")
# a device plugin's DeviceSpec (k8s.io/kubelet deviceplugin/v1beta1), as Go's %+v and protobuf's text form print it
_DEVICE_SPEC = re.compile(r"(?:\bContainerPath:|\bcontainer_path:\s*\")/dev/infiniband/(\w+)")


def _names(text: str) -> list[str]:
    names = []
    for line in text.splitlines():
        m = _CHAR.match(line.strip()) or _PATH.match(line.strip())
        if m and _RDMA_NAMES.fullmatch(m.group(1)):
            names.append(m.group(1))
        elif len(row := line.split()) >= 2 and all(_RDMA_NAMES.fullmatch(n) for n in row):
            names.extend(row)       # plain `ls /dev/infiniband`: a row of nothing but its device names (batch 95)
    names.extend(n for n in _DEVICE_SPEC.findall(text) if _RDMA_NAMES.fullmatch(n))
    return list(dict.fromkeys(names))


def detect(text: str) -> bool:
    return any(_VERBS.fullmatch(n) or n == "rdma_cm" for n in _names(text))


def parse(text: str) -> dict[str, Any]:
    names = _names(text)
    # an `ibv_devices` listing pasted beside it (verbslist.py) is what the process's verbs library opened: the same
    # record a translation of the file writes (batch 134: a Talos pod's `ls -la /dev/infiniband/` then `ibv_devices`)
    return {"uverbs": sorted((n for n in names if _VERBS.fullmatch(n)), key=lambda n: int(n[6:])),
            "rdma_cm": "rdma_cm" in names, **listed(text)}
