"""Which transport NCCL used and why: a fall back to sockets with its cause (image, job or host), GPUDirect RDMA
unused, a memlock limit too low to register buffers, a fabric the container was not given."""
from __future__ import annotations

import re
from collections.abc import Iterable

from ...codes import Owner
from ...facts import NcclFacts, NcclLog
from ...findings import Findings
from ...options import human_bytes
from ...result import FAIL, WARN
from ...shared import rdma
from .loopback import on_loopback
from .nogdr import no_gdr_by_design
from .ofirdma import beyond_uverbs, ofi_rdma


def job_env(facts: NcclFacts) -> dict[str, str]:
    """The job's NCCL_* variables: as recorded, else as NCCL's log says it read them (`... set by environment to`)."""
    return {**((facts.get("nccl_log") or {}).get("env") or {}), **(facts.get("nccl_env") or {})}


def switched_on(env: dict[str, str], names: Iterable[str]) -> list[str]:
    """Those of `names` the job set to anything but empty or 0 (a feature or mode switched on)."""
    return [k for k in names if str(env.get(k, "")).strip() not in ("", "0")]


def _quoted(log: NcclLog) -> str:
    lines = log.get("proof") or []
    return (": NCCL logged " + " | ".join(f"`{line}`" for line in lines[:4])) if lines else ""


def _efa_cause(facts: NcclFacts, log: NcclLog) -> tuple[Owner, str] | None:
    """On EFA the net plugin is the way to the fabric: missing, it is the image's; found but on provider tcp, the
    container's devices (job) or the image's libfabric; libfabric's EFA device that cannot reach GPU memory is the
    host's (rdma.EFA_GPU_MEMORY)."""
    if efa_without_gpu_memory(log):
        return "host", "the EFA device cannot reach GPU memory, so aws-ofi-nccl cannot carry CUDA buffers over it: " \
                       "the host's EFA driver, nvidia-peermem or dma-buf (the node's image)" + _quoted(log)
    if log.get("plugin_missing") or not (log.get("plugin_loaded") or log.get("ofi_provider")):
        return "image", "no aws-ofi-nccl net plugin (libnccl-net.so) in the image" + _quoted(log)
    if log.get("ofi_provider") not in (None, "efa"):
        if facts.get("uverbs"):
            return "image", f"aws-ofi-nccl chose provider {log.get('ofi_provider')}, not efa, although the container " \
                            "has /dev/infiniband: the image's libfabric has no usable efa provider" + _quoted(log)
        given = "has no /dev/infiniband" if facts.get("uverbs") == [] else "was not shown to have /dev/infiniband"
        return "job", f"aws-ofi-nccl chose provider {log.get('ofi_provider')}, not efa: the container {given} " \
                      "(`--device /dev/infiniband/uverbs0 ...`)" + _quoted(log)
    return None


def efa_without_gpu_memory(log: NcclLog) -> bool:
    """Whether libfabric's EFA provider said it cannot reach GPU memory: in `ofi_error`, or among the deciding lines
    a record quotes (`proof`: a translation by the letter of FACTS.md before `ofi_error` held libfabric's line)."""
    return any(rdma.EFA_GPU_MEMORY.search(str(line)) for line in [log.get("ofi_error"), *(log.get("proof") or [])])


