"""`verify explain FILE...`: diagnose what clusters already print. Each file's kind is told from its content (never
its name), parsed by the parser of that kind (one module each) into the facts schema (verify/FACTS.md), and judged
by the same judges as a live run or a replay. Text no parser recognises is said so, never guessed. What pasting and
launchers did to the text (encoding, colours, a terminal's wrap, markdown, per-line prefixes) is undone first, once
for every parser (pasted.py)."""
from __future__ import annotations

import os
import re
import stat
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..checks.gpu.gpuidentity import norm_bus
from . import (
    amdsmi,
    apimismatch,
    autopilot,
    aznhc,
    childfailed,
    collectenv,
    containerrt,
    cuda,
    cudahidden,
    dcgm,
    dcgmcache,
    dcgmdiag,
    dcgmdiscovery,
    dcgmhealth,
    dcgmlinks,
    devib,
    dmon,
    drafabric,
    driverversion,
    eksnma,
    fiinfo,
    fmlog,
    fmstatus,
    frtrace,
    gpuburn,
    gpudfabric,
    gpudrma,
    hosts,
    ib,
    ibcounters,
    ibdevnetdev,
    ibdiagnet,
    iblinkinfo,
    importfail,
    inventory,
    kernel,
    loaderbus,
    lspci,
    miglist,
    migprofiles,
    mlxlink,
    mmcvenv,
    mnnvl,
    nccl,
    ncclbus,
    ncclcrash,
    ncclras,
    nccltests,
    nccltopo,
    nhc,
    nodeib,
    noprovider,
    nvbandwidth,
    nvlinkerrs,
    nvlinks,
    nvlsbind,
    nvml,
    nvmljl,
    nvmllost,
    nvsevent,
    nvtop,
    pasted,
    peermem,
    perftest,
    procinfo,
    pyxis,
    raymem,
    rendezvous,
    rigreport,
    slurmend,
    slurmgres,
    smi,
    smilist,
    smiquery,
    smitable,
    smixml,
    sysfsib,
    toolword,
    topo,
    torcharch,
    torchrepl,
    ulimit,
    verbslist,
    xidrelay,
)

MAX_BYTES = 32 << 20          # a log larger than this is not read whole: the tail holds the failure


@dataclass(frozen=True)
class Kind:
    name: str                 # what the file is, as said in the report
    check: str                # the check whose facts it fills
    detect: Callable[[str], bool]
    parse: Callable[[str], dict[str, Any]]
    # whether the parser reads lines under the launchers' prefixes itself (a kernel log's or a relay's time stamp is
    # its event's time); the others read the tool's bare lines (pasted.bare)
    prefixed: bool = False
    # what the text says that no field of the facts holds (a DCGM incident of the InfoROM): said beside the verdict
    unread: Callable[[str], list[str]] | None = None
    # what the text says that no field holds and that names no fault of the host's (a switch port's errors): said
    # beside the verdict, never raising it
    said: Callable[[str], list[str]] | None = None
    # what to do about what `unread` says: the GPU's tools by default
    remedy: str = ("Read the GPU on the host (`nvidia-smi -q`, `dcgmi diag -r 2`) and act on the tool's own remedy "
                   "for what it reports.")
    # what the tool that printed it says of its own run (a check not installed, a SKU it has no thresholds for): said
    # beside the verdict; where nothing else is read, not assessed with no owner (the tool's trouble is no node's)
    trouble: Callable[[str], list[str]] | None = None
    # a fault the tool itself found and names, no field holding it (NHC's port check): it sets the verdict
    shown: Callable[[str, Any], None] | None = None


