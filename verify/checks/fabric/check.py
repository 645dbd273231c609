"""fabric: can this container use the node's RDMA fabric (InfiniBand, RoCE, EFA), and who must act if not.

probe() reads the host's adapters (/sys/class/infiniband: driver, model, each port's state, physical state, rate
and link layer), what the container was given (/dev/infiniband/uverbs*, rdma_cm), what the image can load
(libibverbs.so.1, librdmacm.so.1, libfabric.so.1 through ctypes, the providers, ibv_get_device_list() from
inside, libnccl-net*.so plugins), the memlock limit, GPUDirect RDMA readiness and the NCCL variables that keep
NCCL off the fabric. Paths are read under VERIFY_FABRIC_ROOT (default /) so a real listing replays
(verify/shared/rdma.py). judge() is pure. What NCCL itself chose is the nccl check's (its INFO log, verify/checks/nccl/ncclog.py).
"""
from __future__ import annotations

import os
import re
from typing import Any

from ...facts import Adapter, FabricFacts, Port
from ...figures import BYTES, LIST, OBJECT, STR, STRS, Each, Either, Figure, Kind
from ...findings import Findings
from ...options import GiB, Options, human_bytes
from ...result import FAIL, PASS, SKIP, WARN, CheckResult
from ...shared import rdma
from .gdrready import GDR_REMEDY, gdr, plumbing_alone
from .instancetype import judge as instance_type
from .nodevnode import judge as no_verbs_node
from .noprovider import judged_alone, no_provider
from .notgiven import judge as not_given
from .offport import ethernet_off_beside_ib
from .ofi import alone as ofi_alone
from .ofi import lacks_efa
from .ofi import said as ofi_said
from .splitrate import design_rate

LIBRARIES = ("libibverbs.so.1", "librdmacm.so.1", "libfabric.so.1")
LOADED = "loaded"
# The libibverbs provider each kernel driver needs (rdma-core's providers/<name>).
PROVIDER = {"mlx5_core": "mlx5", "mlx4_core": "mlx4", "efa": "efa", "bnxt_en": "bnxt_re", "bnxt_re": "bnxt_re",
            "irdma": "irdma", "ice": "irdma", "rdma_rxe": "rxe", "hns3": "hns", "qede": "qedr", "vmw_pvrdma": "vmw_pvrdma",
            "mana": "mana"}
# The InfiniBand rate a single-port adapter model is rated for (Gb/s): ConnectX-3 FDR to ConnectX-8 XDR.
IB_MAX_GBPS = {"MT4099": 56.0, "MT4103": 56.0, "MT4115": 100.0, "MT4119": 100.0, "MT4121": 100.0, "MT4123": 200.0,
               "MT4129": 400.0, "MT4131": 800.0}
# Every part of a Mellanox/NVIDIA model from the ConnectX-3 on (`MT4099`..., hca_type or `MT<decimal PCI id>`) is
# sold for 10 Gb/s or more (10 GbE, InfiniBand 4X SDR): an active port below it trained at a fall-back speed (mlx5
# reports a 1 GbE link as 2.5 Gb/s, SDR 1X), whatever SKU or switch port it has
RATED_FLOOR_GBPS = 10.0
FLOORED_MODEL = re.compile(r"MT4\d{3,4}")
MEMLOCK_FAIL = 1 * GiB       # NCCL registers GiB of buffers per rank; docker's default (64 KiB / 8 MiB) fails
NCCL_VARS = ("NCCL_IB_DISABLE", "NCCL_NET", "NCCL_IB_HCA", "NCCL_NET_PLUGIN", "NCCL_SOCKET_IFNAME")