def _fallback_cause(facts: NcclFacts, log: NcclLog) -> tuple[Owner, str]:
    """Who owns NCCL's fall-back to sockets: the job's variables, the image's userspace, the job's devices, or
    (only when verbs load and the devices are there) the host."""
    env = job_env(facts)
    if env.get("NCCL_IB_DISABLE") == "1" or str(env.get("NCCL_NET", "")).lower() == "socket":
        return "job", "the job disabled it (" + ", ".join(f"{k}={env[k]}" for k in ("NCCL_IB_DISABLE", "NCCL_NET")
                                                           if k in env) + ")"
    hca, names = env.get("NCCL_IB_HCA"), [str(a.get("name")) for a in facts.get("adapters") or []]
    if hca and names and not rdma.hca_matches(str(hca), names):
        return "job", f"NCCL_IB_HCA={hca} matches none of the adapters ({', '.join(names)})"
    # on EFA the plugin comes first, verbs after; aws-ofi-nccl's own provider line shows the node is meant for EFA
    # (a provider of another RDMA fabric, cxi or verbs, is no sign of EFA: ofirdma.py)
    efa = _efa_cause(facts, log) if facts.get("efa") or (log.get("ofi_provider") and not ofi_rdma(log.get("ofi_provider"))) \
        or efa_without_gpu_memory(log) else None
    if efa:
        return efa
    if log.get("verbs_missing") or facts.get("verbs_loads") is False:
        return "image", "the image lacks libibverbs (install libibverbs1, ibverbs-providers)" + _quoted(log)
    if facts.get("uverbs") == []:
        return "job", "the container was given no /dev/infiniband (`--device /dev/infiniband`)" + _quoted(log)
    ports = [p for a in facts.get("adapters") or [] for p in a.get("ports") or []]
    if ports and not any(str(p.get("state") or "").upper().endswith("ACTIVE") for p in ports):
        # src/transport/net_ib.cc (v2.24.3-1 l.605) skips ports not IBV_PORT_ACTIVE: all down reads "No device found"
        return "host", f"none of the host's {len(ports)} RDMA port(s) is ACTIVE" + _quoted(log)
    if log.get("ib_no_device") and facts.get("uverbs"):
        return "image", f"the container has {', '.join(facts.get('uverbs') or [])} but NCCL found no IB device: the " \
                        "image lacks the adapter's verbs provider (ibverbs-providers)" + _quoted(log)
    if log.get("ib_no_device"):
        # libibverbs loaded (no "Failed to open" line) yet lists no device beside a host with adapters: most often
        # the container was not given /dev/infiniband; a missing provider is the other cause (`--checks fabric`).
        return "job", "libibverbs loaded but NCCL found no IB device: the container was not shown to have " \
                      "/dev/infiniband (or the image lacks the adapter's provider; `--checks fabric` tells)" + _quoted(log)
    return "host", ("libibverbs loads and the container has the devices, yet NCCL chose sockets"
                    if facts.get("verbs_loads") and facts.get("uverbs") else "NCCL did not find a usable HCA") + _quoted(log)


# NCCL's socket transport listing its interfaces (`NET/Socket : Using [0]ib0:...`): NCCL brings it up only after
# the net plugin and its IB transport gave no device (src/net.cc, netGetState in order, from 2.5 on; 2.4's bootstrap
# printed the same words, so the line alone is no choice)
_SOCKET_UP = re.compile(r"NET/Socket ?: ?Using \[")


def _verbs_gone_to_socket(log: NcclLog) -> bool:
    """libibverbs not loadable, no net plugin carrying the traffic, and NCCL's socket transport brought up: IB could
    not be NCCL's network, so the socket transport is, whether or not a `Using network` line is quoted."""
    return bool(log.get("verbs_missing")) and not (log.get("plugin_loaded") or log.get("ofi_provider")) \
        and any(_SOCKET_UP.search(str(line)) for line in log.get("proof") or [])


def _fell_back(log: NcclLog) -> str | None:
    """`Socket` when any rank chose it; `Libfabric over <provider>` when aws-ofi-nccl runs on a provider not efa."""
    if "Socket" in (log.get("networks") or [log.get("network") or ""]) or "Socket" in (log.get("net_channels") or {}) \
            or (not log.get("networks") and _verbs_gone_to_socket(log)):
        return "NET/Socket"             # the choice, or (no `Using network` line) the connections or the transport
    # the provider is the network's only where aws-ofi-nccl carries the traffic: a plugin that failed its init
    # (NCCL then runs its own IB transport: `Using network IB`) moved nothing over it
    nets = _networks(log)
    # a provider of another RDMA fabric (cxi: Slingshot; verbs; psm3) is that fabric in use, not sockets (ofirdma.py)
    if log.get("ofi_provider") not in (None, "efa") and not ofi_rdma(log.get("ofi_provider")) \
            and not (nets and all(_verbs_net(n) for n in nets)):
        return f"{log.get('network') or 'Libfabric'} over provider {log['ofi_provider']} (TCP)"
    return None


