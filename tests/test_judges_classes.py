"""Issue 35: adversarial inputs per class, unlike the corpus's (other wordings, orders, prefixes), to find rules bound
to one example; and, for each host-owned verdict added here, a real excerpt where the host is healthy."""
from __future__ import annotations

from typing import Any, cast

import pytest

from tests.judging import verdict
from verify import explain as ex
from verify.checks import gpu
from verify.checks.nccl import ncclog
from verify.options import Options
from verify.prolog import xid as xidlog

pytestmark = pytest.mark.unit


def _gpu(**facts: Any):
    return gpu.judge(cast(Any, {"devices": None, "torch": None, **facts}), Options())


# ------------------------------------------------------------------ NVSwitch SXids
# The SXid lines gpud's tests quote from real nodes (https://github.com/leptonai/gpud/pull/338 and its sxid package).
NONFATAL_12028 = "[111111111.111] nvidia-nvswitch3: SXid (PCI:0000:05:00.0): 12028, Non-fatal, Link 32 egress non-posted PRIV error (First)"
FATAL_20034 = ["[131453.740743] nvidia-nvswitch0: SXid (PCI:0000:a9:00.0): 20034, Fatal, Link 30 LTSSM Fault Up",
               "[131453.740754] nvidia-nvswitch0: SXid (PCI:0000:a9:00.0): 20034, Severity 1 Engine instance 30 Sub-engine instance 00",
               "[131453.740758] nvidia-nvswitch0: SXid (PCI:0000:a9:00.0): 20034, Data {0x50610002, 0x10100030}"]


def _sxids(lines):
    kind = ex.kind_of("\n".join(lines))
    assert kind is not None and kind.check == "gpu"
    return kind.parse("\n".join(lines))


def test_a_fatal_sxid_in_any_order_of_its_three_lines_fails_the_host_once():
    for lines in (FATAL_20034, FATAL_20034[::-1]):
        r = gpu.judge(_sxids(lines), Options())
        assert verdict(r) == ("fail", "XID_ERROR", "host") and "SXid 20034" in r.summary and "(3 lines)" in r.summary


def test_a_non_fatal_sxid_never_drains_and_its_detail_lines_follow_its_stated_severity():
    """No false drain: the same 12028 the corpus fails on, printed with its severity `Non-fatal`, only warns."""
    detail = NONFATAL_12028.replace("Non-fatal, Link 32 egress non-posted PRIV error (First)", "Data {0x1, 0x2}")
    for lines in ([NONFATAL_12028], [detail, NONFATAL_12028]):
        assert verdict(gpu.judge(_sxids(lines), Options())) == ("warn", "XID_ERROR", "host")
        assert not any(f.action == "drain" for f in xidlog.parse(lines))


def test_a_corrected_switch_ecc_sxid_is_noted_not_judged():
    line = "Mar 3 10:00:01 node kernel: nvidia-nvswitch2: SXid (PCI:0000:8a:00.0): 11012, Data {0x0}"
    r = gpu.judge(_sxids([line]), Options())
    assert r.status != "fail" and r.owner != "host"


def test_sxid_events_are_facts_a_replay_judges_without_devices():
    event = {"sxid": 12028, "pci_bus_id": "0000:84:00.0", "source": "kernel_log",
             "text": "nvidia-nvswitch1: SXid (PCI:0000:84:00.0): 12028, Data {0x1}"}
    assert verdict(_gpu(sxid_events=[event])) == ("fail", "XID_ERROR", "host")
    assert verdict(_gpu(sxid_events=[]))[2] is None        # none seen: nothing against anyone