FIGURES = (
    ("adapters", LIST), ("adapters[]", OBJECT), ("adapters[].name", STR), ("adapters[].ports", LIST),
    ("adapters[].pci_device", STR), ("adapters[].hca_type", STR),
    ("adapters[].ports[]", OBJECT), ("adapters[].ports[].rate_gbps", Figure("Gb/s", 0, 10_000)),
    ("adapters[].ports[].port", Figure("", 0, 255, integer=True)), ("adapters[].ports[].state", STR),
    ("adapters[].ports[].phys_state", STR), ("adapters[].ports[].link_layer", STR), ("uverbs", STRS),
    ("rdma_cm", Kind(bool)), ("libraries", OBJECT), ("providers", STRS), ("verbs_devices", STRS),
    ("net_plugins", STRS), ("nccl_env", OBJECT), ("peermem", Kind(bool)), ("gpu_module", Kind(str, ("open", "proprietary"))),
    ("kernel", STR), ("verbs_error", STR), ("memlock", Either(BYTES, Kind(str, ("unlimited",)))),
    ("memlock_error", STR), ("ofi_providers", Each(Kind(str, pattern=r"[A-Za-z0-9_]{1,32}"))),
    ("ofi_query", Kind(str, pattern=r"[A-Za-z0-9_]{1,32}")),
    ("instance_type", Kind(str, pattern=r"[A-Za-z0-9_.-]{2,64}")),
)


def probe(options: Options) -> dict[str, Any]:
    base = rdma.root()
    uverbs, rdma_cm = rdma.device_nodes(base)
    libraries, devices, error = {}, None, None
    for name in LIBRARIES:
        lib, why = rdma.load(name)
        libraries[name] = LOADED if lib is not None else why or "not loaded"
        if name == "libibverbs.so.1" and lib is not None:
            devices, error = rdma.verbs_devices(lib)
    limit = rdma.memlock()
    return {"root": base, "adapters": rdma.adapters(base), "uverbs": uverbs, "rdma_cm": rdma_cm,
            "libraries": libraries, "providers": rdma.providers(base), "verbs_devices": devices, "verbs_error": error,
            "memlock": limit, "peermem": rdma.peermem(base), "gpu_module": rdma.gpu_module(base),
            "kernel": rdma.kernel(base), "net_plugins": rdma.net_plugins(base, dict(os.environ)),
            "nccl_env": {k: os.environ[k] for k in NCCL_VARS if k in os.environ}}


def _ports(adapters: list[Adapter]) -> list[tuple[Adapter, Port]]:
    return [(a, p) for a in adapters for p in (a.get("ports") or [])]


def _word(value: object) -> str:
    """`ACTIVE`, and the sysfs spelling `4: ACTIVE` too, compared without case."""
    return str(value).rsplit(":", 1)[-1].strip().lower() if value is not None else ""


# the physical state 0 (`0: <unknown>`, NOP): the driver reported none (a paravirtual adapter); no evidence either way
_UNREPORTED = frozenset({"<unknown>", "unknown", "nop"})


def _down(port: Port) -> bool:
    """A state or a physical state that is known and not ACTIVE / LinkUp (a field the source lacks, or a physical
    state the driver did not report, proves nothing)."""
    state, phys = port.get("state"), port.get("phys_state")
    return (state is not None and _word(state) != "active") or \
        (phys is not None and _word(phys) not in _UNREPORTED and _word(phys) != "linkup")


def _active(port: Port) -> bool:
    return _word(port.get("state")) == "active" and not _down(port)


def _label(adapter: Adapter, port: Port) -> str:
    return f"{adapter.get('name')}:{port.get('port')}"


RAIL_SET = 4     # ports of one model and link layer that make rails: one NIC per GPU or pair (HGX, DGX, cloud GPU nodes)


def _layer(adapter: Adapter) -> str | None:
    layers = {str(p.get("link_layer")) for p in adapter.get("ports") or [] if p.get("link_layer")}
    return layers.pop() if len(layers) == 1 else None


def _group(adapter: Adapter) -> tuple[str | None, str | None]:
    return model(adapter), _layer(adapter)


def _rail_groups(adapters: list[Adapter]) -> set[tuple[str | None, str | None]]:
    """The (model, link layer) of the node's rails: the largest set, RAIL_SET or more, of one known model and link
    layer (a node's two dual-port front-end cards are four ports too, beside its eight rails); none below RAIL_SET."""
    counts: dict[tuple[str | None, str | None], int] = {}
    for a in adapters:
        if None not in (group := _group(a)):
            counts[group] = counts.get(group, 0) + 1
    most = max(counts.values(), default=0)
    return {g for g, n in counts.items() if n == most} if most >= RAIL_SET else set()