def _efa_unreachable(log: NcclLog) -> str | None:
    """On an EFA node, a net plugin NCCL could not load and nothing else chosen: NCCL's own IB transport opens no
    EFA device (no RC queue pairs), so sockets are all it has between nodes, whether or not the log goes on to say
    `Using network Socket`. A plugin that loaded, a provider chosen or a network named decide instead."""
    if not log.get("plugin_missing") or log.get("plugin_loaded") or log.get("ofi_provider") or _networks(log) \
            or log.get("net_channels"):
        return None
    return "NET/Socket (no net plugin loaded, and NCCL reaches EFA only through one)"


def gdr_summary(log: NcclLog) -> tuple[int, int]:
    """(connections over NCCL's IB transport or the HPC-X IBext plugin, how many of them carry /GDRDMA)."""
    rows = [row for name, row in (log.get("net_channels") or {}).items() if _verbs_net(name)]
    return sum(int(r.get("connections") or 0) for r in rows), sum(int(r.get("gdr") or 0) for r in rows)


def _networks(log: NcclLog) -> list[str]:
    """The networks NCCL's ranks chose (`Using network ...`), or the one the record names."""
    return log.get("networks") or ([str(log["network"])] if log.get("network") else [])


def _verbs_net(name: str) -> bool:
    """NCCL's internal IB transport ("IB") or the verbs plugins named after it ("IBext", "IBext_v8")."""
    return name == "IB" or name.startswith("IBext")


GDR_OFF_LEVELS = ("LOC", "0")


def gdr_unused(facts: NcclFacts, found: Findings) -> None:
    """NCCL over IB/RoCE with not one connection on GPUDirect RDMA: every byte is staged through host memory
    (NVIDIA/nccl#1412: enabling it took 33 to 93 GB/s). One GPU far from every NIC can explain it: a warning."""
    log: NcclLog = facts.get("nccl_log") or {}
    connections, gdr = gdr_summary(log)
    hcas = log.get("hca_gdr") or {}
    nets = _networks(log)
    # NCCL asks an HCA about GPUDirect RDMA only as its IB transport brings it up: the line alone shows IB in use,
    # unless the log shows every rank on another network
    if hcas and not any(hcas.values()) and (not nets or any(_verbs_net(n) for n in nets)):
        why = f"NCCL found GPUDirect RDMA disabled for every HCA ({', '.join(sorted(hcas))})"
    elif connections and not gdr:
        why = f"none of NCCL's {connections} IB/RoCE connection(s) used GPUDirect RDMA (no /GDRDMA on any `via NET/IB` line)"
    else:
        return
    if no_gdr_by_design(facts):
        return              # staging through host memory is this GPU's only way (nogdr.py): nothing to load or fix
    level = str(job_env(facts).get("NCCL_NET_GDR_LEVEL", "")).upper()
    if level in GDR_OFF_LEVELS:      # NCCL's environment documentation: LOC (0) never uses GPUDirect RDMA
        found.add(WARN, "FABRIC_GDR_OFF", f"{why}: the job's NCCL_NET_GDR_LEVEL={level} turns it off",
                  "Unset NCCL_NET_GDR_LEVEL (or set it to PHB/SYS) in the job.", "job")
        return
    found.add(WARN, "FABRIC_GDR_OFF", why, "Load nvidia_peermem on the host (or use dma-buf: open GPU kernel module, "
              "kernel 5.12+), check ACS is off on bare metal and NCCL_NET_GDR_LEVEL; `--checks fabric` says which is "
              "missing.", "host")


# IPoIB netdevs are named ib<N> or, by systemd's predictable names, ibo<index>, ibs<slot>[f<fn>], ibp<bus>s<slot>
# (ibs85f0, ibp12s0): an InfiniBand adapter
IPOIB = re.compile(r"^ib(?:\d+|[ops]\d+)")
IPOIB_SHOWN = "InfiniBand (NCCL's interface is IPoIB)"