# ------------------------------------------------------------------ correctable storms from DCGM field values
def _dcgm(sbe_vol: str, gpu_label: str = "0") -> str:
    """dcgm-exporter's exposition format, as its README and issues print it (labels gpu, UUID, device)."""
    labels = f'gpu="{gpu_label}", UUID="GPU-8c16e996-bd76-aa91-17e7-b48bcd0208ba", device="nvidia{gpu_label}"'
    return "\n".join(f"DCGM_FI_DEV_{k}{{{labels}}} {v}" for k, v in (
        ("ECC_SBE_VOL_TOTAL", sbe_vol), ("ECC_DBE_VOL_TOTAL", "0"), ("ECC_SBE_AGG_TOTAL", sbe_vol),
        ("ECC_DBE_AGG_TOTAL", "0"), ("FB_FREE", "7064")))


def test_dcgm_exporter_lines_carry_a_correctable_storm_to_the_host():
    r = ex.explain_text(_dcgm("2500000"), "metrics.txt", Options())
    assert verdict(r) == ("warn", "ECC_UNCORRECTABLE", "host") and "correctable-error storm" in r.summary


def test_dcgm_blank_values_are_not_counts():
    """dcgm-exporter prints DCGM's blank (9223372036854775794) for a field the GPU does not report: never a storm."""
    facts = ex.kind_of(_dcgm("9223372036854775794")).parse(_dcgm("9223372036854775794"))  # type: ignore[union-attr]
    assert facts["devices"][0].get("ecc_volatile_correctable") is None
    assert ex.explain_text(_dcgm("9223372036854775794"), "m.txt", Options()).owner != "host"


def test_a_healthy_gpus_dcgm_counts_do_not_drain_it():
    """No false drain: a few corrected errors are the memory working as designed."""
    assert ex.explain_text(_dcgm("12"), "metrics.txt", Options()).status == "pass"


# ------------------------------------------------------------------ NCCL's log on its own, as launchers print it
def _nccl(text: str, **facts: Any):
    from verify.checks import nccl
    return nccl.judge(cast(Any, {"backend": "nccl", "nccl_log": ncclog.parse(text), **facts}), Options())


# The plugin-not-found wording of each release (ncclog's docstring cites the source lines).
PLUGIN_MISSING = {
    "2.18": "NET/Plugin : Plugin load (libnccl-net.so) returned 2 : libnccl-net.so: cannot open shared object file",
    "2.19": "NET/Plugin : dlerror=libnccl-net.so: cannot open shared object file No plugin found (libnccl-net.so), "
            "using internal implementation",
    "2.21": "NET/Plugin: No plugin found (libnccl-net.so)",
    "2.23": "NET/Plugin: Could not find: libnccl-net.so. Using internal network plugin.",
    "2.28": "NET/Plugin: Could not find: libnccl-net.so libnccl-net.so. Using internal net plugin.",
}
PREFIXES = {
    "ray": "(RayWorkerWrapper pid=2981, ip=10.0.0.2) ip-10-0-0-2:2981:3001 [0] NCCL INFO {} [repeated 7x across cluster]",
    "timestamp": "2025-03-01T10:00:00.123456Z ip-10-0-0-2:2981:3001 [0] NCCL INFO {}",
    "mpirun": "[1,3]<stdout>:ip-10-0-0-2:2981:3001 [3] NCCL INFO {}",
    "torchrun": "[default3]:ip-10-0-0-2:2981:3001 [3] NCCL INFO {}",
    "untagged": "{}",
}


@pytest.mark.parametrize("version", sorted(PLUGIN_MISSING))
@pytest.mark.parametrize("prefix", sorted(PREFIXES))
def test_an_efa_timeout_whose_log_shows_no_ofi_plugin_is_the_images(version, prefix):
    """Issue 35: never the host's. Any release's wording, any launcher's prefix, the decision line first or last."""
    lines = [PLUGIN_MISSING[version], "NET/IB : No device found.", "NET/Socket : Using [0]ens32:10.0.0.2<0>",
             "Using network Socket"]
    for order in (lines, lines[::-1]):
        text = "\n".join(PREFIXES[prefix].format(m) for m in order)
        r = _nccl(text, efa=True, nodes=2, world_size=16, error="all_reduce: Watchdog caught collective operation timeout")
        assert verdict(r) == ("fail", "NCCL_TIMEOUT", "image"), (version, prefix, r.summary)