# Most specific first: an nvidia-smi -q report may quote a kernel line, an NCCL log may quote ulimit.
KINDS: tuple[Kind, ...] = (
    Kind("nvidia-smi -q -x (XML)", "gpu", smixml.detect, smixml.parse),
    Kind("nvidia-smi -q", "gpu", smi.detect, smi.parse),
    Kind("torch finding no GPU under a CUDA_VISIBLE_DEVICES that names none", "gpu", cudahidden.detect,
         cudahidden.parse),
    Kind("nvidia-smi table", "gpu", smitable.detect, smitable.parse),
    Kind("nvidia-smi --query-gpu CSV", "gpu", smiquery.detect, smiquery.parse),
    Kind("DCGM field values", "gpu", dcgm.detect, dcgm.parse),
    Kind("lspci -vv", "gpu", lspci.detect, lspci.parse),
    Kind("nvidia-smi topo -m", "gpu", topo.detect, topo.parse),
    Kind("NCCL's topology XML (NCCL_TOPO_DUMP_FILE / NCCL_TOPO_FILE)", "gpu", nccltopo.detect, nccltopo.parse),
    Kind("nvidia-smi mig -lgi / -lci", "gpu", miglist.detect, miglist.parse),
    Kind("nvidia-smi mig -lgip (GPU instance profiles)", "gpu", migprofiles.detect, migprofiles.parse),
    Kind("nvidia-smi -mig's pending mode", "gpu", miglist.detect_pending, miglist.parse_pending),
    Kind("nvidia-smi nvlink -s", "gpu", nvlinks.detect, nvlinks.parse),
    Kind("nvidia-smi nvlink -e (error counters)", "gpu", nvlinkerrs.detect, nvlinkerrs.parse),
    Kind("dcgmi nvlink --link-status", "gpu", dcgmlinks.detect, dcgmlinks.parse),
    Kind("dcgmi health", "gpu", dcgmhealth.detect, dcgmhealth.parse, unread=dcgmhealth.unread, said=dcgmhealth.said),
    Kind("NVSentinel's GPU health event (DCGM's health watch, kubectl)", "gpu", nvsevent.detect, nvsevent.parse,
         unread=nvsevent.unread),
    Kind("dcgmi diag", "gpu", dcgmdiag.detect, dcgmdiag.parse, unread=dcgmdiag.unread),
    Kind("the EKS node monitoring agent's hardware condition (DCGM health codes)", "gpu", eksnma.detect, eksnma.parse,
         unread=eksnma.unread),
    Kind("dcgmi discovery -l", "gpu", dcgmdiscovery.detect, dcgmdiscovery.parse),
    Kind("nv-hostengine's cache manager log (DCGM field values stored)", "gpu", dcgmcache.detect, dcgmcache.parse,
         unread=dcgmcache.unread, remedy=dcgmcache.REMEDY),
    Kind("ibstat/ibstatus/ibv_devinfo", "fabric", ib.detect, ib.parse, unread=ib.unread, remedy=ib.REMEDY),
    Kind("/sys/class/infiniband dump", "fabric", sysfsib.detect, sysfsib.parse),
    Kind("node_exporter's InfiniBand series (node_infiniband_*)", "fabric", nodeib.detect, nodeib.parse),
    Kind("ls -l /dev/infiniband, or a device plugin's AllocateResponse (a container's RDMA devices)", "fabric",
         devib.detect, devib.parse),
    Kind("libibverbs with no provider configured (ibv_devinfo)", "fabric", verbslist.detect, verbslist.parse),
    Kind("libibverbs finding no provider for a verbs device", "fabric", noprovider.detect, noprovider.parse),
    Kind("NHC check_hw_ib", "fabric", nhc.detect, nhc.parse, prefixed=True, unread=nhc.unread, trouble=nhc.trouble,
         shown=nhc.shown, remedy=nhc.REMEDY),
    Kind("iblinkinfo (the fabric's links)", "fabric", iblinkinfo.detect, iblinkinfo.parse, unread=iblinkinfo.unread,
         said=iblinkinfo.said, remedy=iblinkinfo.REMEDY),
    Kind("ibqueryerrors / ibcheckerrors (the fabric's error counters)", "fabric", ibcounters.detect, ibcounters.parse,
         unread=ibcounters.unread, said=ibcounters.said, remedy=iblinkinfo.REMEDY),
    Kind("ibdiagnet (the fabric's diagnostic report)", "fabric", ibdiagnet.detect, ibdiagnet.parse,
         unread=ibdiagnet.unread, said=ibdiagnet.said, remedy=iblinkinfo.REMEDY),
    Kind("Azure NHC's GPU checks (azurehpc-health-checks)", "gpu", aznhc.detect_gpu, aznhc.parse_gpu, prefixed=True,
         unread=aznhc.unread_gpu, trouble=aznhc.trouble_gpu, remedy=aznhc.REMEDY_GPU),
    Kind("Azure NHC's NCCL all-reduce checks (azurehpc-health-checks)", "nccl", aznhc.detect_nccl, aznhc.parse_nccl,
         prefixed=True, unread=aznhc.unread_nccl, trouble=aznhc.trouble_nccl, remedy=aznhc.REMEDY_NCCL),
    Kind("Azure NHC's InfiniBand checks (azurehpc-health-checks)", "fabric", aznhc.detect_fabric, aznhc.parse_fabric,
         prefixed=True, unread=aznhc.unread_fabric, trouble=aznhc.trouble_fabric, remedy=aznhc.REMEDY_FABRIC),
    Kind("ulimit -a / a verbs memlock message", "fabric", ulimit.detect, ulimit.parse),
    Kind("the peer-memory module (lsmod, modprobe, its kernel lines)", "fabric", peermem.detect, peermem.parse,
         prefixed=True),
    Kind("perftest's port check (ib_write_bw ...)", "fabric", perftest.detect, perftest.parse),
    Kind("ibdev2netdev -v (the RDMA ports' own states)", "fabric", ibdevnetdev.detect, ibdevnetdev.parse),
    Kind("mlxlink -d <dev> (a port's operational state)", "fabric", mlxlink.detect, mlxlink.parse),
    Kind("amd-smi's NIC report (its RDMA devices' port states)", "fabric", amdsmi.detect, amdsmi.parse),
    Kind("kernel log (NVRM Xid)", "gpu", kernel.detect, kernel.parse, prefixed=True),
    Kind("NVIDIA Fabric Manager log (NVSwitch SXid errors)", "gpu", fmlog.detect, fmlog.parse, prefixed=True),
    Kind("Xid events relayed (device plugin, DCGM)", "gpu", xidrelay.detect, xidrelay.parse, prefixed=True),
    Kind("nccl-tests output", "nccl", nccltests.detect, nccltests.parse),    # its NCCL lines are read with it
    Kind("a segmentation fault in NCCL (its backtrace)", "nccl", ncclcrash.detect, ncclcrash.parse),
    Kind("a bus error in NCCL (its backtrace)", "nccl", ncclbus.detect, ncclbus.parse),
    Kind("NCCL's NVLS multicast bind failure", "nccl", nvlsbind.detect, nvlsbind.parse),
    Kind("NCCL's RAS report (ncclras: text, JSON, monitor events)", "nccl", ncclras.detect, ncclras.parse),
    Kind("torch's Flight Recorder analysis (torchfrtrace)", "nccl", frtrace.detect, frtrace.parse),
    Kind("NCCL INFO log", "nccl", nccl.detect, nccl.parse),
    Kind("NCCL's MNNVL fabric probe (NVML's fabric info per GPU)", "gpu", mnnvl.detect, mnnvl.parse, prefixed=True),
    Kind("NVML initialisation or handle error", "gpu", nvml.detect, nvml.parse),
    Kind("the NVIDIA kernel module's version (/proc/driver/nvidia/version)", "gpu", driverversion.detect,
         driverversion.parse),
    Kind("a program's NVML query answered GPU is lost", "gpu", nvmllost.detect, nvmllost.parse),
    Kind("a container engine's GPU request refused (no NVIDIA runtime)", "gpu", containerrt.detect, containerrt.parse),
    Kind("CUDA initialisation error", "gpu", cuda.detect, cuda.parse),
    Kind("CUDA error of a running program", "gpu", cuda.detect_runtime, cuda.parse_runtime),
    Kind("nvbandwidth output", "gpu", nvbandwidth.detect, nvbandwidth.parse),
    Kind("IBM Autopilot's PCIe bandwidth check (its daemon's log)", "gpu", autopilot.detect, autopilot.parse),
    Kind("gpu_burn's run", "gpu", gpuburn.detect, gpuburn.parse, unread=gpuburn.unread),
    Kind("torch's warning of a GPU not in its build", "gpu", torcharch.detect, torcharch.parse),
    Kind("a DataLoader worker killed (out of /dev/shm, or by a signal)", "train", loaderbus.detect, loaderbus.parse),
    Kind("torch.distributed.elastic's failure summary (ChildFailedError, rendezvous)", "train", childfailed.detect,
         childfailed.parse),
    Kind("a container pyxis/enroot could not start (slurmstepd's pyxis lines)", "train", pyxis.detect, pyxis.parse),
    Kind("Slurm's account of a job's or step's end (slurmstepd, srun)", "train", slurmend.detect, slurmend.parse),
    Kind("Ray's memory monitor killing workers for host RAM", "train", raymem.detect, raymem.parse,
         prefixed=True),      # as printed: a wrapped line keeps the space before its break
    Kind("a program dying at import or start on its package set (a library, torchvision's ops)", "train",
         importfail.detect, importfail.parse),
    Kind("NVML's clock event reasons from Julia (CUDA.jl's NVML.clock_event_reasons)", "gpu", nvmljl.detect,
         nvmljl.parse),
    Kind("torch's answers at a Python prompt", "gpu", torchrepl.detect, torchrepl.parse),
    Kind("nvidia-smi -L", "gpu", smilist.detect, smilist.parse),
    Kind("/proc/driver/nvidia/gpus/*/information", "gpu", procinfo.detect, procinfo.parse),
    Kind("nvidia-smi dmon", "gpu", dmon.detect, dmon.parse),
    Kind("nvtop's device lines", "gpu", nvtop.detect, nvtop.parse),
    Kind("a GPU rig report (club-3090's markdown)", "gpu", rigreport.detect, rigreport.parse),
    Kind("torch's collect_env report", "gpu", collectenv.detect, collectenv.parse),
    Kind("an OpenMMLab-style environment report (sglang's check_env)", "gpu", mmcvenv.detect, mmcvenv.parse),
    Kind("a GPU health tool's row remapping not supported (GPUd's RMA check)", "gpu", gpudrma.detect, gpudrma.parse),
    Kind("the DRA driver's NVLink fabric read (ComputeDomain plugin)", "gpu", drafabric.detect, drafabric.parse),
    Kind("a GPU health tool's NVLink fabric state (GPUd's fabric-manager check)", "gpu", gpudfabric.detect,
         gpudfabric.parse),
    Kind("slurmd's GPUs autodetected through NVML", "gpu", slurmgres.detect, slurmgres.parse),       # names and UUIDs alone: after the rest
    # a service's state and a provider listing: after every reading of the GPUs and adapters themselves
    Kind("the NVIDIA Fabric Manager service (systemctl status, its journal)", "gpu", fmstatus.detect, fmstatus.parse,
         prefixed=True),
    Kind("Libfabric's fi_info (its providers)", "fabric", fiinfo.detect, fiinfo.parse),
    Kind("torch.distributed rendezvous error", "nccl", rendezvous.detect, rendezvous.parse),
    Kind("NCCL INFO log", "nccl", nccl.detect_any, nccl.parse),      # NCCL's lines with nothing decisive: last
)


