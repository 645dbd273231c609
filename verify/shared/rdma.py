"""The RDMA fabric as a container sees it: the host's adapters (/sys/class/infiniband), the device nodes it was
given (/dev/infiniband), the userspace it can load (libibverbs, librdmacm, providers, net plugins), memlock and
GPUDirect RDMA readiness. Read-only, never raises; a part that cannot be read is null ("not read").

Every path is read under a root folder: `VERIFY_FABRIC_ROOT` (default `/`), so a real listing copied into a folder
(`<root>/sys/class/infiniband/...`, `<root>/dev/infiniband/...`, `<root>/proc/modules`) replays through the same
code. What is read from inside the process itself (ctypes loads, ibv_get_device_list, RLIMIT_MEMLOCK, the
environment) is the process's own and ignores the root.
"""
from __future__ import annotations

import ctypes
import glob
import os
import re
import resource
from collections.abc import Mapping, Sequence
from errno import ENOSYS
from typing import Any

from ..codes import Owner

ROOT_ENV = "VERIFY_FABRIC_ROOT"
# a number float() takes (`1.2.3` is none), a width int() takes (not 4,300 digits)
# the kernel names no speed for SDR (`10 Gb/sec (4X)`: drivers/infiniband/core/sysfs.c rate_show)
_RATE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*Gb/sec(?:\s*\((\d{1,4})X\s*([A-Za-z0-9]+)?\))?", re.ASCII)
# Where libibverbs looks for its providers (rdma-core: IBVERBS_CONFIG_DIR and the provider directory).
PROVIDER_DIRS = ("etc/libibverbs.d",)
PROVIDER_LIB_GLOBS = ("usr/lib/*/libibverbs/lib*-rdmav*.so", "usr/lib64/libibverbs/lib*-rdmav*.so",
                      "usr/lib/libibverbs/lib*-rdmav*.so")
PLUGIN_DIRS = ("usr/lib/*", "usr/lib64", "usr/local/lib", "opt/amazon/ofi-nccl/lib", "opt/amazon/ofi-nccl/lib/*",
               "opt/amazon/aws-ofi-nccl/lib",
               "opt/aws-ofi-nccl/lib", "opt/hpcx/nccl_rdma_sharp_plugin/lib")


def root() -> str:
    return os.environ.get(ROOT_ENV) or "/"


def _at(base: str, path: str) -> str:
    return os.path.join(base, path.lstrip("/"))


def _read(path: str) -> str | None:
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            return fh.read(4096).strip()
    except OSError:
        return None


def _named(text: str | None) -> str | None:
    """`4: ACTIVE` -> `ACTIVE`, `5: LinkUp` -> `LinkUp` (sysfs prints the number and the name)."""
    if text is None:
        return None
    return text.split(":", 1)[1].strip() if ":" in text else text.strip()


def rate(text: str | None) -> tuple[float | None, int | None, str | None]:
    """`400 Gb/sec (4X NDR)` -> (400.0, 4, "NDR"); SDR's `10 Gb/sec (4X)` -> (10.0, 4, None); an ibstat `Rate: 400`
    copied as `400 Gb/sec` -> (400.0, None, None)."""
    found = _RATE.match(text or "")
    if not found:
        return None, None, None
    return float(found.group(1)), int(found.group(2)) if found.group(2) else None, found.group(3)


def _port(folder: str) -> dict[str, Any]:
    gbps, width, speed = rate(_read(os.path.join(folder, "rate")))
    number = os.path.basename(folder)
    return {"port": int(number) if number.isdecimal() else None, "state": _named(_read(os.path.join(folder, "state"))),
            "phys_state": _named(_read(os.path.join(folder, "phys_state"))), "rate_gbps": gbps, "width": width,
            "speed": speed, "link_layer": _read(os.path.join(folder, "link_layer"))}


def _driver(device: str) -> str | None:
    link = os.path.join(device, "device", "driver")
    if os.path.islink(link):
        return os.path.basename(os.readlink(link))
    return _read(os.path.join(device, "device", "driver_name"))   # a replayed listing may name it in a file