def test_an_ofi_log_on_provider_tcp_is_said_even_when_the_adapters_are_unknown():
    text = "\n".join(PREFIXES["ray"].format(m) for m in (
        "NET/OFI Selected provider is tcp, fabric is tcp (found 1 nics)", "Using network Libfabric"))
    r = _nccl(text)
    assert verdict(r) == ("warn", "NCCL_NET_FALLBACK", "job") and "provider tcp" in r.summary


def test_verbs_missing_in_2_30_wording_with_rays_suffix_is_the_images():
    text = "\n".join(PREFIXES["ray"].format(m) for m in (
        "Count not open libibverbs.so.1", "NET/Socket : Using [0]eth0:10.0.0.2<0>", "Using network Socket"))
    assert verdict(_nccl(text, infiniband=True, nodes=2)) == ("fail", "NCCL_NET_FALLBACK", "image")


def test_gdrdma_on_every_channel_with_the_2_27_proxy_index_passes():
    text = "\n".join(PREFIXES["torchrun"].format(m) for m in (
        "Using network IB", "Channel 00/0 : 0[0] -> 8[0] [send] via NET/IB/0(4)/GDRDMA",
        "Channel 01/0 : 0[0] -> 8[0] [send] via NET/IB/1/GDRDMA/Shared"))
    r = _nccl(text)
    assert r.status == "pass" and "2 IB/RoCE connection(s), 2 with GPUDirect RDMA" in r.summary


def test_a_healthy_ib_log_beside_the_images_missing_plugin_is_no_fault():
    """No false drain: on IB the internal transport is used; a missing net plugin is harmless there."""
    text = "\n".join(PREFIXES["timestamp"].format(m) for m in (
        PLUGIN_MISSING["2.23"], "NET/IB : Using [0]mlx5_0:1/IB [1]mlx5_1:1/IB ; OOB eth0:10.0.0.1<0>",
        "Using network IB", "Channel 00/0 : 0[0] -> 8[0] [send] via NET/IB/0/GDRDMA"))
    assert _nccl(text, infiniband=True, nodes=2).status == "pass"


# ------------------------------------------------------------------ mixed adapters, memlock
def _roce(rates):
    return [{"name": f"mlx5_{i}", "hca_type": None, "ports": [{"port": 1, "state": "ACTIVE", "rate_gbps": float(r),
                                                                 "link_layer": "Ethernet"}]} for i, r in enumerate(rates)]


def test_a_hang_on_all_roce_rails_beside_slower_nics_without_nccl_ib_hca_is_the_jobs():
    """NVIDIA/nccl#1277's class: 4x 400G RoCE rails beside a 200G and four 25G NICs, no NCCL_IB_HCA, a hang."""
    r = _nccl("", adapters=_roce([400, 400, 400, 400, 200, 25, 25, 25, 25]), nodes=2, world_size=16,
              error="all_reduce: Watchdog caught collective operation timeout")
    assert verdict(r) == ("fail", "NCCL_TIMEOUT", "job") and "NCCL_IB_HCA=mlx5_0,mlx5_1,mlx5_2,mlx5_3" in r.remedy
    set_hca = _nccl("", adapters=_roce([400, 400, 25]), nodes=2, error="all_reduce: timeout",
                    nccl_env={"NCCL_IB_HCA": "mlx5_0,mlx5_1"})
    assert set_hca.owner != "job"                       # the job did set it: the mixed NICs are not the cause


def test_a_slower_front_end_roce_nic_alone_is_no_finding():
    """No false finding: DeepEP#17's 200G front-end NIC beside 400G rails, nothing failed (fabric corpus: pass)."""
    from verify.shared import rdma
    assert rdma.mixed_rails(_roce([200, 400, 400])) is None