def views(text: str) -> dict[bool, str]:
    """The text as each parser reads it, by Kind.prefixed: as the launcher printed it, or the tool's bare lines."""
    printed, bare = pasted.views(text)
    return {True: printed, False: bare}


def kinds_in(seen: dict[bool, str]) -> list[Kind]:
    """Every kind the text (its views) holds, one per name, most specific first."""
    found = [k for k in KINDS if k.detect(seen[k.prefixed])]
    return [k for n, k in enumerate(found) if k.name not in {f.name for f in found[:n]}]


def kind_of(text: str) -> Kind | None:
    return next(iter(kinds_in(views(text))), None)


class ExplainError(Exception):
    """A file that cannot be read: one line, cause and fix."""


def read(path: str) -> str:
    """The file's text (its last MAX_BYTES), decoded leniently; a binary file, a device and an empty file are refused
    (a log whose start logrotate's copytruncate left as NULs is read from its text).
    Opened without blocking (a FIFO no one writes to would wait forever) and read as a stream where it is one (a
    pipe, `<(dmesg)`), keeping only its tail."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except OSError as exc:
        raise ExplainError(f"explain {path}: cannot read it ({exc.strerror or exc})") from None
    mode = os.fstat(fd).st_mode
    problem = ("a directory, not a text log: give the files in it" if stat.S_ISDIR(mode) else
               "a device, not a text log: save the tool's output to a file and give that"
               if stat.S_ISBLK(mode) or (stat.S_ISCHR(mode) and not os.isatty(fd)) else None)
    if problem:
        os.close(fd)
        raise ExplainError(f"explain {path}: {problem}")
    with os.fdopen(fd, "rb", buffering=0) as fh:
        try:
            os.set_blocking(fd, True)       # a pipe with a writer is read to its end; one with none is empty
            data = _tail(fh, stat.S_ISREG(mode))
        except OSError as exc:
            raise ExplainError(f"explain {path}: cannot read it ({exc.strerror or exc})") from None
    text_after = _after_truncation(data) if b"\0" in data[:4096] else data
    if text_after is None:
        raise ExplainError(f"explain {path}: a binary file, not a text log: give the text output (dmesg, ibstat, "
                           "nvidia-smi -q, NCCL_DEBUG=INFO, ulimit -a)")
    text = text_after.decode("utf-8", errors="replace")
    if not text.strip():
        raise ExplainError(f"explain {path}: empty, nothing to explain: give the file the command's output was saved "
                           "to (dmesg, ibstat, nvidia-smi -q, NCCL_DEBUG=INFO, ulimit -a)")
    return text


_CONTROL = re.compile(rb"[\x00-\x08\x0b\x0c\x0e-\x1a\x1c-\x1f]")      # not \t \n \r or a colour's ESC


def _after_truncation(data: bytes) -> bytes | None:
    """The text after a leading run of NUL bytes: logrotate's copytruncate empties a log while its program goes on
    writing at its old offset, so the file starts with that many NULs and the program's lines follow. None where
    what follows is no text (a NUL or another control byte in its first 4 KiB, or no line end in it)."""
    rest = data.lstrip(b"\0")
    head = rest[:4096]
    return rest if head and (b"\n" in head or len(head) == 4096) and not _CONTROL.search(head) else None


def _tail(fh: Any, regular: bool) -> bytes:
    """The last MAX_BYTES: a regular file's by seeking (procfs files say size 0: read whole), a stream's by reading
    it in chunks and keeping the last; a stream whose start is binary (NUL bytes after its first byte that is none)
    is refused before its end."""
    if regular:
        try:
            fh.seek(max(0, fh.seek(0, 2) - MAX_BYTES))
        except OSError:
            fh.seek(0)              # procfs (/proc/driver/nvidia/version) seeks to no end: read as a stream
        else:
            return bytes(fh.read())
    kept, head = bytearray(), b""
    while chunk := fh.read(1 << 20):
        if len(head) < 4096:
            head += chunk[:4096 - len(head)]
            if b"\0" in head.lstrip(b"\0"):    # a leading run is copytruncate's (read() tells)
                return head
        kept += chunk
        if len(kept) > 2 * MAX_BYTES:
            del kept[:-MAX_BYTES]
    return bytes(kept[-MAX_BYTES:])


def explain(path: str, options: Any) -> Any:
    """One file judged: its kind's facts through the check's judge (verify/judging.py, as a replay names its file);
    a file no parser recognises is a skip that says so, with no owner."""
    return explain_text(read(path), path, options)


# A file may hold several kinds pasted together (`nvidia-smi -q` above `dmesg`, `ibstat` after a job's NCCL log):
# each is read from the whole text and the worst verdict is the file's, so that no fault one of them shows is
# withheld; on a tie the most specific kind's. verify's own parser trouble (FACTS_INVALID) never outranks a fault, and
# no pass stands over it: what it could not read may hold one (two hosts' tables read as one list, fuzz70).
_SEVERITY = {"fail": 2, "warn": 1}
# a warning for evidence not read (a GPU listed with no health field) names no fault: on a tie, any kind's finding (a
# program's out of memory beside a cut nvidia-smi table) is the file's verdict, the unread health said beside it
UNREAD = frozenset({"HEALTH_NOT_ASSESSED"})


# a run of digits no tool prints (an index, a count, a figure of a thousand digits): cut, so that no reader's int()
# meets Python's 4,300-digit limit (fuzz70: `GPU 999...9: NVIDIA H100 ...` raised in nvlinkerrs' header match); the
# line keeps its first digits and an ellipsis, and reads as nothing a parser takes
_ENDLESS_DIGITS = re.compile(r"\d{256,}")


def explain_text(text: str, path: str, options: Any) -> Any:
    """What `explain` does once the file is read (a test feeds text directly): a paste of several hosts' outputs
    (explain/hosts.py) is judged host by host."""
    text = _ENDLESS_DIGITS.sub(lambda m: m.group(0)[:32] + "\u2026", text)
    parts = hosts.sections(text)
    judged = [(host, _one(part, path, options)) for host, part in parts or ()]
    judged = [(host, r) for host, r in judged if r.name != "explain"]        # a host's prompt with nothing read
    whole = _one(text, path, options)
    return hosts.per_host(judged, whole) if len(judged) >= 2 else whole


def _one(text: str, path: str, options: Any) -> Any:
    from ..result import CheckResult

    seen = views(text)
    found = kinds_in(seen)
    if any(k.parse is nccltests.parse for k in found):
        # nccl-tests' reader reads NCCL's lines of its output itself: the log read alone again (`Destroy COMPLETE`
        # below the table's last row, nothing to judge) is no second verdict of the same run (batch 143)
        found = [k for k in found if k.parse is not nccl.parse]
    if not found:
        # the formats are counted, not listed (a screen of names hid the one line that matters): docs/explain.md
        result = CheckResult("explain", "skip", f"not recognised: {path} (none of the "
                             f"{len(dict.fromkeys(k.name for k in KINDS))} formats docs/explain.md lists)")
        return result.not_judged(result.summary, "Give the text these commands print: nvidia-smi -q, ibstat, "
                                 "ibstatus, ibv_devinfo, dcgmi health -c, dcgmi diag -r N, dcgmi nvlink -s, dmesg / journalctl -k, NCCL_DEBUG=INFO output, nccl-tests output, ulimit -a.")
    # an API mismatch beside nvidia-smi answering is another client's, no host fault (apimismatch.py)
    answered = apimismatch.nvml_answered([(k.check, k.parse, seen[k.prefixed]) for k in found], kernel.parse, text)
    results = [_judged(kind, seen[kind.prefixed], path, options, answered) for kind in found]
    listed = _listed_elsewhere(found, results, seen)
    rank = [(0.5 if r.code == "FACTS_INVALID" else 0 if n in listed else _SEVERITY.get(r.status, 0),
             _unjudged_run(kind, r), _read(r), int(r.code not in UNREAD and n not in listed), _cause(kind, found, r), -n)
            for n, (kind, r) in enumerate(zip(found, results, strict=True))]
    chosen = rank.index(max(rank))
    result = results[chosen]
    result.details[:0] = [f"explained from {path}, read as {found[chosen].name}"] + [
        f"also read as {kind.name}: {other.name} {other.status}{' ' + other.code if other.code else ''}"
        for kind, other in zip(found, results, strict=True) if other is not result]
    return result


def _listed_elsewhere(found: list[Kind], results: list[Any], seen: dict[bool, str]) -> set[int]:
    """The GPU inventories (explain/inventory.py) whose HEALTH_NOT_ASSESSED another gpu kind of the file answers: it
    judged (pass, warn or fail) a health read of every GPU the inventory lists."""
    gpu = [n for n, k in enumerate(found) if k.check == "gpu"]
    if len(gpu) < 2:
        return set()
    facts = {n: found[n].parse(seen[found[n].prefixed]) for n in gpu}
    out = set()
    for n in gpu:
        listed = inventory.inventory(facts[n]) if results[n].code == "HEALTH_NOT_ASSESSED" else None
        plain = results[n].code == "HEALTH_NOT_ASSESSED" and inventory.driver_only(facts[n])
        if (listed or plain) and any(m != n and results[m].status in ("pass", "warn", "fail") and results[m].code not in
                                     UNREAD and inventory.covered(listed or None, facts[m]) for m in gpu):
            out.add(n)
    return out


def _read(result: Any) -> int:
    """0 for a kind that read nothing to judge (an `ibv_devinfo` cut before its ports): on a tie, a kind of the same
    file that judged what it read (the container's verbs devices, batch 134) is the file's verdict."""
    return int(not (result.status == "skip" and result.code == "FACTS_INCOMPLETE"))


def _unjudged_run(kind: Kind, result: Any) -> int:
    """1 for NCCL's log with nothing to judge (a job that hangs with no error text): it proves no fault, and a pass
    of another kind beside it (a topology listing, an idle GPU table) would read as the job's all-clear (batch 115)."""
    return int(kind.check == "nccl" and result.status == "skip" and result.code != "FACTS_INVALID")


def _cause(kind: Kind, found: list[Kind], result: Any) -> int:
    """1 for a CUDA error read beside NCCL's log: a CUDA call failing under NCCL is what NCCL's `unhandled cuda
    error` (ncclUnhandledCudaError) reports, so on a tie the CUDA error names the cause. A running program's error
    always; CUDA's refusal to start (`Cuda failure 802 'system not yet initialized'`) where it is the node's (the
    driver, the fabric): a build without the GPU's code (`named symbol not found`) stays NCCL's, whose build it is."""
    if not any(k.check == "nccl" for k in found):
        return 0
    return int(kind.name == "CUDA error of a running program"
               or (kind.name == "CUDA initialisation error" and result.owner == "host"))


def _names(dev: dict[str, Any]) -> set[str]:
    """The names a report gives one GPU: its UUID, its bus id (nvidia-smi prints the domain as 4 or 8 digits), and,
    only where neither is shown, its index."""
    names = {f"GPU {str(dev['uuid']).strip().lower()}"} if dev.get("uuid") else set()
    if dev.get("pci_bus_id"):
        # the gpu check's own reading of a bus id: a zero domain dropped, any other kept (a Hyper-V guest's GPUs differ
        # by domain only)
        names.add(f"GPU at {norm_bus(dev['pci_bus_id'])}")
    if not names and dev.get("index") is not None:
        names.add(f"GPU {dev['index']}")
    return names


def once(facts: dict[str, Any]) -> list[str]:
    """The gpu facts' devices with each GPU once (a report pasted twice, one GPU's block quoted again): the newest
    evidence wins, so its last reading stands, with the fields only an earlier one read; which GPUs repeated."""
    devices = facts.get("devices")
    if not isinstance(devices, list):
        return []
    kept: list[tuple[set[str], dict[str, Any]]] = []
    repeated: list[str] = []
    first: dict[str, int] = {}        # each name's first kept entry: a scan of every kept one per GPU was quadratic
    for dev in devices:
        names = _names(dev) if isinstance(dev, dict) else set()
        same = min((first[n] for n in names if n in first), default=None)
        at = len(kept) if same is None else same
        for n in names:
            first[n] = min(first.get(n, at), at)
        if same is None:
            kept.append((names, dev))
            continue
        seen, earlier = kept[same]
        kept[same] = (seen | names, {**earlier, **{k: v for k, v in dev.items() if v is not None}})
        repeated.append(sorted(seen & names)[0])
    facts["devices"] = [dev for _, dev in kept]
    return list(dict.fromkeys(repeated))


def _judged(kind: Kind, text: str, path: str, options: Any, answered: bool = False) -> Any:
    from ..checks import CHECKS
    from ..judging import judge

    facts = kind.parse(text)
    facts, mismatch = apimismatch.set_aside(facts) if answered and kind.parse is kernel.parse else (facts, [])
    repeated = once(facts) if kind.check == "gpu" else []
    result = judge(CHECKS[kind.check], facts, options, source=path)
    if mismatch:
        apimismatch.said(result, mismatch)
    result.details += [f"{gpu} is in {path} more than once: its last reading is judged, the earlier ones fill only "
                       "what it did not read" for gpu in repeated]
    unread = kind.unread(text) if kind.unread else []
    result.details += [f"said in {path} but in no field of the facts, so not judged: {said}" for said in unread]
    result.details += [f"said in {path}, no field of the facts, no fault of this host: {said}"
                       for said in (kind.said(text) if kind.said else [])]
    if unread and result.status in ("pass", "skip") and result.code != "FACTS_INVALID":
        # the tool that printed it saw a fault verify cannot read: no pass, and no "nothing to judge" over it
        what = "; ".join(unread)
        result.verdict("warn", "HEALTH_NOT_ASSESSED", f"{kind.name} reports what no field of the facts holds, so "
                       f"it is not assessed, not healthy: {what[:300]}", kind.remedy, "host")
    toolword.apply(kind.name, kind.shown, kind.trouble, text, path, result)
    if result.code == "FACTS_INVALID":
        # the facts are verify's own parser's, not a record someone wrote: their fault is verify's, never the job's
        # (nor the host's: the tool's trouble is no node's fault), so the verdict names no owner
        result.summary = (f"verify's {kind.name} parser read {path} into facts its judge refuses ({result.summary}): "
                          "a verify bug, not the job's, the image's or the host's")
        result.remedy = "Report it to verify's maintainers with the file; judge the node from the raw text meanwhile."
        result.owner = None
    return result
