"""What NCCL's own INFO log says about the network it chose: pure parsing, one line at a time.

Every format below is read from NCCL's sources at its release tags (github.com/NVIDIA/nccl) and from
aws-ofi-nccl's (github.com/aws/aws-ofi-nccl), for the releases the images ship (NCCL 2.18 to 2.30):

- the decision, src/init.cc (2.18.6 l.310, 2.24.3 l.345, 2.30.7 l.486): `INFO(NCCL_INIT, "Using network %s",
  comm->ncclNet->name)`. The name is the plugin's and may hold a space: "IB", "Socket", "AWS Libfabric"
  (aws-ofi-nccl before 1.13, src/nccl_ofi_interface_nvidia.c `.name = "AWS Libfabric"`), "Libfabric" (1.13 on).
- no verbs library, src/misc/ibvsymbols.cc: `"Failed to open libibverbs.so[.1]"` (2.18.6 l.78 to 2.28.9 l.81);
  2.30.7 l.86 loops over the names and prints `"Count not open %s"` (sic) for each.
- the IB device list, src/transport/net_ib.cc (2.30: net_ib/init.cc): `"NET/IB : No device found."` and
  `"NET/IB : Using%s %s; OOB %s:%s"` with one ` [%d]%s:%d/%s` (index, device, port, IB|RoCE) per device; up to
  2.23.4 (l.669) the Using line is printed only when devices were found, from 2.24.3 (l.672) always, so an empty
  list (`NET/IB : Using [RO]; OOB ...`) is no device, not a parse failure. From 2.19 (2.21.5 in the corpus, and
  HPC-X's IBext plugin) a merged virtual device (NCCL_IB_MERGE_NICS) prints as ` [%d]={`, its members `[%d]
  %s:%d/%s` joined by `, `, `}`; releases with the virtual-device API list the physical devices only and name the
  virtual ones on `Made virtual device` lines; HPC-X's plugin appends `/SHARP` to a device.
- per connection, src/transport/net.cc (2.18.6 l.186-228, 2.30.7 l.324-379): `"Channel %02d/%d : %d[%d] ->
  %d[%d] [send] via NET/%s/%d%s%s"`: the network's name, the device index, then `/GDRDMA` when GPUDirect RDMA is
  used for that connection (the only per-connection proof), `(PCI)` from 2.27, `/Shared`.
- the net plugin, libnccl-net.so (or libnccl-net-<NCCL_NET_PLUGIN>.so), not found:
  2.18.6 src/net.cc l.179-180 `"NET/Plugin : Plugin load (%s) returned %d : %s"` + `"NET/Plugin : No plugin
  found, using internal implementation"`; 2.19.4/2.20.5 `"NET/Plugin : dlerror=%s No plugin found (%s), using
  internal implementation"`; 2.21.5 `"NET/Plugin: No plugin found (%s)"`; 2.22.3-2.24.3 `"NET/Plugin: Could not
  find:%s. Using internal network plugin."`; 2.26 on src/plugin/plugin_open.cc `"%s/Plugin: Could not
  find:%s%s%s"` with NET. Harmless on IB (the internal IB transport is used), the root cause on EFA.
- per HCA, src/graph/topo.cc (2.18.6 l.643, 2.24.3 l.1176, 2.30.7 l.1653): `"NET/%s : GPU Direct RDMA %s for HCA %d
  '%s'"` with Enabled/Disabled: whether the HCA can do GPUDirect RDMA at all (peer memory module or dma-buf).
- `"NET/Plugin: Failed to find ncclCollNetPlugin_v8 symbol."` (src/net.cc 2.21.5 l.467): a plugin without
  CollNet; harmless, never an error.
- aws-ofi-nccl, include/nccl_ofi_log.h prefixes "NET/OFI ": `"Selected Provider is %s (found %d nics)"`
  (v1.7.4-aws src/nccl_ofi_net.c l.1069 to v1.13.2-aws l.608), `"Selected provider is %s, fabric is %s (found
  %d nics)"` (v1.16.3 src/nccl_ofi_net.cpp l.656, v1.21.1 l.644). Provider `efa` is the fabric; `tcp` still
  reports network "Libfabric" but runs over TCP sockets.
"""
from __future__ import annotations

