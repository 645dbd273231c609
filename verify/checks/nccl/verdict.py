"""The nccl check's judge, pure: the sweep's result checked, a failure's phase and cause (bootstrap, timeout, the
transport), the figures handed to bandwidth.py and the transport findings to transport.py."""
from __future__ import annotations

import re

from ...facts import NONE, UNLIMITED, NcclFacts, SizeRow
from ...figures import (
    BOOL,
    BYTES,
    COUNT,
    LIST,
    MICROSECONDS,
    NET_GBPS,
    NODES,
    OBJECT,
    RANKS,
    STR,
    Each,
    Either,
    Figure,
    Kind,
    Required,
    Rule,
    Unique,
    Unless,
)
from ...findings import Finding, Findings
from ...options import Options, human_bytes
from ...result import FAIL, PASS, SKIP, CheckResult
from ...shared import grouplayout, rdma
from ...shared.cuda_errors import named_without_driver
from ...shared.shmem import nccl_shm_attach
from . import barefail, casualty, customar, flightrec, ofiinval, opname, peeraccess, plugreg, shmbus, shmperm, watchdog
from .bandwidth import bandwidth_figures, nvls_not_used
from .bindaddr import unassigned_verdict
from .collective import PROGRAMS, inconsistent, label, other_collective, plausibility
from .crash import crash_verdict, unplaced_verdict
from .efa import efa_verdict
from .hang import is_timeout
from .hangvars import hang_said, hang_tip
from .impliedworld import implied_world
from .internalerr import INTERNAL, disagreement
from .launchcfg import build_verdict, launch_verdict
from .layers import layers_verdict
from .localcause import memlock_verdict, shm_full_verdict
from .logsaid import no_collective
from .midrun import job_side
from .misuse import misuse_verdict
from .mnnvl import mnnvl_verdict
from .netinit import no_network_verdict
from .nvlssetup import nvls_setup_verdict, nvls_slots_verdict
from .opname import own_mode
from .peergone import bridge_peer, peer_gone_verdict
from .peersocket import fallback_cause
from .qpsetup import set_up_cause
from .rasreport import ras_verdict, window_space_verdict
from .regcap import capacity_verdict
from .settings import retry_budget_cut, setting_cause
from .spawn import ALL_REDUCE, INIT
from .straypeer import stray_verdict
from .transport import gdr_unused, job_env, memlock_low, net_fallback, not_passed, switched_on
from .verbscall import verbs_call_without_errno

SHM_LOW = 512 << 20          # below this NCCL's shared-memory transport is likely starved


ADVICE = ("Rerun with NCCL_DEBUG=INFO to see the transport and where it stops; give the container "
          "--shm-size=2g or --ipc=host (NCCL uses /dev/shm); try NCCL_P2P_DISABLE=1 (broken peer-to-peer) "
          "or NCCL_IB_DISABLE=1; across nodes check NCCL_SOCKET_IFNAME and the firewall.")


WRONG_ADVICE = ("Rerun with NCCL_P2P_DISABLE=1, then NCCL_IB_DISABLE=1, to find the broken transport; drain the node. "
                + ADVICE)
# what verify's nccl-tests reader (verify/explain/nccltests.py) writes as the error of a validation that failed
WRONG_DATA = re.compile(r"(?:_perf|nccl-tests) returned (?:\d+ wrong element|results out of bounds)"
                        r"|Out of bounds values : \d+ FAILED")


def _table(rows: list[SizeRow]) -> list[str]:
    lines = [f"{'size':>12} {'count':>10} {'type':>6} {'redop':>6} {'time(us)':>10} {'algbw(GB/s)':>12} {'busbw(GB/s)':>12} {'#wrong':>7}"]
    lines += [f"{r['size']:>12} {r['count']:>10} {r['type']:>6} {r['redop']:>6} {r['time_us']:>10} {r['algbw']:>12} {r['busbw']:>12} {r['wrong']:>7}" for r in rows]
    return lines


def error_phase(error: str) -> str | None:
    head, sep, _ = error.partition(": ")
    return head if sep and head in (INIT, ALL_REDUCE) else None