def rdma_shown(facts: NcclFacts, log: NcclLog) -> str | None:
    """Which RDMA fabric the facts or NCCL's own log show on this node (or cluster), or None when neither does: an
    adapter NCCL listed, a rank on a verbs network, or aws-ofi-nccl on provider efa."""
    if facts.get("efa") or log.get("ofi_provider") == "efa" or efa_without_gpu_memory(log):
        return "EFA"
    used = [n for n in log.get("networks") or [] if _verbs_net(n)]
    if facts.get("infiniband") or log.get("hcas") or used or gdr_summary(log)[0]:
        return "InfiniBand/RoCE"
    if IPOIB.match(str(log.get("interface") or "")):
        return IPOIB_SHOWN
    return ofi_rdma(log.get("ofi_provider"))


FALLBACK_REMEDY = ("Check the HCAs (`ibstat`), that the container gets /dev/infiniband and libibverbs (the aws-ofi-nccl "
                   "plugin for EFA), and that NCCL_IB_DISABLE / NCCL_NET do not force sockets; `--checks fabric` names "
                   "the missing piece.")


def net_fallback(facts: NcclFacts, found: Findings) -> None:
    """IB/EFA present but NCCL's network is Socket (or OFI over tcp): across nodes that is 10-100x slower. Where the
    node's adapters are unknown, the log's own reason (no verbs, no device, a disabled transport, no plugin) warns,
    owned by that reason: on a node without adapters sockets are right."""
    log: NcclLog = facts.get("nccl_log") or {}
    kind = rdma_shown(facts, log)
    used = _fell_back(log) or (_efa_unreachable(log) if kind == "EFA" else None)
    if not used or (kind is None and (facts.get("infiniband") is False or facts.get("efa") is False)):
        return
    owner, why = _fallback_cause(facts, log)
    if owner == "job" and _within_one_node(facts, log):
        # the job's own switch-off (NCCL_IB_DISABLE, no devices given) on one node whose ranks meet over P2P or SHM:
        # the network it left carries none of this group's traffic, so it costs nothing here (batch 110)
        return
    if owner == "host" and kind == IPOIB_SHOWN:
        # an IPoIB interface proves InfiniBand for a cause the log itself shows (the job's, the image's); never on
        # its own against the host: an excerpt may leave the reason out (no false drain)
        kind = None
    env = job_env(facts)
    disabled = env.get("NCCL_IB_DISABLE") == "1" or str(env.get("NCCL_NET", "")).lower() == "socket"
    code = "FABRIC_NCCL_FORCED_SOCKET" if disabled else "NCCL_NET_FALLBACK"    # the job's variables did it
    if not disabled and used == "NET/Socket" and on_loopback(facts, log):
        # NCCL's sockets on `lo` join ranks of one host only: no network between nodes fell back (the job's own
        # switch-off of the fabric is still said: FABRIC_NCCL_FORCED_SOCKET)
        return
    if kind is None:
        # the job's own switch-off (NCCL_IB_DISABLE=1, NCCL_NET=Socket) is said whatever device NCCL found (a net
        # plugin that ignores the variable printing `No device found`: batch 149), as on loopback
        if _within_one_node(facts, log) or (not disabled and _no_fabric_shown(facts, log, owner)):
            return
        if owner != "host":
            found.add(WARN, code, f"NCCL used {used}: {why}; whether this node has InfiniBand or EFA "
                      "adapters was not recorded (without them sockets are expected)", FALLBACK_REMEDY, owner)
        return
    nodes = facts.get("nodes")
    status = WARN if nodes == 1 else FAIL
    found.add(status, code, f"{kind} devices are present but NCCL used {used}"
              f"{' across ' + str(nodes) + ' nodes' if nodes and nodes > 1 else ''} "
              f"(interface {log.get('interface') or '?'}): {why}", FALLBACK_REMEDY, owner)