def _dark_rails(adapters: list[Adapter], rails: set[tuple[str | None, str | None]]) -> list[Adapter]:
    """Adapters with no port up beside ACTIVE adapters of the same known model: a rail of the node that should carry
    traffic and cannot. Polling (training with no link partner: a cable, optic or switch port fault) always; Disabled
    (turned off by an administrator or, on Ethernet, its netdev) only in a rail set, where it leaves a GPU without
    its NIC, since a lone or second port may be off on purpose. Not a second port on a card whose other port is up
    (an unused port, by design), nor an adapter of another or unknown model (a spare front-end NIC)."""
    up = {model(a) for a in adapters if any(_active(p) for p in a.get("ports") or [])} - {None}
    return [a for a in adapters if model(a) in up and a.get("ports") and not any(_active(p) for p in a["ports"])
            and (any(_word(p.get("phys_state")) == "polling" for p in a["ports"])
                 or (_group(a) in rails and any(_word(p.get("phys_state")) == "disabled" for p in a["ports"])))]


def _front_end(port: Port, adapters: list[Adapter], rails: set[tuple[str | None, str | None]]) -> bool:
    """A port turned off (Disabled) on another fabric than the node's rails, every rail ACTIVE: a front-end or spare
    Ethernet port beside InfiniBand rails (or the reverse) carries none of the GPUs' traffic; off, it is no fault."""
    if _word(port.get("phys_state")) != "disabled" or not port.get("link_layer") or not rails:
        return False
    return str(port.get("link_layer")) not in {layer for _, layer in rails} \
        and all(_active(p) for a in adapters if _group(a) in rails for p in a.get("ports") or [])


def _port_states(adapters: list[Adapter], found: Findings) -> None:
    ports = _ports(adapters)
    rails = _rail_groups(adapters)
    down = [(a, p) for a, p in ports if _down(p) and not _front_end(p, adapters, rails)
            and not ethernet_off_beside_ib(p, [q for _, q in ports])]
    if not down:
        return
    listed = ", ".join(f"{_label(a, p)} {p.get('state') or '?'}/{p.get('phys_state') or '?'}" for a, p in down)
    ib = [p for _, p in ports if p.get("link_layer") == "InfiniBand"]
    # the node's only InfiniBand is down: no port left ACTIVE that is (or, its link layer not shown, may be) InfiniBand
    no_ib_left = bool(ib) and not any(_active(p) for _, p in ports if p.get("link_layer") in ("InfiniBand", None))
    dark = _dark_rails(adapters, rails)
    status = FAIL if len(down) == len(ports) or no_ib_left or dark else WARN
    found.add(status, "FABRIC_PORT_DOWN", f"{len(down)} of {len(ports)} RDMA port(s) not ACTIVE/LinkUp: {listed}"
              + (" (no InfiniBand port of this node is ACTIVE)" if no_ib_left and len(down) < len(ports) else "")
              + (f" ({', '.join(str(a.get('name')) for a in dark)} down beside active {model(dark[0])} adapters: "
                 "a rail with no link)" if dark and len(down) < len(ports) else ""),
              "Check the cable, transceiver and switch port (`ibstat`); for InfiniBand, that a subnet manager runs; "
              "an unused second port of a dual-port card can stay down by design.", "host")


def model(adapter: Adapter) -> str | None:
    """The adapter's model: its hca_type, else Mellanox's from the PCI device id (`MT<decimal id>`: 0x1021 is MT4129);
    None when neither is known, and then no rate is judged against anything."""
    if adapter.get("hca_type"):
        return str(adapter.get("hca_type"))
    device = str(adapter.get("pci_device") or "")
    if re.fullmatch(r"0x10[0-2][0-9a-fA-F]", device):
        return f"MT{int(device, 16)}"
    return f"PCI {device}" if device else None