def timeout_advice(facts: NcclFacts, settings: bool = True) -> str:
    """Advice for a hang, from what was seen: the job's own settings that hang (unless the caller said them first:
    `settings` False), phase, world, network, /dev/shm, memlock."""
    error, world = facts.get("error") or "", facts.get("world_size") or 0
    log = facts.get("nccl_log") or {}
    tips = [tip] if settings and (tip := hang_tip(facts)) else []
    if error_phase(error) == INIT:
        tips.append("The group never formed: check that every rank can reach MASTER_ADDR:MASTER_PORT, that all "
                    "ranks were started, and the firewall.")
    # ranks all on one node (`nodes` 1) meet over P2P or SHM: NCCL's socket interface is no step of theirs
    multi_node = ("RANK" in (facts.get("mode") or "") or facts.get("rank") is not None) and facts.get("nodes") != 1
    if multi_node and log.get("network") in (None, "Socket") and not (facts.get("nccl_env") or {}).get("NCCL_SOCKET_IFNAME"):
        interface = log.get("interface")
        tips.append(f"NCCL chose {'interface ' + interface if interface else 'its interface itself'}: "
                    "set NCCL_SOCKET_IFNAME to the interface the nodes share.")
    shm = facts.get("shm_bytes")
    if shm is not None and shm < SHM_LOW and world > 1:
        tips.append(f"/dev/shm is only {human_bytes(shm)}: NCCL's shared-memory transport needs more "
                    "(--shm-size=2g or --ipc=host).")
    memlock = facts.get("memlock_bytes")
    if facts.get("infiniband") and isinstance(memlock, int) and memlock < (1 << 30):
        tips.append(f"memlock limit is {human_bytes(memlock)}: InfiniBand needs it unlimited "
                    "(`--ulimit memlock=-1`, or the pod's limits).")
    if not tips or facts.get("backend") == "nccl":
        tips.append("Rerun with NCCL_DEBUG=INFO to see where it stops; try NCCL_P2P_DISABLE=1 (broken peer-to-peer) "
                    "or NCCL_IB_DISABLE=1 to isolate the transport.")
    return " ".join(tips)


ROW_KEYS = ("size", "count", "time_us", "algbw", "busbw", "wrong")


FIGURES: tuple[tuple[str, Rule], ...] = (
    ("sizes", LIST), ("sizes", Unique("size")), ("sizes[]", Required(ROW_KEYS)),
    ("sizes[].size", Figure("B", 1, 2 ** 50, integer=True)), ("sizes[].count", COUNT), ("sizes[].time_us", MICROSECONDS),
    ("sizes[].algbw", Unless("world_size", 1, NET_GBPS)), ("sizes[].busbw", NET_GBPS), ("sizes[].wrong", COUNT), ("world_size", RANKS),
    ("nodes", NODES), ("shm_bytes", BYTES), ("gpus", COUNT),
    ("memlock_bytes", Either(BYTES, Kind(str, (UNLIMITED,)))), ("timeout_s", Figure("s", 0, 86400, lo_open=True)),
    ("init_s", Figure("s", 0, 1e7)), ("nccl_log.transports", Each(STR)), ("gloo_socket_ifname", STR), ("nccl_env", OBJECT),
    ("nccl_log", OBJECT), ("rank", Figure("", 0, 1 << 24, integer=True)), ("backend", Kind(str, ("nccl", "gloo"))),
    ("collective", Kind(str, PROGRAMS)), ("distributed", BOOL), ("nccl_available", BOOL), ("infiniband", BOOL), ("efa", BOOL), ("nvswitch", BOOL),
    ("nccl_log.nvls", BOOL), ("nccl_log.network", STR), ("nccl_log.interface", STR), ("nccl_log.ib_error", STR),
    ("nccl_version", STR), ("device_name", STR), ("error", STR), ("mode", STR), ("verbs_loads", BOOL),
    ("adapters", LIST), ("adapters[]", OBJECT), ("adapters[].ports", LIST), ("adapters[].ports[]", OBJECT),
    ("adapters[].ports[].rate_gbps", Figure("Gb/s", 0, 10_000)), ("uverbs", LIST), ("nccl_log.networks", LIST),
    ("nccl_log.hcas", LIST), ("nccl_log.proof", LIST), ("nccl_log.net_channels", OBJECT),
    ("nccl_log.env", OBJECT), ("nccl_log.rank_networks", OBJECT),
)