import re
from typing import Any

from ...shared import rdma
from ...shared.shmem import NCCL_SHM_FULL
from . import plugload
from .efa import EFA_ADMIN_REFUSED, EFA_PROVIDER_EMPTY
from .launchcfg import MAX_SHARED_MEM

# What follows "NCCL INFO " (or WARN) on a line: the message NCCL formatted.
_MESSAGE = re.compile(r"NCCL (?:INFO|WARN) (.*)$")
# A line quoted without its tag (an issue's excerpt, a launcher that strips it): the message starts at one of the
# forms NCCL itself prints, wherever the launcher's prefix (timestamp, `host:pid:tid [dev]`, Ray's `(pid=.., ip=..)`,
# mpirun's `[1,0]<stdout>:`) ends. aws-ofi-nccl's own `NET/OFI ...` lines are its messages too (torch quotes one under
# `Last error:`; v1.0's unit tests log `INFO: Function: ofi_init Line: 686: NET/OFI Selected Provider is efa`).
_UNTAGGED = re.compile(r"(?:^|[\s:\]])((?:NET/\S+ ?: ?\S|NET/OFI |Using network |Channel \d+/\d+ ?: |Failed to open libibverbs|"
                       r"Count not open \S*libibverbs|NCCL_\w+ set (?:by environment )?to ).*)$")
# Launchers' suffixes: Ray's de-duplication (`[repeated 7x across cluster]`), trailing carriage returns.
_SUFFIX = re.compile(r"(?<!\s)\s*\[repeated \d+x across cluster\]\s*$|\r$")
_NETWORK = re.compile(r"^Using network (.*\S)\s*$")
_VERBS_MISSING = re.compile(r"^(?:Failed to open libibverbs\.so\S*|Count not open \S*libibverbs\S*)")
# 2.19+ merges a NIC's ports into one virtual device (NCCL_IB_MERGE_NICS, net_ib.cc): ` [0]={[0] rocep130s0:1/RoCE,
# [1] rocep130s0:2/RoCE}` (the members' `[%d] %s:%d/%s`, a space after the index, `, ` between) beside unmerged
# ` [1]mlx5_2:1/IB`; every member is a device NCCL uses
_IB_USING = re.compile(r"^NET/IB ?: ?Using((?: \[\d+\](?:=\{[^}]*\}|\S+))*)")
_IB_DEVICE = re.compile(r"\[\d+\] ?([^\s,{}=\[]+)")
# HPC-X's IBext plugin (and NCCL's own from 2.19) merging ports: `NET/IB : Made virtual device [0] name=rocep1s0f1 ...`
_IB_VIRTUAL = re.compile(r"^NET/IB ?: ?Made virtual device \[\d+\] name=(\S+)")
_CHANNEL = re.compile(r"^Channel \d+/\d+ : .* via NET/(.+?)/(\d+)(?:\(\d+\))?((?:/GDRDMA)?)")
_PLUGIN_MISSING = re.compile(r"^NET/Plugin ?: ?(?:Plugin load \(|dlerror=.*No plugin found|No plugin found \(|"
                             r"Could not find:)")