def _rated(adapter: Adapter, port: Port, peers: dict[tuple[Any, Any], float]) -> tuple[float, str] | None:
    """The rate this port should reach, and why: its best peer of the same model, or the model's rated IB speed.
    Only against the adapter's own model: a port of unknown model has no maximum (a front-end NIC beside rails)."""
    kind = model(adapter)
    if kind is None:
        return None
    best = peers.get((kind, port.get("link_layer")))
    model_max = IB_MAX_GBPS.get(kind)
    single_ib = port.get("link_layer") == "InfiniBand" and len(adapter.get("ports") or []) == 1
    options = [(best, f"other {kind} ports on this node link at {best:g} Gb/s")] if best else []
    if model_max and single_ib and not design_rate(kind, port):
        options.append((model_max, f"a {kind} is rated for {model_max:g} Gb/s InfiniBand"))
    return max(options, key=lambda o: o[0]) if options else None


def _below_floor(adapter: Adapter, port: Port) -> bool:
    kind = model(adapter)
    return bool(kind and FLOORED_MODEL.fullmatch(kind)) and float(port.get("rate_gbps") or 0.0) < RATED_FLOOR_GBPS


def _floor(adapters: list[Adapter], found: Findings) -> list[tuple[Adapter, Port]]:
    """Active ports of a known model below every rate the model is sold for: no SKU or switch port explains them.
    Where no other port of the node is active, the node has no fabric fit for a GPU job: fail; else warn."""
    low = [(a, p) for a, p in _ports(adapters) if _active(p) and p.get("rate_gbps") and _below_floor(a, p)]
    if low:
        alone = len(low) == len([p for _, p in _ports(adapters) if _active(p)])
        found.add(FAIL if alone else WARN, "FABRIC_RATE_DEGRADED", f"{len(low)} active port(s) below every rate "
                  f"their model is sold for ({RATED_FLOOR_GBPS:g} Gb/s): " + "; ".join(
                      f"{_label(a, p)} {model(a)} at {p['rate_gbps']:g} Gb/s" for a, p in low)
                  + " (a link trained at a fall-back speed: 1 GbE reads 2.5 Gb/s)", "Check the cable or transceiver "
                  "and the switch port's speed and auto-negotiation (`ethtool <netdev>`, `mlxlink -d <dev>`).", "host")
    return low


def _rates(adapters: list[Adapter], found: Findings) -> None:
    low = _floor(adapters, found)
    up = [(a, p) for a, p in _ports(adapters) if _active(p) and p.get("rate_gbps") and (a, p) not in low]
    peers: dict[tuple[Any, Any], float] = {}
    for a, p in up:
        key = (model(a), p.get("link_layer"))
        peers[key] = max(peers.get(key, 0.0), float(p.get("rate_gbps") or 0.0))
    slow = []
    for a, p in up:
        rated = _rated(a, p, peers)
        if rated and float(p.get("rate_gbps") or 0.0) < rated[0]:
            slow.append(f"{_label(a, p)} at {p['rate_gbps']:g} Gb/s ({rated[1]})")
    if slow:
        found.add(WARN, "FABRIC_RATE_DEGRADED", f"{len(slow)} active port(s) below the adapter's maximum: "
                  + "; ".join(slow), "Check the cable, transceiver and switch port speed (`ibstat`, `mlxlink -d <dev>`); "
                  "a lower-rated SKU or switch port explains it too.", "host")


def _container(facts: FabricFacts, adapters: list[Adapter], found: Findings) -> None:
    if adapters and facts.get("uverbs") == []:
        names = ", ".join(str(a.get("name")) for a in adapters)
        found.add(FAIL, "FABRIC_NOT_PASSED", f"the host has {len(adapters)} RDMA adapter(s) ({names}) but the container "
                  "has no /dev/infiniband/uverbs*: NCCL can only use TCP sockets",
                  "Give the container the devices: `docker run --device /dev/infiniband --ulimit memlock=-1 --cap-add "
                  "IPC_LOCK` (Slurm: this project's `make slurm` does it; Kubernetes: request the RDMA device "
                  "plugin's resource).", "job")


