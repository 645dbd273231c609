"""Issue 35: adversarial inputs per class, unlike the corpus's (other wordings, orders, prefixes), to find rules bound
to one example; and, for each host-owned verdict added here, a real excerpt where the host is healthy."""
from __future__ import annotations

from typing import Any, cast

import pytest

from verify import explain as ex
from verify.checks import gpu
from verify.checks.nccl import ncclog
from verify.options import Options
from verify.prolog import xid as xidlog

pytestmark = pytest.mark.unit


def verdict(r):
    return r.status, r.code, r.owner


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