_PLUGIN_LOADED = re.compile(r"^NET/Plugin ?: ?Loaded net plugin (.+?) \(v\d+\)")
_PROVIDER = re.compile(r"^NET/OFI Selected [Pp]rovider is ([^,\s]+)")
_SOCKET_USING = re.compile(r"^NET/(?:Socket|IB) ?: ?Using \[0\](?:=\{\[\d+\] ?)?([^\s;,}]+)")   # a merged one: its first
# the bootstrap's interface (`Bootstrap : Using ibp12s0:10.149.0.32<0>`), the interface when no NET line names one
_BOOTSTRAP = re.compile(r"^Bootstrap ?: ?Using ([^\s;]+)")
_HCA_GDR = re.compile(r"^NET/.+? : GPU Direct RDMA (Enabled|Disabled) for HCA \d+ '([^']+)'")
_NVLS = re.compile(r"NVLS multicast support is available|NVLS comm|NVLS Bind mem")
# `16 coll channels, 0 nvls channels, ...` (2.17 on): how many NVLS channels the communicator built; a log without a
# version that prints it comes from an NCCL that knows NVLS (bandwidth.nvls_expected)
NVLS_CHANNELS = re.compile(r"\b(\d+) nvls channels\b")
# NVLS proven off: no multicast on this node, or a communicator built without NVLS channels
_NVLS_OFF = re.compile(r"NVLS multicast support is not available")
# a net plugin's name may hold spaces (`via NET/AWS Libfabric/0/GDRDMA`, `via NET/NCCL RDMA Plugin v6/0`): up to its
# `/<dev>`, as `net_channels` keys it
_TRANSPORT = re.compile(r"via (P2P/\w+|SHM|NET/[^/\n]+?(?=/\d)|NET/\w+)")
# `NCCL_IB_HCA set by environment to mlx5_0` (param.cc) and `NCCL_SOCKET_IFNAME set to enp1s0` (misc/socket.cc)
_ENV = re.compile(r"^(NCCL_\w+) set (?:by environment )?to (.*?)\.?\s*$")
# NCCL's own prefix, `%s:%d:%d [%d] NCCL INFO` (hostname:pid:tid [cudaDev]): which process a line is from.
# A guide's hand-trimmed copy may drop the tid (`gpuserver1:15326 [0] NCCL INFO ...`): still that host's process; a
# prefix that lost its host instead (`::16674:17023 [0]`) names none (no `pid:tid` read as `host:pid`)
PREFIX = r"(?<![\w.-])([\w.-]+):(\d+)(:\d+)? \[\d+\] NCCL (?:INFO|WARN) "       # host, pid, :tid (explain/nccl.py too)
_RANK = re.compile(PREFIX + r"Using network (.*\S)\s*$")
MAX_PROOF = 8
# aws-ofi-nccl's words for a failure (`... failed`, `Could not ...`, `Couldn't open AV`, `Unable to insert ...`)
_OFI_FAILED = re.compile(r"[Ff]ail|[Cc]ould(?: not|n't)|\bUnable to\b")


# a word every match of _UNTAGGED holds, and of _SUFFIX: a line with none is not searched (their leading classes and
# lookbehind make the engine try every position of every line; hunt97: a 20,000-line log spent a second here)
_UNTAGGED_WORDS = ("NET/", "Using network ", "Channel ", "libibverbs", "NCCL_")


def message(line: str) -> str | None:
    """The message NCCL formatted on one line as a launcher printed it, or None when the line is not NCCL's."""
    if "[repeated " in line or "\r" in line:
        line = _SUFFIX.sub("", line)
    found = _MESSAGE.search(line) if "NCCL " in line else None
    if found is None and any(word in line for word in _UNTAGGED_WORDS):
        found = _UNTAGGED.search(line)
    return found.group(1).strip() if found else None


# NCCL's prefix (`host:pid:tid [dev] NCCL INFO`, a WARN's `file.cc:123` before its tag) where a paste ran several
# lines together on one (batch 181, wsl2-docker-two-rtx4090-...-one-line-paste-...): each message is read from where
# it starts, never as the tail of the one before it
_NEXT = re.compile(r"(?<=\s)(?:[\w.-]+:\d+(?::\d+)? )?\[\d+\] (?:\S+:\d+ )?NCCL (?:INFO|WARN) ")
# a device of NCCL's IB list as it prints one (`%s:%d/%s`, net_ib.cc): `mlx5_0:1/IB`, `rocep130s0:2/RoCE`
_WHOLE_DEVICE = re.compile(r"^[^\s:]+:\d+/\w")


_WRAPS, _WRAP_WIDTH = 4, 4096