def adapters(base: str) -> list[dict[str, Any]] | None:
    """Each /sys/class/infiniband/<name>: driver, hca_type and its ports; [] when there is none, null when unreadable."""
    folder = _at(base, "/sys/class/infiniband")
    if not os.path.exists(folder):
        return []
    try:
        names = sorted(os.listdir(folder))
    except OSError:
        return None
    found = []
    for name in names:
        device = os.path.join(folder, name)
        ports = sorted(glob.glob(os.path.join(device, "ports", "*")), key=lambda p: (len(p), p))
        adapter = {"name": name, "driver": _driver(device), "hca_type": _read(os.path.join(device, "hca_type")),
                   "ports": [_port(p) for p in ports]}
        pci = _read(os.path.join(device, "device", "device"))      # a missing key is null (FACTS.md)
        found.append(adapter | ({"pci_device": pci} if pci else {}))
    return found


def device_nodes(base: str) -> tuple[list[str] | None, bool | None]:
    """The uverbs nodes and whether rdma_cm is there, in /dev/infiniband ([] and False: the folder is absent)."""
    folder = _at(base, "/dev/infiniband")
    if not os.path.exists(folder):
        return [], False
    try:
        names = os.listdir(folder)
    except OSError:
        return None, None
    return sorted(n for n in names if n.startswith("uverbs")), "rdma_cm" in names


def load(name: str) -> tuple[Any, str | None]:
    """(the library, None) or (None, dlopen's error)."""
    try:
        return ctypes.CDLL(name, use_errno=True), None
    except OSError as exc:
        return None, str(exc)[:200]


def verbs_devices(lib: Any) -> tuple[list[str] | None, str | None]:
    """ibv_get_device_list() from inside: the device names libibverbs and its providers can open."""
    try:
        lib.ibv_get_device_list.restype = ctypes.POINTER(ctypes.c_void_p)
        lib.ibv_get_device_list.argtypes = [ctypes.POINTER(ctypes.c_int)]
        lib.ibv_get_device_name.restype = ctypes.c_char_p
        lib.ibv_get_device_name.argtypes = [ctypes.c_void_p]
        lib.ibv_free_device_list.argtypes = [ctypes.POINTER(ctypes.c_void_p)]
        count = ctypes.c_int(0)
        ctypes.set_errno(0)
        devices = lib.ibv_get_device_list(ctypes.byref(count))
        if not devices:
            errno = ctypes.get_errno()
            if errno == ENOSYS:     # ibv_get_device_list(3): "No kernel support for RDMA": no device, not an error
                return [], None
            return None, f"ibv_get_device_list returned NULL (errno {errno}: {os.strerror(errno)})"
        names = [lib.ibv_get_device_name(devices[i]).decode(errors="replace") for i in range(count.value)]
        lib.ibv_free_device_list(devices)
        return names, None
    except (AttributeError, OSError, ValueError) as exc:
        return None, f"{type(exc).__name__}: {exc}"[:200]


def providers(base: str) -> list[str]:
    """Provider names libibverbs can load: `driver mlx5` lines of libibverbs.d and lib<name>-rdmav<N>.so files."""
    names: set[str] = set()
    for directory in PROVIDER_DIRS:
        for path in glob.glob(os.path.join(_at(base, directory), "*.driver")):
            text = _read(path) or ""
            names |= set(re.findall(r"^[^\S\n]*driver\s+(\S+)", text, re.MULTILINE))
    for pattern in PROVIDER_LIB_GLOBS:
        for path in glob.glob(_at(base, pattern)):
            found = re.match(r"lib(.+?)-rdmav\d+\.so$", os.path.basename(path))
            if found:
                names.add(found.group(1))
    return sorted(names)


def net_plugins(base: str, env: dict[str, str]) -> list[str]:
    """libnccl-net*.so files NCCL's dlopen could find: LD_LIBRARY_PATH, the usual library and plugin folders."""
    folders = [p for p in env.get("LD_LIBRARY_PATH", "").split(":") if p]
    found: set[str] = set()
    for folder in [_at(base, f) for f in folders] + [_at(base, d) for d in PLUGIN_DIRS]:
        found |= set(glob.glob(os.path.join(folder, "libnccl-net*.so*")))
    plugin = env.get("NCCL_NET_PLUGIN", "")
    if plugin.startswith("/") and os.path.exists(_at(base, plugin)):
        found.add(_at(base, plugin))
    return sorted(os.path.relpath(p, base) if base != "/" else p for p in found)