def _userspace(facts: FabricFacts, adapters: list[Adapter], found: Findings) -> None:
    libs = facts.get("libraries") or {}
    missing = [f"{n} ({libs[n]})" for n in ("libibverbs.so.1", "librdmacm.so.1") if n in libs and libs[n] != LOADED]
    drivers = sorted({str(a.get("driver")) for a in adapters if a.get("driver")})
    providers = facts.get("providers")
    if providers is not None:
        missing += [f"the {PROVIDER[d]} provider for driver {d}" for d in drivers
                    if d in PROVIDER and PROVIDER[d] not in providers]
    opens_none = not missing and facts.get("verbs_devices") == [] and bool(
        facts.get("uverbs") or (adapters and facts.get("uverbs") is None and providers))
    missing += [m for m in [no_provider(facts)] if m and not opens_none]     # libibverbs' own warning
    if opens_none and facts.get("uverbs"):
        missing.append(f"a provider that opens {', '.join(facts.get('uverbs') or [])}: ibv_get_device_list() lists "
                       "no device")
    elif opens_none:
        # the kernel lists the adapters and the image has its providers, yet libibverbs opens none: a provider built
        # for another kernel ABI (rdma-core older or newer than the host's driver); not-passed devices are judged
        # where the container's /dev/infiniband was read (uverbs [])
        said = f" ({facts['verbs_error']})" if facts.get("verbs_error") else ""
        missing.append(f"a provider that opens the {len(adapters)} device(s) the kernel lists: ibv_get_device_list() "
                       f"lists none{said}")
    if missing:
        found.add(FAIL, "FABRIC_USERSPACE_MISSING", "the image cannot use the fabric: missing " + "; ".join(missing),
                  "Install `libibverbs1 ibverbs-providers librdmacm1` in the image (this project's CUDA images carry "
                  "them)" + ("; where they are there, match the image's rdma-core to the host's RDMA driver (a "
                             "provider built for another kernel ABI opens nothing): a newer distro base, or the NIC "
                             "vendor's rdma-core." if opens_none else "."), "image")


def _efa(facts: FabricFacts, adapters: list[Adapter], found: Findings) -> None:
    if not any(a.get("driver") == "efa" for a in adapters):
        return
    libs, missing = facts.get("libraries") or {}, []
    if libs.get("libfabric.so.1", LOADED) != LOADED:
        missing.append(f"libfabric.so.1 ({libs['libfabric.so.1']})")
    if facts.get("providers") is not None and "efa" not in (facts.get("providers") or []):
        missing.append("the efa verbs provider (libefa)")
    missing += [m for m in [lacks_efa(facts, adapters)] if m]      # fi_info without the efa provider
    if facts.get("net_plugins") == []:
        plugin = (facts.get("nccl_env") or {}).get("NCCL_NET_PLUGIN")
        missing.append(f"the aws-ofi-nccl net plugin ({'NCCL_NET_PLUGIN=' + plugin + ' not found' if plugin else 'no libnccl-net*.so'})")
    if missing:
        found.add(FAIL, "FABRIC_EFA_PLUGIN_MISSING", "EFA adapter present but the image lacks " + ", ".join(missing)
                  + ": NCCL falls back to TCP sockets",
                  "Add aws-ofi-nccl and libfabric to the image and point NCCL_NET_PLUGIN at the plugin.", "image")


def _nccl_env(facts: FabricFacts, adapters: list[Adapter], found: Findings) -> None:
    env = facts.get("nccl_env") or {}
    forced = [f"{k}={env[k]}" for k in ("NCCL_IB_DISABLE",) if str(env.get(k, "")).strip() == "1"]
    forced += [f"NCCL_NET={env['NCCL_NET']}" for _ in [0] if str(env.get("NCCL_NET", "")).lower() == "socket"]
    hca = env.get("NCCL_IB_HCA")
    if hca and adapters and not rdma.hca_matches(str(hca), [str(a.get('name')) for a in adapters]):
        forced.append(f"NCCL_IB_HCA={hca} matches none of {', '.join(str(a.get('name')) for a in adapters)}")
    if forced:
        found.add(FAIL, "FABRIC_NCCL_FORCED_SOCKET", "the job keeps NCCL off the fabric: " + "; ".join(forced),
                  "Unset NCCL_IB_DISABLE / NCCL_NET, or make NCCL_IB_HCA name the adapters.", "job")