def lines(text: str) -> list[str]:
    """The text's lines, a line holding several NCCL messages cut before each, and a `NET/IB : Using` list a terminal
    cut inside a device's name (`... [7]m` then `lx5_27:1/IB [RO]; OOB eth0:...` with no prefix, batch 181's
    vllm-k8s-head-pod-eight-ranks-...) joined back with its rest."""
    out: list[str] = []
    joins = 0
    for line in text.splitlines():
        # a terminal's wraps of one list, a few at most: never every line after a cut one (each kept the list cut, was
        # joined to it and read it again: quadratic, and the log's own lines after it swallowed)
        if out and joins < _WRAPS and len(line) <= _WRAP_WIDTH and line[:1].strip() and not message(line) \
                and _cut_list(out[-1]):
            out[-1] += line
            joins += 1
            continue
        joins = 0
        first = _NEXT.search(line) if "NCCL " in line else None      # its tag's literal: most lines hold none
        starts = [m.start() for m in _NEXT.finditer(line) if m.start() > first.start()] if first else []
        out += [line[a:b].rstrip() for a, b in zip([0, *starts], [*starts, len(line)], strict=True)]
    return out


def _cut_list(line: str) -> bool:
    """An IB device list whose last device is cut short (no `:port/link`) at the line's end."""
    found = message(line)
    listed = _IB_USING.search(found or "")
    if listed is None or found != listed.group(0):
        return False
    devices = _IB_DEVICE.findall(listed.group(1))
    return bool(devices) and not _WHOLE_DEVICE.match(devices[-1])


def _messages(text: str) -> list[str]:
    return [m for m in map(message, lines(text)) if m]


def _first(pattern: re.Pattern[str], messages: list[str]) -> str | None:
    return next((m for m in messages if pattern.search(m)), None)


def channels(messages: list[str]) -> dict[str, dict[str, int]]:
    """Connections per network name over NET: how many, and how many with /GDRDMA."""
    nets: dict[str, dict[str, int]] = {}
    for m in messages:
        found = _CHANNEL.search(m)
        if found:
            row = nets.setdefault(found.group(1), {"connections": 0, "gdr": 0})
            row["connections"] += 1
            row["gdr"] += bool(found.group(3))
    return nets


def _hcas(messages: list[str]) -> list[str] | None:
    """The IB/RoCE devices NCCL lists (`mlx5_0:1/IB`); [] when the list is printed empty or `No device found`."""
    devices: list[str] | None = None
    for m in messages:
        found = _IB_USING.search(m)
        virtual = _IB_VIRTUAL.search(m)
        if found:
            # a device cut short (the list's end lost) is no device: never a name made up of its first letters
            devices = sorted(set(devices or []) | {d for d in _IB_DEVICE.findall(found.group(1))
                                                   if _WHOLE_DEVICE.match(d)})
        elif virtual:
            devices = sorted(set(devices or []) | {virtual.group(1)})
        elif m.startswith("NET/IB : No device found"):
            devices = devices or []
    return devices


def _proof(messages: list[str], text: str = "") -> list[str]:
    """The lines that decide: the choice, the verbs and plugin messages, the device lists, the provider, NCCL's kernels
    needing more shared memory than the GPU gives (launchcfg.py); and the EFA kernel driver's refusals and libfabric's
    empty EFA provider pasted beside them (no NCCL tag: efa.py), kept first."""
    keys = (_NETWORK, _VERBS_MISSING, _IB_USING, _IB_VIRTUAL, _PLUGIN_MISSING, _PLUGIN_LOADED, _PROVIDER, _HCA_GDR, _ENV,
            NCCL_SHM_FULL, NVLS_CHANNELS, MAX_SHARED_MEM)
    seen: list[str] = []
    for m in messages:
        if (any(k.search(m) for k in keys) or m.startswith(("NET/IB : No device found", "NET/Socket : Using"))
                or plugload.load_error(m)) and m not in seen:
            seen.append(m[:200])
    kernel = list(dict.fromkeys(m.group(0) for m in EFA_ADMIN_REFUSED.finditer(text)))[:2]
    # libfabric's own warning that its EFA provider found no device (no NCCL tag on it): kept with the kernel's
    kernel += [m.group(0) for m in EFA_PROVIDER_EMPTY.finditer(text, 0, 1 << 20)][:1]
    return (kernel + seen)[:MAX_PROOF]