def test_memlock_64k_judged_where_nccls_log_alone_shows_rdma_and_not_otherwise():
    ib = "\n".join(PREFIXES["mpirun"].format(m) for m in ("NET/IB : Using [0]mlx5_0:1/IB ; OOB ib0:10.0.0.1<0>",
                                                           "Using network IB"))
    assert verdict(_nccl(ib, memlock_bytes=65536)) == ("fail", "FABRIC_MEMLOCK_LOW", "job")
    sockets = PREFIXES["mpirun"].format("Using network Socket")
    assert _nccl(sockets, memlock_bytes=65536).code != "FABRIC_MEMLOCK_LOW"     # no RDMA shown: not judged


# ------------------------------------------------------------------ Xid 45 and the cause it names
def _xid45(cause: str, prefix: str) -> str:
    return "\n".join(prefix + f"NVRM: Xid (PCI:0000:{bus}:00): 45, pid=1234, name=python, Ch 00000008{cause}"
                     for bus in ("1b", "43", "52", "61"))


@pytest.mark.parametrize("prefix", ["[ 1234.567890] ", "Jan 25 10:34:54 node kernel: ",
                                    "kern  :err   : 2025-01-25T10:34:54,859532+00:00 "])
def test_xid_45_is_judged_by_the_cause_it_names_whatever_the_log_format(prefix):
    nvlink = ex.explain_text(_xid45(", caused by previous Xid 149", prefix), "dmesg.txt", Options())
    assert verdict(nvlink) == ("fail", "XID_ERROR", "host") and "naming Xid 149" in nvlink.summary
    app = ex.explain_text(_xid45(", caused by previous Xid 13", prefix), "dmesg.txt", Options())
    assert verdict(app) == ("warn", "XID_ERROR", "job")
    alone = ex.explain_text(_xid45("", prefix), "dmesg.txt", Options())       # the job torn down: never the node's
    assert verdict(alone) == ("warn", "XID_ERROR", "job")


def test_a_detail_line_alone_drains_only_for_a_code_the_guide_says_stalls_nvlink():
    """No false drain: 20034's `Data {...}` line without its `Fatal` line is reported, not drained; 12028's is drained
    (the guide: NVLink traffic stalls, jobs abort with Xid 45)."""
    assert [f.action for f in xidlog.parse([FATAL_20034[2]])] == ["info"]
    assert gpu.judge(_sxids([FATAL_20034[2]]), Options()).status != "fail"
    data_12028 = "nvidia-nvswitch1: SXid (PCI:0000:84:00.0): 12028, Data {0x000001c0, 0x00bd5c8a}"
    assert [f.action for f in xidlog.parse([data_12028])] == ["drain"]


def test_socket_channels_without_a_using_network_line_are_the_fall_back_and_ipoib_shows_the_adapter():
    """2.18-era logs print no `Using network` at INFO: the channels `via NET/Socket` are the choice; an IPoIB
    bootstrap interface (ib0, ibp12s0) shows an InfiniBand adapter, an Ethernet one shows nothing."""
    lines = ["NET/IB : No device found.", "Bootstrap : Using {}:10.149.0.32<0>",
             "Channel 03/0 : 15[7] -> 6[6] [send] via NET/Socket/3"]
    for iface in ("ibp12s0", "ib0"):
        text = "\n".join(PREFIXES["timestamp"].format(m.format(iface)) for m in lines)
        assert verdict(_nccl(text)) == ("fail", "NCCL_NET_FALLBACK", "job"), iface
    ethernet = "\n".join(PREFIXES["timestamp"].format(m.format("enp1s0")) for m in lines)
    r = _nccl(ethernet)
    assert r.status != "fail" and r.owner != "host"      # sockets on a node not shown to have RDMA: no drain