def memlock_low(limit: Any) -> bool:
    return isinstance(limit, int) and not isinstance(limit, bool) and limit < MEMLOCK_FAIL


def _memlock(facts: FabricFacts, found: Findings) -> None:
    """A memlock limit below what RDMA needs fails. Whose it is: a limit read beside the container's devices is the
    container's (`--ulimit`, the job's); one read on its own (a host's `ulimit -a`, bare metal) is the site's
    (limits.conf, slurmd's LimitMEMLOCK): the host's."""
    limit, failed = facts.get("memlock"), rdma.pinning_failed(facts.get("memlock_error"))
    if memlock_low(limit):
        said = f"memlock limit is {human_bytes(int(limit or 0))}: RDMA registration of NCCL's buffers fails below about 1 GiB"
    elif failed and limit != "unlimited":
        said = (f"RDMA memory registration failed for want of locked memory ({failed}): the limit (or the memory it "
                f"pins) ran out; the limit itself {'was not read' if limit is None else 'reads ' + str(limit)}")
    else:
        return
    inside = facts.get("uverbs") is not None or bool(facts.get("libraries"))
    owner, fix = rdma.memlock_owner(inside)
    found.add(FAIL, "FABRIC_MEMLOCK_LOW", f"{said}; it should be unlimited" if inside else
              f"{said} (read outside a container: the node's own limit)", fix, owner)


def _mixed(facts: FabricFacts, adapters: list[Adapter], found: Findings) -> None:
    """InfiniBand beside Ethernet (RoCE) adapters at another rate, with no NCCL_IB_HCA: NCCL takes every verbs device
    it finds, rings over the slowest (or hangs where the two fabrics do not reach each other)."""
    ib = rdma.mixed_rails(adapters)
    # only against a recorded environment: a listing alone (ibstat pasted, no job) shows no NCCL_IB_HCA either way
    if not ib or facts.get("nccl_env") is None or facts["nccl_env"].get("NCCL_IB_HCA"):
        return
    up = [(a, p) for a, p in _ports(adapters) if _active(p) and p.get("rate_gbps") and p.get("link_layer")]
    other = ", ".join(f"{_label(a, p)} {p.get('link_layer')} {p.get('rate_gbps'):g} Gb/s" for a, p in up
                      if p.get("link_layer") != "InfiniBand")
    found.add(WARN, "FABRIC_MIXED_ADAPTERS",
              f"InfiniBand adapters ({', '.join(ib)}) beside {other}, and NCCL_IB_HCA is not set: NCCL uses every "
              "verbs device it finds", f"Set NCCL_IB_HCA in the job to the InfiniBand rails (`NCCL_IB_HCA={','.join(ib)}`).",
              "job")


def _gdr(facts: FabricFacts, adapters: list[Adapter], found: Findings) -> None:
    verbs = [a for a in adapters if a.get("driver") != "efa"]
    ready, why = gdr(facts)
    if verbs and ready is False:
        found.add(WARN, "FABRIC_GDR_OFF", f"GPUDirect RDMA unavailable: {why}; NCCL stages every transfer through "
                  "host memory", GDR_REMEDY, "host")