# A call that pins memory failing with ENOMEM: what RLIMIT_MEMLOCK (or the pinned memory it guards) running out looks
# like, in whichever library hit it: NCCL's misc/ibvwrap.cc `Call to ibv_reg_mr_iova2 failed with error Cannot
# allocate memory` (ibv_reg_mr, ibv_reg_mr_iova2, ibv_reg_dmabuf_mr; NVIDIA/nccl-tests#206), UCX's `ibv_reg_mr(...)
# failed: Cannot allocate memory` and `ibv_create_cq() failed: Cannot allocate memory` (the CQ's buffers are pinned
# too), libfabric's `fi_mr_reg failed, ret is:-12`, aws-ofi-nccl's `Unable to register memory ... RC: -12`, Mooncake's
# transfer engine `Failed to register memory 0x...: Cannot allocate memory [12]` (its ibv_reg_mr; batch 127).
# Another errno of the same call (EFAULT `Bad address`: no peer memory for a GPU buffer) is no memlock evidence.
# A language binding's own name for the registration (async-rdma, Rust: `RawMemoryRegion::register_from_pd failed Os {
# code: 12, kind: OutOfMemory, message: "Cannot allocate memory" }`, its ibv_reg_mr; batch 150) is the same call.
_PINNING = (r"(?:ibv_reg_mr\w*|ibv_reg_dmabuf_mr|ibv_create_cq\w*|fi_mr_reg\w*|(?:[Uu]nable|[Ff]ailed) to register memory"
            r"|\b\w*MemoryRegion::\w*register\w*|\bregister_from_pd\b)")
# A binding that prints the call's arguments on their own lines before its errno (async-rdma's `ibv_reg_mr err,
# arguments:` ... `, err info:Os { code: 12, kind: OutOfMemory ... }`): one record, continued lines indented or led by
# a comma, its errno ENOMEM.
_ARGS_BLOCK = r"\bibv_reg_\w*mr\w* err, arguments:(?:\n[ \t][^\n]*){0,12}\n,?\s*err info:\s*Os \{ code: 12\b"
# libfabric's EFA provider aborting because it could not post its internal receive buffers with -12 (ENOMEM): those
# buffers come from a packet pool it registers with the device as it grows it (prov/efa efa_rdm_ep_grow_rx_pools,
# efa_errno.h INTERNAL_RX_BUF_POST), so the pool's pinning ran out. Its abort block (efa_base_ep_write_eq_error:
# `Libfabric error: (-12) Cannot allocate memory` then `EFA internal error: (4112) Failure to post internal receive
# buffers`, on two lines, or on one where a record joined them) and its FI_LOG_LEVEL=warn line (`err: Cannot allocate
# memory (12) prov_errno: Failure to post internal receive buffers (4112)`). The -12 alone names no pinning call.
_EFA_RX_BUFFERS = (r"Libfabric error: \(-12\)[^\n]*?(?:\n[^\n]*?)?EFA internal error: \(\d+\) Failure to post "
                   r"internal receive buffers|err: Cannot allocate memory \(-?12\) prov_errno: Failure to post internal receive buffers")
# The kernel's side of a verbs registration (ib_uverbs_reg_mr -> ib_umem_get -> pin_user_pages_fast) returning -12
# in a trace (ftrace's `pin_user_pages_fast ret=-12 (ENOMEM)`): the pinning ran out under the library's call; only
# where the trace shows the verbs path (verify/explain/ulimit.py asks), since other drivers pin pages too.
_KERNEL_PIN = r"\bpin_user_pages\w*[^\n]*?(?:ret=-12\b|\bENOMEM\b)"
# An RDMA library refusing the limit at start-up, before any registration: Intel MPI's DAPL provider
# (`DAPL startup: RLIMIT_MEMLOCK too small`): the limit is too low for RDMA by the library's own test.
_STARTUP_REFUSED = r"\bDAPL startup: RLIMIT_MEMLOCK too small"
# the errno is the call's own: no other verbs or libfabric call between them (`ibv_create_cq: Invalid argument(22)
# or ibv_create_qp: Cannot allocate memory(12)` is a queue pair's ENOMEM, no pinning call's)
_OWN = r"(?:(?!\b(?:ibv|fi)_\w)[^\n])*?"
PINNING_ENOMEM = re.compile(_PINNING + _OWN + r"(?:Cannot allocate memory|\bENOMEM\b|(?:ret is|RC):\s*-12\b)|"
                            + _ARGS_BLOCK + "|" + _EFA_RX_BUFFERS + "|" + _KERNEL_PIN + "|" + _STARTUP_REFUSED)