def _no_fabric_shown(facts: NcclFacts, log: NcclLog, owner: str) -> bool:
    """NCCL on sockets where nothing shows this node has a fabric (no adapter, no verbs network, no RDMA plugin, no
    variable naming HCAs): on nodes without RDMA adapters sockets are NCCL's only network, no fall-back, whichever of
    its two lines the cause came from. Two nodes do not change it: Ethernet-only nodes meet over sockets as well
    (batch 149, two-node torchrun on eno3; the two GCP VMs of batch 137).
    - Its built-in IB transport found no device (the job's cause; batch 115: `NET/IB : No device found.` then `Using
      network Socket`, and no error): an error beside it still names the missing device as its cause.
    - libibverbs not loadable (the image's cause, `Failed to open libibverbs.so`): an image without it loses nothing
      there (7 of 8 translators, batches 115 to 277: a workstation, pods of one host, Ethernet-only nodes); an
      adapter, a net provider or an error shown (`none` is proven none) keeps the image's fall-back."""
    if log.get("plugin_loaded") or job_env(facts).get("NCCL_IB_HCA"):
        return False
    if owner == "job" and log.get("ib_no_device"):
        return not facts.get("error")
    if owner == "image" and (log.get("verbs_missing") or facts.get("verbs_loads") is False):
        return not (log.get("ofi_provider") or log.get("hcas") or facts.get("adapters")) \
            and facts.get("error") in (None, "", "none")
    return False


def _within_one_node(facts: NcclFacts, log: NcclLog) -> bool:
    """A group on one node with no connection over sockets logged: its ranks meet over P2P or SHM, so the network NCCL
    chose carries none of its traffic, and no adapter shows there was another to choose."""
    return facts.get("nodes") == 1 and not int(((log.get("net_channels") or {}).get("Socket") or {}).get("connections") or 0)


MEMLOCK_RDMA = 1 << 30      # NCCL registers GiB of buffers per rank (the fabric check's MEMLOCK_FAIL)


def memlock_low(facts: NcclFacts, found: Findings) -> None:
    """A memlock limit below what RDMA registration needs, where the fabric is in use (or NCCL's log shows it)."""
    limit = facts.get("memlock_bytes")
    if not isinstance(limit, int) or isinstance(limit, bool) or limit >= MEMLOCK_RDMA:
        return
    if rdma_shown(facts, facts.get("nccl_log") or {}) is None and not facts.get("uverbs"):
        return
    found.add(FAIL, "FABRIC_MEMLOCK_LOW", f"memlock limit is {human_bytes(limit)} in the container while RDMA is in "
              "use: registering NCCL's buffers fails below about 1 GiB", "Run the container with `--ulimit "
              "memlock=-1` (Slurm: PropagateResourceLimits; Kubernetes: the runtime's default ulimits).", "job")


def not_passed(facts: NcclFacts, found: Findings) -> None:
    """The node has InfiniBand or EFA but the container was given no /dev/infiniband: NCCL cannot reach the fabric
    whatever the image holds (aws-ofi-nccl's `fi_getinfo() ... No data available`, verbs listing no device)."""
    if facts.get("uverbs") != [] or any(f.code in ("NCCL_NET_FALLBACK", "FABRIC_NCCL_FORCED_SOCKET") for f in found.items):
        return
    kind = rdma_shown(facts, facts.get("nccl_log") or {}) or ("RDMA" if facts.get("adapters") else None)
    if kind is None or (beyond_uverbs((facts.get("nccl_log") or {}).get("ofi_provider")) and not facts.get("adapters")):
        return      # Slingshot's cxi (Omni-Path's opx) NICs are no /dev/infiniband device: none missing proves nothing
    one_node = facts.get("nodes") == 1 or on_loopback(facts, facts.get("nccl_log") or {})
    found.add(WARN if one_node else FAIL, "FABRIC_NOT_PASSED", f"the node has {kind} but the container "
              "was given no /dev/infiniband/uverbs*: NCCL cannot use the fabric" + _quoted(facts.get("nccl_log") or {}),
              "Start the container with the devices: `--device /dev/infiniband` (EFA: every /dev/infiniband/uverbs*), "
              "`--ulimit memlock=-1`; Kubernetes: the RDMA/EFA device plugin's resource.", "job")