def _describe(facts: FabricFacts, adapters: list[Adapter], result: CheckResult) -> None:
    for a, p in _ports(adapters):
        rate_text = f"{p['rate_gbps']:g} Gb/s" if p.get("rate_gbps") is not None else "rate ?"
        result.details.append(f"{_label(a, p)} driver {a.get('driver') or '?'} {a.get('hca_type') or ''} "
                              f"{p.get('link_layer') or '?'} {p.get('state') or '?'}/{p.get('phys_state') or '?'} "
                              f"{rate_text}".replace("  ", " "))
    libs = facts.get("libraries") or {}
    result.details.append("container: uverbs " + (", ".join(facts.get("uverbs") or []) or "none")
                          + f"; rdma_cm {'yes' if facts.get('rdma_cm') else 'no'}")
    result.details.append("image: " + "; ".join(f"{k} {'loads' if v == LOADED else v}" for k, v in libs.items())
                          + f"; providers {' '.join(facts.get('providers') or []) or 'none'}"
                          + f"; net plugins {' '.join(facts.get('net_plugins') or []) or 'none'}")
    devices = facts.get("verbs_devices")
    result.details.append("ibv_get_device_list(): " + (", ".join(devices) if devices else
                                                        "no device" if devices == [] else facts.get("verbs_error") or "not called"))
    limit = facts.get("memlock")
    result.details.append(f"memlock {'unknown' if limit is None else limit if isinstance(limit, str) else human_bytes(limit)}"
                          f"; GPUDirect RDMA: {gdr(facts)[1]}")
    result.details += [line for line in [ofi_said(facts)] if line]
    result.data.update(adapters=len(adapters), ports=len(_ports(adapters)))


def _present(facts: FabricFacts, adapters: list[Adapter]) -> bool:
    return bool(adapters or facts.get("uverbs") or facts.get("verbs_devices"))


# InfiniBand's lane rate per speed word (Gb/s, as ibstat's Rate counts it: 4X HDR is 200, 4X FDR 56) and the widths a
# link trains to: a port's Rate is its lanes times its speed, so a record holding another is no reading (IBTA spec)
LANE_GBPS = {"SDR": 2.5, "DDR": 5.0, "QDR": 10.0, "FDR10": 10.0, "FDR": 14.0625, "EDR": 25.0, "HDR": 50.0,
             "NDR": 100.0, "XDR": 200.0}
WIDTHS = (1, 2, 4, 8, 12)


def _impossible(adapters: list[Adapter]) -> str | None:
    """Facts no listing of a real host holds together: one adapter (or one port of it) listed twice, which counts
    its rate twice; a link width InfiniBand has none of; a rate that is not its width times its speed."""
    names: set[str] = set()
    for a in adapters:
        name = a.get("name") if isinstance(a, dict) else None
        if isinstance(name, str) and name.strip():
            if name.strip().lower() in names:
                return f"adapter {name!r} is listed twice (its ports and rate counted twice)"
            names.add(name.strip().lower())
        numbers: set[int] = set()
        for port in (a.get("ports") or []) if isinstance(a, dict) else []:
            if not isinstance(port, dict):
                continue
            number, width, rate = port.get("port"), port.get("width"), port.get("rate_gbps")
            if isinstance(number, int) and not isinstance(number, bool):
                if number in numbers:
                    return f"{name}: port {number} is listed twice"
                numbers.add(number)
            if width is None or isinstance(width, bool) or not isinstance(width, int):
                continue
            if width not in WIDTHS:
                return f"{name}:{number} width {width}: a link trains to {', '.join(map(str, WIDTHS))} lane(s)"
            lane = LANE_GBPS.get(str(port.get("speed") or "").strip().upper())
            if lane and isinstance(rate, (int, float)) and not isinstance(rate, bool) and rate > 0 \
                    and abs(rate - lane * width) > 0.1 * lane * width:
                return (f"{name}:{number} rate_gbps {rate:g} but {width}X {port.get('speed')} is {lane * width:g} Gb/s "
                        "(the rate is its width times its speed)")
    return None


def _given(facts: FabricFacts) -> str:
    """A pod's own /dev/infiniband (the RDMA device plugin's test pod, `ls -l /dev/infiniband`) listing its verbs
    devices: the container was given them, a pass on that alone; the ports and the image were not read."""
    uverbs = facts.get("uverbs") or []
    cm = " and rdma_cm" if facts.get("rdma_cm") else ", no rdma_cm" if facts.get("rdma_cm") is False else ""
    return (f"the container was given {len(uverbs)} verbs device(s) ({', '.join(uverbs)}){cm}; the ports, the "
            "image's libraries and the memlock limit were not recorded: not assessed")