def _describe(facts: NcclFacts, result: CheckResult) -> None:
    env = facts.get("nccl_env") or {}
    log = facts.get("nccl_log") or {}
    if facts.get("nccl_version"):
        result.details.append(f"NCCL {facts['nccl_version']}")
    shm, memlock = facts.get("shm_bytes"), facts.get("memlock_bytes")
    result.details.append("environment: " + (" ".join(f"{k}={v}" for k, v in env.items()) or "no NCCL_* variables")
                          + f"; /dev/shm {human_bytes(shm) if shm is not None else '?'}"
                          + f"; memlock {memlock if memlock in (None, UNLIMITED) else human_bytes(int(memlock))}")
    if log:
        result.details.append(f"NCCL chose network {log.get('network') or '?'}, interface {log.get('interface') or '?'}"
                              + (", NVLS" if log.get("nvls") else "")
                              + (f", transports {' '.join(log.get('transports') or [])}" if log.get("transports") else "")
                              + "".join(f"; NET/{name} {row.get('connections')} connection(s), {row.get('gdr')} with GDR"
                                        for name, row in (log.get("net_channels") or {}).items())
                              + (f"; HCAs {' '.join(log.get('hcas') or [])}" if log.get("hcas") else ""))
    elif facts.get("backend") == "gloo":
        result.details.append(f"gloo interface {facts.get('gloo_socket_ifname') or 'default'}")
    if facts.get("rank") is not None:
        result.data.update(rank=facts["rank"])
    # nodes: across nodes the busbw baseline is a floor (an 8-rail fabric is several times it), so a reader of the
    # report tells a ratio past IMPOSSIBLE_RATIO that is no measurement (one node) from one that is (several)
    result.data.update(backend=facts.get("backend"), world_size=facts.get("world_size"), mode=facts.get("mode"),
                       nodes=facts.get("nodes"), sizes=facts.get("sizes") or [])
    result.metric("world_size", facts.get("world_size") or 0, "ranks")
    result.details.append(f"backend {facts.get('backend')}, world size {facts.get('world_size')}: {facts.get('mode')}")


CAUSES = ("NCCL_NET_FALLBACK", "FABRIC_NCCL_FORCED_SOCKET", "FABRIC_NOT_PASSED")


# a receive larger than the peer's matching send (net_socket.cc: `message truncated : receiving 4 bytes instead of 2.
# ... there may be a mismatch in collective sizes or environment settings (e.g. NCCL_PROTO, NCCL_ALGO) between
# ranks`; net_ib.cc: `Message truncated : received N bytes instead of M`): the ranks called different collectives or
# sizes, or set NCCL_* differently: the program's, never the link's
TRUNCATED = re.compile(r"message truncated ?: ?receiv(?:ing|ed) \d+ bytes instead of \d+", re.IGNORECASE)
# ncclInternalError (internalerr.py): NCCL's (or its net plugin's) own bug, or the job's use of a feature NCCL ships
# switched off
# NCCL features off by default that a job switches on (NCCL's environment variables): GPU-initiated networking, CollNet
OPT_IN = ("NCCL_GIN_ENABLE", "NCCL_COLLNET_ENABLE")


def _said(facts: NcclFacts, error: str) -> list[str]:
    """The failure's error and the lines of NCCL's log kept as proof: where a cause is named."""
    return [error, *((facts.get("nccl_log") or {}).get("proof") or [])]