def test_a_bootstrap_or_socket_warn_is_the_failure_and_never_the_hosts_on_its_own():
    """The unprefixed `misc/socket.cc:441 NCCL WARN ...` quoted in an issue is the error; a peer that closed its
    socket (the job's other rank died) is not a host fault either."""
    from verify.explain import nccl as explain_nccl
    for warn in ("misc/socket.cc:441 NCCL WARN socketFinalizeAccept: wrong type 4 != 3",
                 "node1:852750:852802 [0] misc/socket.cc:49 NCCL WARN socketProgress: Connection closed by remote peer"):
        facts = explain_nccl.parse(PREFIXES["timestamp"].format("Using network IB") + "\n" + warn)
        assert str(facts["error"]).startswith("init: ") and "NCCL WARN" in str(facts["error"])
        r = ex.explain_text(PREFIXES["timestamp"].format("Using network IB") + "\n" + warn, "log.txt", Options())
        assert r.status == "fail" and r.owner != "host", (warn, verdict(r), r.summary)


# ------------------------------------------------------------------ third batch: settings, files, driver status
# NVIDIA/nccl#1837 (2.27.7), and the interface-not-found messages of src/bootstrap.cc and transport/net_socket.cc
NO_INTERFACE = ("ncclSocketInit: connecting to address  with family 59936 is neither AF_INET(2) nor AF_INET6(10)",
                "bootstrap.cc:126 NCCL WARN Bootstrap : no socket interface found",
                "transport/net_socket.cc:61 NCCL WARN NET/Socket : no interface found")


@pytest.mark.parametrize("line", NO_INTERFACE)
@pytest.mark.parametrize("prefix", ["timestamp", "mpirun", "untagged"])
def test_an_interface_the_job_names_that_the_host_lacks_is_the_jobs(line, prefix):
    from verify.checks import nccl
    text = PREFIXES[prefix].format("NCCL_SOCKET_IFNAME set by environment to eth2") + "\n" + line
    facts = ex.nccl.parse(text)
    facts["error"] = facts["error"] or f"init: {line}"        # the WARN forms are the error; 2.27's is its Last error
    r = nccl.judge(cast(Any, facts), Options())
    assert verdict(r) == ("fail", "NCCL_FAILED", "job") and "NCCL_SOCKET_IFNAME=eth2" in r.summary


def test_a_socket_failure_beside_a_job_set_interface_is_not_blamed_on_the_variable():
    """A peer that closed its socket is no interface the host lacks: the variable is not named as the cause."""
    from verify.checks import nccl
    text = (PREFIXES["timestamp"].format("NCCL_SOCKET_IFNAME set by environment to eth0") + "\n"
            "node1:852750:852802 [0] misc/socket.cc:49 NCCL WARN socketProgress: Connection closed by remote peer")
    r = nccl.judge(cast(Any, ex.nccl.parse(text)), Options())
    assert r.status == "fail" and "matches no interface" not in r.summary


GRAPH_WARN = ["NCCL_GRAPH_FILE set by environment to /opt/microsoft/ncv4/graph.xml",
              "graph/search.cc:703 NCCL WARN XML Import Channel : dev 1 not found.", "graph/search.cc:733 -> 2"]


def test_a_topology_or_graph_file_nccl_cannot_use_is_the_images_unless_the_job_set_it():
    """Azure/azhpc-images#327 (the image's nccl.conf), aws/aws-ofi-nccl#476 (the plugin's static p5 topology): never
    the host's. The same variable in the job's recorded environment is the job's."""
    from verify.checks import nccl
    text = "\n".join(PREFIXES["timestamp"].format(m) for m in GRAPH_WARN)
    image = nccl.judge(cast(Any, ex.nccl.parse(text)), Options())
    assert verdict(image) == ("fail", "NCCL_FAILED", "image") and "NCCL_GRAPH_FILE=/opt/microsoft" in image.summary
    job = nccl.judge(cast(Any, {**ex.nccl.parse(text), "nccl_env": {"NCCL_GRAPH_FILE": "/opt/microsoft/ncv4/graph.xml"}}),
                     Options())
    assert verdict(job) == ("fail", "NCCL_FAILED", "job")
    unnamed = "\n".join(PREFIXES["mpirun"].format(m) for m in (
        "graph/xml.h:101 NCCL WARN Attribute arch of node cpu not found", "graph/topo.cc:493 -> 3", "init.cc:1548 -> 3"))
    assert verdict(nccl.judge(cast(Any, ex.nccl.parse(unnamed)), Options())) == ("fail", "NCCL_FAILED", "image")