def _no_listing(facts: FabricFacts, result: CheckResult) -> CheckResult:
    """No adapter, uverbs or verbs listing: the memlock limit or the peer-memory module alone, when they show a fault
    or a sound figure."""
    if memlock_low(facts.get("memlock")) or (rdma.pinning_failed(facts.get("memlock_error"))
                                             and facts.get("memlock") != "unlimited"):
        # a fault shown on its own: judged whatever else is missing
        alone = Findings()
        _memlock(facts, alone)
        return alone.apply(result, "")
    if judged_alone(facts, alone := Findings()):    # libibverbs found a device no provider of the image drives
        return alone.apply(result, "")
    if shown := plumbing_alone(facts, result):   # a figure that bears on a fault, read: the verdict rests on it
        return shown
    if shown := ofi_alone(facts, result):        # fi_info's efa provider answering: the devices are driven
        return shown
    return result.not_judged("neither the host's adapters nor the container's devices were "
                          "read: nothing to judge", "Record the check with `python -m verify --checks fabric "
                          "--save-facts DIR`.")


def judge(facts: FabricFacts, options: Options) -> CheckResult:
    result = CheckResult("fabric", PASS, "")
    if facts.get("adapters") is None and facts.get("uverbs") is None and facts.get("verbs_devices") is None:
        return _no_listing(facts, result)
    adapters = list(facts.get("adapters") or [])
    _describe(facts, adapters, result)
    if contradiction := _impossible(adapters):
        return result.verdict(FAIL, "MEASUREMENT_INVALID", f"the facts contradict each other: {contradiction}",
                              "Record the check again.")
    found = Findings()
    result.details += instance_type(facts, adapters, found)     # a cloud type's adapter count, where it is known
    if not _present(facts, adapters):
        not_given(facts, found)     # a type with adapters, a container with none: the deployment's
        judged_alone(facts, found)  # libibverbs named a kernel verbs device no provider drives: the image's (batch 127)
        return found.apply(result, "") if found.items else result.verdict(
            SKIP, "FABRIC_NONE", "no RDMA device on this node or in this container: fabric not assessed")
    for rule in (_container, _userspace, _efa, no_verbs_node):
        rule(facts, adapters, found)
    _port_states(adapters, found)
    _nccl_env(facts, adapters, found)
    _memlock(facts, found)
    _rates(adapters, found)
    result.details += [f"{_label(a, p)} at {p['rate_gbps']:g} Gb/s: {name}, a design rate of the {model(a)}, not "
                       "judged below its maximum" for a, p in _ports(adapters)
                       if _active(p) and (name := design_rate(model(a), p))]
    _mixed(facts, adapters, found)
    _gdr(facts, adapters, found)
    active = [p for _, p in _ports(adapters) if _active(p)]
    rates = [float(r) for p in active if (r := p.get("rate_gbps")) is not None]
    total = sum(rates)
    if total and len(rates) == len(active):     # a sum over ports of unknown rate would understate the link
        result.metric("link_gbps", total, "Gb/s")
    unknown = len(active) - len(rates)
    speed = (f"{total:g} Gb/s in all" if not unknown else "each at a rate unknown" if not rates
             else f"{total:g} Gb/s on {len(rates)}, {unknown} at a rate unknown")
    ok = (f"{len(adapters)} adapter(s), {len(active)} active port(s), {speed}; the container has "
          f"{len(facts.get('uverbs') or [])} uverbs device(s) and the image lists "
          f"{len(facts.get('verbs_devices') or [])} through libibverbs; GPUDirect RDMA: {gdr(facts)[1]}")
    if facts.get("uverbs") and not facts.get("libraries") and not any(p.get("state") is not None
                                                                        for _, p in _ports(adapters)):
        return found.apply(result, _given(facts))
    if facts.get("uverbs") is None or not facts.get("libraries"):     # a host listing alone (a translated ibstat)
        if not found.items and not any(p.get("state") is not None for _, p in _ports(adapters)):
            return result.not_judged("no port state and no container side recorded: nothing "
                                  "to judge")
        ok = (f"host side: {len(adapters)} adapter(s), {len(active)} active port(s), {speed}, no port down or "
              "slow; the container's devices and the image's libraries were not recorded: not judged")
    return found.apply(result, ok)