def parse(text: str) -> dict[str, Any]:
    """The NcclLog facts (verify/facts/net.py) of one or more ranks' INFO logs; {} when the text holds no NCCL line."""
    messages = _messages(text)
    if not messages:
        return {}
    networks = list(dict.fromkeys(m.group(1) for m in map(_NETWORK.search, messages) if m))
    iface = next((m.group(1) for m in map(_SOCKET_USING.search, messages) if m), None) or \
        next((m.group(1) for m in map(_BOOTSTRAP.search, messages) if m), None)
    verbs = _first(_VERBS_MISSING, messages)
    no_device = _first(re.compile(r"^NET/IB : No device found"), messages)
    # a plugin found and not loadable (plugload.py) is the line that says why there is none: it is kept first
    plugin_missing = next((m for m in messages if plugload.load_error(m)), None) or _first(_PLUGIN_MISSING, messages)
    ofi_error = next((m for m in messages if m.startswith("NET/OFI") and _OFI_FAILED.search(m)), None)
    efa = rdma.EFA_GPU_MEMORY.search(text)      # libfabric's own line, beside NCCL's (no NCCL tag on it)
    ofi_error = ofi_error or (efa.group(0).strip()[:300] if efa else None)
    loaded = next((m.group(1) for m in map(_PLUGIN_LOADED.search, messages) if m), None)
    provider = next((m.group(1) for m in map(_PROVIDER.search, messages) if m), None)
    return {"network": networks[0] if networks else None, "networks": networks, "interface": iface,
            "nvls": _nvls(messages),
            "ib_error": (verbs or no_device or ofi_error or "")[:200] or None,
            "transports": sorted({t for m in messages for t in _TRANSPORT.findall(m)})[:8],
            "net_channels": channels(messages), "hcas": _hcas(messages),
            "verbs_missing": verbs, "ib_no_device": no_device is not None, "plugin_missing": plugin_missing,
            "plugin_loaded": loaded, "ofi_provider": provider, "ofi_error": ofi_error, "hca_gdr": _hca_gdr(messages),
            "env": {m.group(1): m.group(2) for m in map(_ENV.search, messages) if m},
            "rank_networks": _rank_networks(text), "proof": _proof(messages, text)}


def _nvls(messages: list[str]) -> bool | None:
    """NVLS in use: a line shows it set up (or N > 0 NVLS channels), or shows it off; null where the log says neither
    (a trimmed excerpt, or an NCCL before 2.17): no line is no proof that NVLS was not used."""
    counts = [int(m.group(1)) for m in map(NVLS_CHANNELS.search, messages) if m]
    if any(_NVLS.search(m) for m in messages) or any(counts):
        return True
    return False if counts or any(_NVLS_OFF.search(m) for m in messages) else None


def _rank_networks(text: str) -> dict[str, str]:
    """Per process (`host:pid` of NCCL's prefix), the network its `Using network` line names."""
    found = {}
    for line in lines(text):
        hit = _RANK.search(_SUFFIX.sub("", line))
        if hit and (hit.group(3) or not hit.group(1).isdigit()):
            found[f"{hit.group(1)}:{hit.group(2)}"] = hit.group(4)
    return found


def _hca_gdr(messages: list[str]) -> dict[str, bool]:
    """Per HCA, whether NCCL found GPUDirect RDMA possible (`GPU Direct RDMA Enabled|Disabled for HCA n 'name'`)."""
    found = {}
    for m in messages:
        hit = _HCA_GDR.search(m)
        if hit:
            found[hit.group(2)] = hit.group(1) == "Enabled"
    return found