# an IB work completion that failed (its ibv_wc_status, verify/shared/rdma.py): 12/13 the peer or the link never
# acknowledged; 4 (local protection, vendor error 0x81) is GPUDirect RDMA refused on the PCIe path (ACS, IOMMU), the
# node's, and so is its mirror: an access violation event on the responder, remote access or invalid request at the
# requester. 5 (work request flushed) follows another failure and says nothing of its own.
COMPLETION = re.compile(rdma.IB_COMPLETION)
COMPLETION_FLUSHED = 5
# a net plugin's registration refused as invalid (aws-ofi-nccl's RC: -22, TCPXO's INVALID_ARGUMENT): plugreg.py
def _adapter_or_misuse(facts: NcclFacts, said: str, failed: str, error: str,
                       result: CheckResult) -> CheckResult | None:
    """An adapter's verbs error event under the job (the host's), or NCCL refusing the program's use of it (the job's)."""
    completions = list(COMPLETION.finditer(said))
    completion = next((m for m in completions if int(m.group(1)) != COMPLETION_FLUSHED), None)
    if completion is None and completions:
        # only flushed work requests (5): the queue pair had already failed, its first error not in the log; still a
        # transport failure between the nodes, never a program's
        return result.verdict(FAIL, "NCCL_FAILED", f"{failed}: InfiniBand/RoCE work requests were flushed (status 5): "
                              "the connection's queue pair had failed (its first error is not in the log)", "Check the "
                              "link and the GPUDirect RDMA path between the two nodes the line names: `ibstat` on both, "
                              "ACS/IOMMU on the PCIe path, nvidia-peermem; rerun with NCCL_NET_GDR_LEVEL=LOC to tell a "
                              "GPUDirect fault from the link's; NCCL_DEBUG=INFO on every rank shows the first error.",
                              "host")
    if completion and (cut := retry_budget_cut(facts, int(completion.group(1)))):
        return result.verdict(FAIL, "NCCL_FAILED", f"{failed}: an InfiniBand/RoCE work completion failed with status "
                              f"{completion.group(1)}{cut[0]}", cut[1], cut[2])
    if completion:
        return result.verdict(FAIL, "NCCL_FAILED", f"{failed}: an InfiniBand/RoCE work completion failed with status "
                              f"{completion.group(1)} (the peer or the link did not complete it)", "Check the link "
                              "between the two nodes the line names: `ibstat` on both (ports ACTIVE, same rate), the "
                              "switch ports' error counters, PFC/ECN on RoCE, the GID index (NCCL_IB_GID_INDEX) and the "
                              "partition key; `ib_write_bw` between them.", "host")
    if refused := plugreg.REFUSED.search(said):
        return result.verdict(FAIL, "NCCL_FAILED", f"{failed}: the net plugin's memory registration was refused as "
                              f"invalid ({refused.group(0).strip()[:160]}): the image's NCCL, net plugin and its libraries "
                              "do not match (a call or buffer the plugin's release does not take), not the adapter",
                              "Run NCCL and the net plugin (aws-ofi-nccl with its libfabric, a cloud's TCPX/TCPXO "
                              "plugin) of the releases qualified together (the provider's installer, or the image's own "
                              "build of all of them); a pip-installed torch brings its own NCCL.", "image")
    if failing := plugreg.registration_failed(said):        # the plugin's build, not the node (plugreg.py)
        return result.verdict(FAIL, "NCCL_FAILED", f"{failed}: the net plugin's own memory registration failed "
                              f"({failing}): the image's plugin build does not fit the node's driver or NCCL, not the "
                              "adapter", plugreg.REMEDY, "image")
    if event := rdma.IB_ASYNC_ERROR.search(said):
        return result.verdict(FAIL, "NCCL_FAILED", f"{failed}: an RDMA adapter reported an error under the job "
                              f"({event.group(0).strip()})", "Drain the node and check its adapters and links: "
                              "`ibstat`, the switch port's error counters, the cable or transceiver.", "host")
    if truncated := TRUNCATED.search(said):
        return result.verdict(FAIL, "NCCL_FAILED", f"{failed}: a rank received more than its peer sent "
                              f"({truncated.group(0)}): the ranks' collectives, sizes or NCCL_* settings differ: the "
                              "job's", "Make every rank issue the same collectives with the same sizes and dtypes in the "
                              "same order (check uneven batches and pipeline stages' shapes), and set NCCL_PROTO / "
                              "NCCL_ALGO alike on every rank.", "job")
    if bound := unassigned_verdict(facts, said, failed, result):
        return bound            # EADDRNOTAVAIL: the job's address, or the host's own interface (bindaddr.py)
    return misuse_verdict(said, error, failed, result)     # NCCL refused how it was called: the job's (misuse.py)