def test_a_log_that_ends_in_a_warn_and_failing_returns_is_never_a_pass():
    """The call failed and nothing went on: whatever the file (Azure/azhpc-images#327's excerpt ends in search.cc);
    a WARN NCCL goes on from (its choice of network after it) is no failure."""
    setup = [PREFIXES["timestamp"].format(m) for m in ("NET/IB : Using [0]mlx5_an0:1/RoCE [RO]; OOB eth0:10.1.0.4<0>",
                                                       "Using network IB")]
    for warn in ("transport/net.cc:120 NCCL WARN Cuda failure 'out of memory'", GRAPH_WARN[1]):
        text = "\n".join(setup + [PREFIXES["timestamp"].format(warn), PREFIXES["timestamp"].format("proxy.cc:1495 -> 1")])
        r = ex.explain_text(text, "log.txt", Options())
        assert r.status == "fail", (warn, verdict(r))
    went_on = "\n".join([PREFIXES["timestamp"].format("misc/ibvwrap.cc:160 NCCL WARN Call to ibv_open_device failed"),
                         PREFIXES["timestamp"].format("transport/net_ib.cc:300 -> 2")] + setup)
    assert ex.nccl.parse(went_on)["error"] is None


# NVIDIA's RM status lines: scitix/sichek#51 (NV_ERR_RESET_REQUIRED by name and by number)
RESET_LINES = [
    "[Sun Jan 11 09:52:01 2026] NVRM: rpcRmApiAlloc_GSP: GspRmAlloc failed: hClient=0xc1d1a616; hParent=0x5c000054; "
    "hObject=0x5c00005b; hClass=0x0000c86f; paramsSize=0x00000170; paramsStatus=0x00000062; status=0x00000062",
    "[Sun Jan 11 09:52:01 2026] NVRM: nvAssertOkFailedNoLog: Assertion failed: Reset required [NV_ERR_RESET_REQUIRED] "
    "(0x00000062) returned from status @ kernel_channel.c:2874"]


@pytest.mark.parametrize("line", RESET_LINES)
def test_the_driver_asking_for_a_reset_fails_the_gpu_in_either_wording(line):
    kind = ex.kind_of(line)
    assert kind is not None and kind.check == "gpu"
    assert verdict(_gpu(**kind.parse(line))) == ("fail", "GPU_RESET_REQUIRED", "host")


def test_a_busy_gpu_or_a_job_s_allocation_refusal_drains_no_host():
    """No false drain (real excerpts, the host healthy): NVIDIA/DIGITS#2005's error 46 on a GPU in exclusive-process
    mode held by another process, and WayfireWM/wayfire#3018's NV_ERR_NO_MEMORY (an application out of VA space):
    neither is the driver asking for a reset."""
    busy = "Check failed: error == cudaSuccess (46 vs. 0)  all CUDA-capable devices are busy or unavailable"
    r = ex.explain_text(busy, "log.txt", Options())
    assert verdict(r) == ("fail", "GPU_NOT_VISIBLE", "job")        # the GPU refused to this job: no drain
    oom = ("[227646.165951] NVRM: nvAssertOkFailedNoLog: Assertion failed: Out of memory [NV_ERR_NO_MEMORY] (0x00000051) "
           "returned from pReuseMappingDb->pMapCb(pReuseMappingDb->pGlobalCtx, pAllocCtx, range, cachingFlags, &token, "
           "_reusemappingdbAddMappingCallback) @ mapping_reuse.c:273")
    facts = ex.kernel.parse(oom)
    assert facts["driver_errors"][0]["status"] == "NV_ERR_NO_MEMORY"
    assert ex.explain_text(oom, "dmesg.txt", Options()).status != "fail"
    both = ex.explain_text(busy + "\n" + RESET_LINES[1], "log.txt", Options())
    assert verdict(both) == ("fail", "GPU_RESET_REQUIRED", "host")