# a word every match of PINNING_ENOMEM holds (its errno's words, the EFA pool's, the kernel's pinning call's, DAPL's):
# a text with none is not searched (a leading `\w*` makes the engine try every position; hunt97: 0.5 s on 2 MB)
_PINNING_WORDS = ("Cannot allocate memory", "ENOMEM", "-12", "code: 12", "pin_user_pages", "RLIMIT_MEMLOCK too small")


def may_pin(text: str) -> bool:
    """Whether PINNING_ENOMEM may match anywhere in `text` (False: it cannot)."""
    return any(word in text for word in _PINNING_WORDS)


def pinning_failed(text: str | None) -> str | None:
    """The line of `text` where a call that pins memory failed with ENOMEM, or None."""
    text = text or ""
    found = PINNING_ENOMEM.search(text) if may_pin(text) else None
    if not found:
        return None
    start = text.rfind("\n", 0, found.start()) + 1
    end = text.find("\n", found.end())
    # the lines it spans (EFA's abort block prints two) as one; of a longer block (a call's arguments listed line by
    # line) its first and last, the call and its errno, which must survive the cut to 300 characters
    lines = [line.strip() for line in text[start:end if end >= 0 else None].splitlines() if line.strip()]
    return " ".join(lines if len(lines) <= 2 else [lines[0], "...", lines[-1]])[:300]


def memlock_owner(inside: bool) -> tuple[Owner, str]:
    """Whose a locked-memory limit too low for RDMA is, and its fix: read beside the container's devices, the
    container's (`--ulimit`, the job's); read on its own (a host's `ulimit -a`, bare metal), the site's (limits.conf,
    slurmd's LimitMEMLOCK): the host's. The fabric check and the nccl check say the same."""
    if inside:
        return "job", "Run the container with `--ulimit memlock=-1` (and `--cap-add IPC_LOCK`)."
    return "host", ("Raise the node's limit: `* - memlock unlimited` in /etc/security/limits.conf, and "
                    "LimitMEMLOCK=infinity for slurmd (Slurm: PropagateResourceLimits).")


def memlock() -> int | str:
    soft, _ = resource.getrlimit(resource.RLIMIT_MEMLOCK)
    return "unlimited" if soft == resource.RLIM_INFINITY else int(soft)


def peermem(base: str) -> bool | None:
    """nvidia_peermem (or the older nv_peer_mem) loaded: /proc/modules or /sys/module; null when neither is readable."""
    modules = _read(_at(base, "/proc/modules"))
    if modules is not None and modules != "":
        return bool(re.search(r"^(nvidia_peermem|nv_peer_mem)\s", modules, re.MULTILINE))
    if os.path.isdir(_at(base, "/sys/module")):
        return any(os.path.isdir(_at(base, f"/sys/module/{m}")) for m in ("nvidia_peermem", "nv_peer_mem"))
    return None


def gpu_module(base: str) -> str | None:
    """`open` or `proprietary` from /proc/driver/nvidia/version (dma-buf GPUDirect needs the open module)."""
    text = _read(_at(base, "/proc/driver/nvidia/version"))
    if not text:
        return None
    return "open" if "Open Kernel Module" in text else "proprietary"


def kernel(base: str) -> str | None:
    text = _read(_at(base, "/proc/sys/kernel/osrelease"))
    return text or (os.uname().release if base == "/" else None)


def hca_matches(spec: str, names: list[str]) -> bool:
    """Whether NCCL_IB_HCA leaves NCCL any of these adapters (NCCL's environment-variable docs): `^` excludes, `=`
    matches names exactly, otherwise each item is a prefix; items are `name[:port]`, separated by commas."""
    exclude = spec.startswith("^")
    body = spec.lstrip("^")
    exact = body.startswith("=")
    items = [i.split(":")[0] for i in body.lstrip("=").split(",") if i]
    hit = [n for n in names if any((n == i) if exact else n.startswith(i) for i in items)]
    return len(hit) < len(names) if exclude else bool(hit)