def _shm_attach(said: str, failed: str, result: CheckResult) -> CheckResult | None:
    """NCCL's SHM transport could not open a peer's segment: the ranks' shared /dev/shm (the job's), or a descriptor
    NCCL misread (size 0: the image's NCCL); never the node's."""
    found = nccl_shm_attach(said)
    if not found:
        return None
    line, size = found
    if size == 0:
        return result.verdict(FAIL, "NCCL_FAILED", f"{failed}: NCCL tried to attach a shared-memory segment of size 0 "
                              f"({line.strip()[:160]}): a descriptor NCCL itself misread, not /dev/shm", "Run a newer NCCL "
                              "in the image (or the NCCL_* switch its release notes give for the bug); report it with the "
                              "NCCL_DEBUG=INFO log.", "image")
    return result.verdict(FAIL, "NCCL_FAILED", f"{failed}: a rank could not open a peer's shared-memory segment "
                          f"({line.strip()[:160]}): the ranks do not share one /dev/shm", "Share /dev/shm between the "
                          "ranks NCCL put on one host (one container, or `--ipc=host`; in a pod, one emptyDir of medium "
                          "Memory at /dev/shm in every container). Ranks on different machines whose containers carry "
                          "the same hostname look like one host to NCCL: give each its own hostname (or NCCL_HOSTID). "
                          "NCCL_SHM_DISABLE=1 works around it, slower.", "job")


def _internal(facts: NcclFacts, said: str, failed: str, error: str, result: CheckResult) -> CheckResult | None:
    """NCCL's internal error is never evidence against the node: the job's where its ring check failed (the ranks
    disagree) or it switched on a feature NCCL ships off, else the image's NCCL or net plugin."""
    differ = disagreement(said)     # its WARN, with or without the internal error's words
    if not differ and not INTERNAL.search(said):
        return None
    env = job_env(facts)
    opted = switched_on(env, OPT_IN)
    if opted:
        return result.verdict(FAIL, "NCCL_FAILED", f"{failed}: {error}; NCCL's internal error under "
                              f"{', '.join(f'{k}={env[k]}' for k in opted)}, a feature the job switched on: the job's",
                              f"Unset {', '.join(opted)} and rerun; the feature needs what NCCL's documentation lists "
                              "for it (its NICs, plugin and versions).", "job")
    if differ:
        return result.verdict(FAIL, "NCCL_FAILED", f"{failed}: {error}; {differ[0]}", differ[1], "job")
    return result.verdict(FAIL, "NCCL_FAILED", f"{failed}: {error}; NCCL's internal error (a bug in NCCL or its net "
                          "plugin, or memory corruption in the program), not the node's", "Run the image's NCCL and net "
                          "plugin at a newer matching release (or the program under compute-sanitizer); report it to "
                          "the NCCL developers with the NCCL_DEBUG=INFO log if it stays.", "image")


def _decided_first(facts: NcclFacts, error: str, said: list[str], over: str, result: CheckResult) -> CheckResult | None:
    """What decides before anything NCCL said: wrong data, or the EFA lines that name the device or the network
    between instances (before NCCL's internal error: the code aws-ofi-nccl hands NCCL for them)."""
    if WRONG_DATA.search(error):
        # nccl-tests' validation found wrong data (a collective other than all-reduce, or no per-size count): the
        # same evidence as wrong elements in the sweep
        return result.verdict(FAIL, "NCCL_WRONG_RESULT", f"{over} returned wrong data: "
                              f"{error}", WRONG_ADVICE)
    failed, text, hung = f"{over} failed: {error}", " | ".join(said), is_timeout(error)
    return launch_verdict(text, failed, result) or capacity_verdict(facts, text, failed, hung, result) or \
        efa_verdict(facts, text, failed, hung, result) or stray_verdict(text, failed, hung, result)


def _cuda_failed(gpu_finding: bool, error: str) -> str:
    """The collective's own code for a CUDA error it failed on (owned by the error's owner): one the gpu check names
    (a kernel's fault, an ECC or NVLink error, a GPU index the process lacks: cuda_errors.py's gpu_finding) is a
    failure whatever timed out beside it (an NCCL EP timeout that trapped the kernel); any other, a hang where the
    error says so."""
    return "NCCL_TIMEOUT" if is_timeout(error) and not gpu_finding else "NCCL_FAILED"


def _failed(facts: NcclFacts, error: str, found: Findings, result: CheckResult) -> CheckResult:
    """A collective that failed or hung: where NCCL's log shows why it left the fabric, that cause owns it."""
    said = _said(facts, error)
    over = opname.over(facts, said)          # the failure's opening words, read once from the log (opname.py)
    if first := _decided_first(facts, error, said, over, result):
        return first
    if refused := (mnnvl_verdict(" | ".join(said), f"{over} failed", result)
                   or nvls_slots_verdict(" | ".join(said), over, error, result)):
        return refused          # before the CUDA catalog: 800 the job's (mnnvl.py), NVLS OOM the switches' (nvlssetup.py)
    # the CUDA error NCCL's failure names (`Cuda failure 'named symbol not found'`, in the error or a line of its
    # log), by the one catalog the gpu check reads, by name or words only: its owner owns the failure
    cuda = named_without_driver(" | ".join(said))
    if cuda:
        # out of memory under its own code; the gpu check's findings fail the collective (_cuda_failed), their owner's
        code = cuda.code if cuda.names_failure else _cuda_failed(cuda.gpu_finding, error)
        return result.verdict(FAIL, code,
                              f"{over} failed on a CUDA error: {error}; {cuda.cause_in(' | '.join(said))}",
                              cuda.fix, cuda.owner)
    if full := (shmperm.shm_refused_verdict(said, over, result) or shm_full_verdict(facts, said, over, result)
                or shmbus.bus_error_verdict(facts, said, over, result)
                or customar.custom_allreduce_verdict(said, over, result)
                or peeraccess.peer_access_verdict(said, over, result)):
        return full             # /dev/shm's mode (the host's), full (the job's), or NCCL's own peer access on GPUs
        # without P2P (the image's), after an engine's own custom all-reduce on them (customar.py)
    if gid := set_up_cause(facts, " | ".join(said)):
        return result.verdict(FAIL, "NCCL_FAILED", f"{over} failed: {error}{gid[0]}",
                              gid[1], gid[2])
    if none := no_network_verdict(facts, " | ".join(said), f"{over} failed: {error}",
                                   found, result):
        return none             # NCCL's invalid usage after no network started: not misuse of a GPU (netinit.py)
    if named := _adapter_or_misuse(facts, " | ".join(said), f"{over} failed", error, result):
        return named
    if attach := (_shm_attach("\n".join(said), f"{over} failed", result)
                  or nvls_setup_verdict(" | ".join(said), over, error, result)):
        return attach           # NVLS set-up's CUDA failure is the NVSwitch fabric's (nvlssetup.py), before job_side
    if side := job_side(" | ".join(said)):
        return result.verdict(FAIL, "NCCL_FAILED", f"{over} failed: {error}; {side[0]}",
                              side[1], "job")
    if pinned := memlock_verdict(facts, said, over, result):
        return pinned
    if shown := crash_verdict(said, over, result, is_timeout(error)) or layers_verdict(said, over, result):
        return shown
    if built := build_verdict(" | ".join(said), error, over, result):
        return built            # no failure named: NCCL's build not fitting the GPU outranks the network it set up
    cause = fallback_cause(found, CAUSES, error, result)
    rails = rdma.mixed_rails(facts.get("adapters"), roce=True) if not cause and not job_env(facts).get("NCCL_IB_HCA") else None
    if rails and is_timeout(error):
        return result.verdict(FAIL, "NCCL_TIMEOUT", f"{over} hung: {error}; the node has "
                              f"RDMA rails ({', '.join(rails)}) beside adapters of another rate or link layer and the "
                              "job sets no NCCL_IB_HCA: NCCL pairs devices that do not reach each other",
                              f"Set NCCL_IB_HCA to the rails (`NCCL_IB_HCA={','.join(rails)}`). "
                              + timeout_advice(facts), "job")
    # a socket to this host's own bridge outranks a fall-back beside it: the job's interface list (peergone.py)
    setting = setting_cause(facts, error, error_phase(error)) if not cause or bridge_peer(facts, error) else None
    if setting:
        why, remedy, whose = setting
        return result.verdict(FAIL, "NCCL_TIMEOUT" if is_timeout(error) else "NCCL_FAILED",
                              f"{over} {'hung' if is_timeout(error) else 'failed'}: {error}{why}",
                              remedy, whose)
    return _unnamed(facts, said, error, cause, over, result)