def mixed_rails(adapters: Sequence[Mapping[str, Any]] | None, roce: bool = False) -> list[str] | None:
    """The rails of a node whose active RDMA ports differ, or None: the InfiniBand adapters beside Ethernet (RoCE) ones
    at another rate; with `roce`, also on an all-RoCE node the adapters at the top rate beside slower ones (storage,
    management NICs). There NCCL, left without NCCL_IB_HCA, takes every verbs device it finds and pairs rails that do
    not reach each other. `roce` is for a job that hung (NVIDIA/nccl#1277): on its own, a slower front-end RoCE NIC
    beside the rails is the usual cloud node (DeepEP#17), no finding."""
    up = [(a, p) for a in adapters or [] for p in a.get("ports") or []
          if str(p.get("state") or "").rsplit(":", 1)[-1].strip().upper() == "ACTIVE" and p.get("rate_gbps")
          and p.get("link_layer")]
    layers = {str(p.get("link_layer")) for _, p in up}
    rates = {float(p["rate_gbps"]) for _, p in up}
    if len(rates) < 2:
        return None
    if "InfiniBand" in layers and len(layers) >= 2:
        return sorted({str(a.get("name")) for a, p in up if p.get("link_layer") == "InfiniBand"})
    if roce and layers == {"Ethernet"}:
        return sorted({str(a.get("name")) for a, p in up if float(p["rate_gbps"]) == max(rates)})
    return None


# NCCL's verbs async event handler (transport/net_ib.cc: `NET/IB : Got async event : %s`, ibv_event_type_str) where the
# event is an error of the port, the device or a queue pair (a LID or GID change, a port coming up, are not): the
# adapter or its link failed under the job
# an IB work completion with an error status, as NCCL prints it (`Got completion from peer ... with error 12`; 2.19+:
# `with status=IBV_WC_RETRY_EXC_ERR(12)`, the status's name and its number; quoted short in a title or a report,
# `NET/IB Got completion error 12`): group 1 is the ibv_wc_status. One
# pattern for the nccl check and `verify explain`, each compiling it with what it reads around it.
IB_COMPLETION = r"Got completion(?:.*?with | )(?:error|status=)\s*(?:IBV_WC_\w+\()?(\d+)"
# (2.19+ names the device and port between: `NET/IB : mlx5_1:1 Got async event : local catastrophic error`)
# libibverbs' ibv_event_type_str words: `local catastrophic error` (the device), `port error`, `CQ error`, `local work
# queue catastrophic error` (QP fatal), `SRQ catastrophic error`, `path migration request error`, and the access
# class, `local access violation work queue error` / `invalid request local work queue error`: like a completion's
# local protection error, the adapter could not reach the memory NCCL registered (GPUDirect RDMA on the PCIe path)
# 2.21+ sorts the events itself and words the fatal ones `NET/IB : mlx5_ib0:1 async fatal event on QP (0x7f69f01519a8):
# local access violation work queue error` (also `async fatal event: ...` for the device, `on CQ (%p)`, `on SRQ, unused
# for now (%p)`: net_ib.cc's async thread): every such line is an error event, whatever words follow
IB_ASYNC_ERROR = re.compile(r"NET/IB ?: ?(?:[\w.-]+:\d+ )?(?:Got async event ?: ?(?:port error|local catastrophic error|QP fatal "
                            r"error|QP request error|QP access error|CQ error|SRQ (?:catastrophic )?error|path migration "
                            r"request error|local work queue catastrophic error|invalid request local work queue error|local "
                            r"access violation work queue error)|async fatal event(?: on (?:QP|CQ|SRQ)[^:\n|]{0,40})?: ?\w)"
                            r"[^\n|]*")


# libfabric's EFA provider failing to reach GPU memory (prov/efa/src/efa_hmem.c, efa_domain_hmem_info_init_cuda:
# `Failed to register CUDA buffer with the EFA device, FI_HMEM transfers that require peer to peer support will
# fail.`): the host's EFA driver, nvidia-peermem or dma-buf gives the device no path to the GPUs; aws-ofi-nccl then
# cannot use EFA for CUDA buffers and NCCL falls back to sockets. The host's, whoever's job printed it.
EFA_GPU_MEMORY = re.compile(r"libfabric:[^\n]*?\befa\b[^\n]*?<(?:warn|error)>[^\n]*?(?:Failed to register CUDA buffer|"
                            r"require peer to peer support)[^\n]*")