def _unnamed(facts: NcclFacts, said: list[str], error: str, cause: Finding | None, over: str,
             result: CheckResult) -> CheckResult:
    """No error of a known owner: the cause NCCL's log shows (a fall-back), NCCL's internal error, or no owner."""
    shown = f"; NCCL's log shows the cause: {cause.text}" if cause else ""
    if not cause and (lost := casualty.peer_casualty(error)):
        # a peer's failure seen from this rank: the job's to read (nothing shows the node at fault: no drain)
        return result.verdict(FAIL, "NCCL_FAILED", f"{over} failed: {error}; this rank's proxy "
                              f"lost a peer ({lost}): the cause is in another rank's log",
                              casualty.REMEDY, "job")
    if not cause and (store := casualty.store_verdict(error, over, result)):
        return store                # the c10d store's server gone: seen from this rank, the job's to read
    if not cause and not is_timeout(error) and (gone := peer_gone_verdict(error, over, result)):
        return gone                 # a socket the peer ended, no cause of this node's: the job's (peergone.py)
    if not cause and (ras := ras_verdict(error, over, is_timeout(error), result) or flightrec.desync_verdict(
            error, over, result) or window_space_verdict(" | ".join(said), over, result)):
        return ras                  # RAS naming processes lost, a desync (the job's), its window space full (rasreport.py)
    if not cause and (refused := ofiinval.einval_verdict(" | ".join(said), f"{over} failed", is_timeout(error), result)):
        return refused          # the net plugin's call refused as invalid, nothing against the node: the job's
    # the internal error is what NCCL said last; a cause its log or the job's settings name comes first
    if not cause and (internal := _internal(facts, " | ".join(said), f"{over} failed", error, result)):
        return internal
    owner = cause.owner if cause else None
    if owner is None and not own_mode(facts.get("mode")) and watchdog.hung(error):
        # torch's watchdog in a job's own log, in any of its wordings (watchdog.py; this verify's runs record how their
        # group formed): a collective some rank never joined, and nothing recorded shows the node at fault; a node is
        # drained only on evidence
        tip = hang_tip(facts)       # the job's own setting that hangs, first (hangvars.py)
        return result.verdict(FAIL, "NCCL_TIMEOUT", f"{over} in the job hung: {error}{hang_said(facts)}; nothing "
                              "recorded shows the node at fault", (f"{tip} If it still hangs: " if tip else "")
                              + "Find the rank that never joined it (torch's flight "
                              "recorder: TORCH_NCCL_TRACE_BUFFER_SIZE; TORCH_NCCL_DESYNC_DEBUG=1) and read its own log; a "
                              "node at fault shows there or in its kernel log (Xids): run `verify` on that node. "
                              + timeout_advice(facts, tip is None), "job")
    if is_timeout(error):
        remedy = timeout_advice(facts)
        return result.verdict(FAIL, "NCCL_TIMEOUT", f"{over} hung: {error}{shown}",
                              f"{cause.remedy} {remedy}" if cause else remedy, owner)
    if not cause and (barefail.bare(error) or verbs_call_without_errno(error) or watchdog.only_watchdog(error)) and not (
            own_mode(facts.get("mode")) and barefail.cuda_class(error)):
        # the error's class alone shows no cause (torch's watchdog failure line alone is one: watchdog.py): the job's
        # to read, never a drain. This verify's own all-reduce is no job's program: a CUDA call failing under it keeps
        # the node's owner
        owner = "job"
        if call := verbs_call_without_errno(error):
            shown = f"; NCCL names the verbs call ({call}) and no errno: no cause shown (the launch's ulimit -l first)"
    elif not cause and (crashed := unplaced_verdict(said, over, result, False)):
        return crashed              # a segmentation fault, no frame shown: the image's software, never a drain
    return result.verdict(FAIL, "NCCL_FAILED", f"{over} failed: {error}{shown}",
                          f"{cause.remedy} {ADVICE}" if cause else ADVICE, owner)


def _no_bandwidth(facts: NcclFacts, rows: list[SizeRow], span: str, result: CheckResult) -> CheckResult:
    """Right data over ranks that measure no bandwidth: one rank (nothing crossed a link), or ranks not recorded (a
    figure that crossed unknown ranks is no bandwidth, and no pass either)."""
    if facts.get("world_size") is None:
        return result.not_judged(f"{len(rows)} sizes {span} returned the right values, but the world size is not "
                                 "recorded: the bandwidth is not assessed", "Give the table with its `#  Rank ...` "
                                 "device lines (or the launch line: mpirun -np N ... -g G).")
    init, what = facts.get("init_s"), label(facts.get("collective"), facts)
    return result.verdict(SKIP, "NCCL_SINGLE_RANK", f"{facts.get('backend')} initialised"
                          f"{f' in {init:g} s' if isinstance(init, (int, float)) else ''} and the {what} on "
                          f"1 rank returned the right values over {len(rows)} sizes {span}; nothing crossed a link, "
                          "so no bandwidth was measured (busbw is 0 at world size 1)")


def judge(facts: NcclFacts, options: Options) -> CheckResult:
    result = CheckResult("nccl", PASS, "")
    if facts.get("distributed") is False:
        return result.verdict(FAIL, "DISTRIBUTED_UNAVAILABLE", "torch.distributed is not available in this build",
                              "Use an official torch wheel (built with distributed support).")
    backend, world, rows = facts.get("backend"), facts.get("world_size"), facts.get("sizes")
    _describe(facts, result)
    found = Findings()
    net_fallback(facts, found)
    not_passed(facts, found)
    memlock_low(facts, found)
    gdr_unused(facts, found)
    nvls_not_used(facts, found)
    error = facts.get("error") if facts.get("error") != NONE else None
    contradiction = grouplayout.contradiction(facts)
    if contradiction:
        return result.verdict(FAIL, "MEASUREMENT_INVALID", f"the facts contradict each other: {contradiction}",
                              "Record the check again.")
    if rows is None and not error and (built := build_verdict(" | ".join(_said(facts, "")), None, opname.over(facts, []), result)):
        return built            # NCCL's build does not fit the GPU: its first collective cannot launch
    if rows is None and not error:
        return no_collective(facts, found, result)
    if error or not rows:
        return _failed(facts, error or "no result", found, result)
    rows, collective = sorted(rows, key=lambda r: r["size"]), facts.get("collective")
    if contradicts := inconsistent(rows, world, collective):
        return result.verdict(FAIL, "MEASUREMENT_INVALID", f"the collective's figures contradict each other: {contradicts}",
                              "Rerun the check; figures that do not add up are no measurement.")
    wrong = sum(r["wrong"] for r in rows)
    if world is None and (world := implied_world(rows, collective, facts.get("nodes"))) is not None:
        facts = {**facts, "world_size": world}
        result.details.append(f"world size {world}: implied by busbw = algbw x 2(n-1)/n on every row (impliedworld.py)")
    result.details += _table(rows)
    result.metric("wrong", wrong, "elements")
    if world != 1:           # one rank moves nothing: its "algbw" is size over a kernel launch, no bandwidth
        result.metric("busbw_max", max(r["busbw"] for r in rows), "GB/s")
        result.metric("algbw_max", max(r["algbw"] for r in rows), "GB/s")
    lo, hi = rows[0]["size"], rows[-1]["size"]
    span = f"{lo >> 20}-{hi >> 20} MiB" if lo >= 1 << 20 else f"{human_bytes(lo)}-{human_bytes(hi)}"
    verified = f"{label(collective, facts)} verified over {backend}, world size {world}, {len(rows)} sizes {span}"
    if wrong:
        return result.verdict(FAIL, "NCCL_WRONG_RESULT", f"{label(collective, facts)} over {backend} returned {wrong} wrong "
                              "element(s)", WRONG_ADVICE)
    if world is None or world == 1:
        return _no_bandwidth(facts, rows, span, result)
    if backend != "nccl":
        gpus = facts.get("gpus") or 0
        no_gpu = "no GPU visible" if gpus == 0 else "NCCL is not available in this torch build"
        status = FAIL if options.expect_gpus > 0 else SKIP
        return result.verdict(status, "NCCL_NOT_EXERCISED" if gpus == 0 else "DISTRIBUTED_UNAVAILABLE",
                              f"{no_gpu}: NCCL not exercised; {verified}",
                              "Run on a GPU node (`docker run --gpus all`); the gpu check says why none is visible.",
                              "job" if gpus == 0 else "image")
    if other_collective(collective):    # verify's baselines are all-reduce busbw figures: plausibility only
        return found.apply(result, plausibility(facts, rows, verified, result, found))
    return found.apply(result, bandwidth_figures(facts, rows, verified, result, found))
