# mypy: disable-error-code="arg-type, typeddict-item"
"""The fabric check and NCCL's network choice (issue 25): the INFO-log parser per NCCL release, the pure fabric
judge, the probe replaying a /sys + /dev tree under VERIFY_FABRIC_ROOT, the owners of a fall-back to sockets, the
multi-node bandwidth against the links, and the real 1-GPU H100 record that a 1-rank all-reduce once failed.

Log lines are either quoted from public issues (URL beside them) or written in the exact format of the printf at the
release tag cited (github.com/NVIDIA/nccl, github.com/aws/aws-ofi-nccl); hand-made facts say so in their names."""
from __future__ import annotations

import json
import os
import shutil

import pytest

from tests.helpers import ROOT
from tests.verify_handmade import nccl_facts, variant
from verify import judging, replay
from verify.checks import CHECKS, fabric, nccl
from verify.checks.fabric import check as fabric_check
from verify.checks.nccl import ncclog
from verify.checks.nccl.transport import gdr_summary
from verify.options import Options
from verify.result import CheckResult
from verify.shared import rdma

pytestmark = pytest.mark.unit
H100_RECORD = ROOT / "tests" / "data" / "gpu" / "h100-80gb-hbm3-2026-11-25" / "facts"


def verdict(r: CheckResult) -> tuple:
    return r.status, r.code, r.owner


def info(message: str) -> str:
    """One line as NCCL prints it: `host:pid:tid [dev] NCCL INFO <message>`."""
    return f"node0:4242:4250 [0] NCCL INFO {message}"


# ------------------------------------------------------------------------------------------- the log parser
PLUGIN_MISSING = {
    # v2.18.6-1 src/net.cc l.179-180; quoted from https://github.com/NVIDIA/nccl-tests/issues/185 (dgxh100-3)
    "2.18": ["NET/Plugin : Plugin load (libnccl-net.so) returned 2 : libnccl-net.so: cannot open shared object file: "
             "No such file or directory", "NET/Plugin : No plugin found, using internal implementation"],
    # v2.19.4-1 src/net.cc l.231; quoted from https://github.com/NVIDIA/nccl-tests/issues/185 (dgxh100-4, 2.19.3)
    "2.19": ["NET/Plugin : dlerror=libnccl-net.so: cannot open shared object file: No such file or directory No plugin "
             "found (libnccl-net.so), using internal implementation"],
    "2.21": ["NET/Plugin: No plugin found (libnccl-net.so)"],                        # v2.21.5-1 src/net.cc l.349
    "2.22": ["NET/Plugin: Could not find: libnccl-net.so. Using internal network plugin."],  # v2.22.3-1 l.438
    "2.26": ["NET/Plugin: Could not find: libnccl-net.so"],     # v2.26+ src/plugin/plugin_open.cc "%s/Plugin: Could not find:%s%s%s"
}


@pytest.mark.parametrize("release", PLUGIN_MISSING)
def test_a_missing_net_plugin_is_read_in_every_release_and_is_harmless_on_ib(release):
    text = "\n".join(info(m) for m in PLUGIN_MISSING[release] + [
        "NET/IB : Using [0]mlx5_10:1/RoCE [1]mlx5_11:1/RoCE [RO]; OOB enp220s0np0:11.1.128.136<0>", "Using network IB"])
    log = ncclog.parse(text)
    assert log["plugin_missing"] and log["network"] == "IB" and log["hcas"] == ["mlx5_10:1/RoCE", "mlx5_11:1/RoCE"]
    assert log["ib_error"] is None                  # the internal IB transport is used: nothing failed
    facts = variant(nccl_facts(world=16), nodes=2, infiniband=True, nccl_log=log)
    assert all(f["code"] != "NCCL_NET_FALLBACK" for f in nccl.judge(facts, Options()).data.get("findings", []))


@pytest.mark.parametrize("lines, name", [
    (["Failed to open libibverbs.so[.1]"], "2.18-2.28"),              # v2.18.6-1..v2.28.9-1 src/misc/ibvsymbols.cc l.78/81
    (["Count not open libibverbs.so", "Count not open libibverbs.so.1"], "2.30"),   # v2.30.7-1 ibvsymbols.cc l.86 (sic)
])
def test_libibverbs_missing_is_read_in_both_spellings(lines, name):
    text = "\n".join(info(m) for m in [*lines, "NET/Socket : Using [0]eth0:10.177.137.15<0>", "Using network Socket"])
    log = ncclog.parse(text)
    assert log["verbs_missing"] == lines[0] and log["network"] == "Socket" and log["interface"] == "eth0:10.177.137.15<0>"
    facts = variant(nccl_facts(world=16), nodes=2, infiniband=True, nccl_log=log)
    r = nccl.judge(facts, Options())
    assert verdict(r) == ("fail", "NCCL_NET_FALLBACK", "image") and lines[0] in r.summary, name


def test_the_ib_device_list_empty_from_2_24_and_absent_before():
    # v2.24.3-1 src/transport/net_ib.cc l.659/672: "No device found." then the Using line, empty
    newer = ncclog.parse(info("NET/IB : No device found.") + "\n" + info("NET/IB : Using [RO]; OOB eth0:10.0.0.1<0>"))
    assert newer["hcas"] == [] and newer["ib_no_device"] is True and newer["ib_error"] == "NET/IB : No device found."
    older = ncclog.parse(info("NET/IB : No device found."))                  # v2.23.4-1: no Using line at all
    assert older["hcas"] == [] and older["ib_no_device"] is True
    assert ncclog.parse(info("Using network IB"))["hcas"] is None            # not printed: not known


def test_network_names_with_a_space_and_gdr_per_connection():
    # v2.18.6-1 src/transport/net.cc l.186-228: "Channel %02d/%d : %d[%d] -> %d[%d] [send] via NET/%s/%d%s%s";
    # v2.28.9-1 l.313 adds "(PCI)" after /GDRDMA; the (%d) proxy rank form l.317. aws-ofi-nccl < 1.13 names
    # itself "AWS Libfabric" (v1.9.2-aws src/nccl_ofi_interface_nvidia.c l.208), later "Libfabric".
    text = "\n".join(info(m) for m in [
        "Using network AWS Libfabric",
        "Channel 00/0 : 7[7] -> 8[0] [send] via NET/AWS Libfabric/0/GDRDMA",
        "Channel 00/0 : 8[0] -> 7[7] [receive] via NET/AWS Libfabric/0/GDRDMA(PCI)",
        "Channel 01/0 : 7[7] -> 8[0] [send] via NET/AWS Libfabric/1(3)/GDRDMA/Shared",
        "Channel 02/0 : 7[7] -> 8[0] [send] via NET/AWS Libfabric/2",
        "NET/OFI Selected provider is efa, fabric is efa-direct (found 4 nics)",    # v1.16.3 nccl_ofi_net.cpp l.656
    ])
    log = ncclog.parse(text)
    assert log["network"] == "AWS Libfabric" and log["ofi_provider"] == "efa"
    assert log["net_channels"] == {"AWS Libfabric": {"connections": 4, "gdr": 3}}


def test_the_collnet_symbol_message_is_harmless():
    # v2.21.5-1 src/net.cc l.467; quoted in https://github.com/aws/aws-ofi-nccl/issues/889
    log = ncclog.parse(info("NET/Plugin: Failed to find ncclCollNetPlugin_v8 symbol.") + "\n" + info("Using network IB"))
    assert log["plugin_missing"] is None and log["ib_error"] is None and log["network"] == "IB"


def test_other_plugin_kinds_are_not_the_net_plugin():
    # 2.28.9 prints "ENV/Plugin: Could not find: libnccl-env.so" (https://github.com/siderolabs/docs/issues/566)
    log = ncclog.parse(info("ENV/Plugin: Could not find: libnccl-env.so") + "\n"
                       + info("PROFILER/Plugin: Could not find: libnccl-profiler.so."))
    assert log["plugin_missing"] is None


def test_ofi_over_tcp_is_a_fall_back_and_the_old_provider_spelling_is_read():
    # v1.12.1-aws prints "Selected Provider is tcp (found 1 nics)": https://github.com/aws/aws-ofi-nccl/issues/803
    log = ncclog.parse(info("NET/OFI Selected Provider is tcp (found 1 nics)") + "\n" + info("Using network Libfabric"))
    assert log["ofi_provider"] == "tcp"
    facts = variant(nccl_facts(world=16), nodes=2, efa=True, infiniband=True, nccl_log=log, uverbs=[])
    r = nccl.judge(facts, Options())
    assert verdict(r) == ("fail", "NCCL_NET_FALLBACK", "job") and "provider tcp" in r.summary


def test_no_nccl_line_is_no_log():
    assert ncclog.parse("") == {} and ncclog.parse("hello\nworld") == {}


# --------------------------------------------------------------------------- NCCL_NET_FALLBACK's owners
def _socket_log(*extra: str) -> dict:
    return ncclog.parse("\n".join(info(m) for m in [*extra, "NET/Socket : Using [0]eth0:10.0.0.2<0>",
                                                     "Using network Socket"]))


@pytest.mark.parametrize("changes, owner, needle", [
    ({"nccl_env": {"NCCL_IB_DISABLE": "1"}}, "job", "NCCL_IB_DISABLE=1"),
    ({"verbs_loads": False}, "image", "lacks libibverbs"),
    ({"uverbs": [], "verbs_loads": True}, "job", "/dev/infiniband"),
    ({"uverbs": ["uverbs0"], "verbs_loads": True}, "image", "verbs provider"),
    ({}, "job", "NCCL found no IB device"),          # devices and verbs not recorded: "No device found" alone
])
def test_net_fallback_owner_handmade(changes, owner, needle):
    """The log says `NET/IB : No device found.` then Socket; who owns it follows what else is known."""
    facts = variant(nccl_facts(world=16), nodes=2, infiniband=True, nccl_log=_socket_log("NET/IB : No device found."),
                    **changes)
    r = nccl.judge(facts, Options())
    # issue 35: sockets the job's own variables force are FABRIC_NCCL_FORCED_SOCKET (the code that says so)
    code = "FABRIC_NCCL_FORCED_SOCKET" if "NCCL_IB_DISABLE" in changes.get("nccl_env", {}) else "NCCL_NET_FALLBACK"
    assert verdict(r) == ("fail", code, owner) and needle in r.summary


def test_efa_without_the_plugin_is_the_image_s_handmade():
    log = _socket_log("NET/Plugin: Could not find: libnccl-net.so. Using internal network plugin.",
                      "Failed to open libibverbs.so[.1]")
    r = nccl.judge(variant(nccl_facts(world=16), nodes=2, efa=True, infiniband=True, nccl_log=log), Options())
    assert verdict(r) == ("fail", "NCCL_NET_FALLBACK", "image") and "aws-ofi-nccl" in r.summary


# ------------------------------------------------------------------------------- item 6: busbw vs links
def _ib_adapters(n: int, gbps: float) -> list[dict]:
    return [{"name": f"mlx5_{i}", "driver": "mlx5_core", "hca_type": "MT4129", "ports": [
        {"port": 1, "state": "ACTIVE", "phys_state": "LinkUp", "rate_gbps": gbps, "link_layer": "InfiniBand"}]}
        for i in range(n)]


def test_multi_node_busbw_far_below_the_links_fails_naming_the_figure_handmade():
    log = ncclog.parse(info("NET/IB : Using [0]mlx5_0:1/IB [1]mlx5_1:1/IB ; OOB ib0:10.0.0.1<0>") + "\n"
                       + info("Using network IB"))
    facts = variant(nccl_facts(world=16, peak=10.0), nodes=2, infiniband=True, adapters=_ib_adapters(8, 400.0),
                    nccl_log=log, device_name="unknown GPU")
    r = nccl.judge(facts, Options())
    assert verdict(r) == ("fail", "FABRIC_BANDWIDTH_LOW", "host")
    assert "100.0 GB/s" in r.summary and "2 listed by NCCL" in r.summary and "/sys/class/infiniband" in r.summary
    warn = nccl.judge(variant(facts, sizes=nccl_facts(world=16, peak=40.0)["sizes"]), Options())
    assert verdict(warn) == ("warn", "FABRIC_BANDWIDTH_LOW", "host")
    fine = nccl.judge(variant(facts, sizes=nccl_facts(world=16, peak=90.0)["sizes"]), Options())
    assert fine.status == "pass" and fine.metrics["busbw_vs_links"].value == pytest.approx(0.9)


def test_one_node_is_not_judged_against_the_links_handmade():
    facts = variant(nccl_facts(world=8, peak=472.0), adapters=_ib_adapters(8, 400.0))
    assert "busbw_vs_links" not in nccl.judge(facts, Options()).metrics


# ---------------------------------------------------------------------- item 5: the real 1-GPU H100 record
def test_the_real_one_gpu_h100_record_is_no_bandwidth_and_no_failure(tmp_path):
    """A 1-rank all-reduce (tests/data/gpu/h100-80gb-hbm3-2026-11-25, recorded on a real H100) moves nothing: its
    algbw of 33000-260000 GB/s once tripped the plausibility gate (MEASUREMENT_INVALID, host)."""
    folder = tmp_path / "facts"
    shutil.copytree(H100_RECORD, folder)
    loaded = replay.load(str(folder), ["nccl"], {})
    r = replay.judge(loaded.records[0], loaded.options)
    assert verdict(r) == ("skip", "NCCL_SINGLE_RANK", "job"), r.summary
    assert "nothing crossed a link" in r.summary and "4.254 s" in r.summary
    assert "algbw_max" not in r.metrics and "busbw_max" not in r.metrics
    recorded = json.loads((H100_RECORD / "nccl.json").read_text())["result"]
    assert recorded["code"] == "MEASUREMENT_INVALID"          # what the old gate said, kept in the record


def test_algbw_is_still_gated_when_ranks_communicate():
    facts = nccl_facts(world=8)
    facts["sizes"][0]["algbw"] = 33000.0
    assert judging.judge(CHECKS["nccl"], facts, Options()).code == "MEASUREMENT_INVALID"


# ------------------------------------------------------------------------------------ the fabric judge
def healthy_handmade() -> dict:
    return {"root": "/", "adapters": _ib_adapters(2, 400.0), "uverbs": ["uverbs0", "uverbs1"], "rdma_cm": True,
            "libraries": {n: fabric_check.LOADED for n in fabric_check.LIBRARIES}, "providers": ["efa", "mlx5"],
            "verbs_devices": ["mlx5_0", "mlx5_1"], "verbs_error": None, "memlock": "unlimited", "peermem": True,
            "gpu_module": "proprietary", "kernel": "5.15.0", "net_plugins": [], "nccl_env": {}}


def judge_fabric(facts: dict) -> CheckResult:
    return judging.judge(CHECKS["fabric"], facts, Options())


def test_a_sound_fabric_passes_handmade():
    r = judge_fabric(healthy_handmade())
    assert r.status == "pass" and "2 active port(s), 800 Gb/s" in r.summary and r.metrics["link_gbps"].value == 800



def test_a_port_of_unknown_rate_is_no_zero_in_the_summary_handmade():
    """sysfs can say `NaN Gb/sec` (the probe records no rate): the pass rests on the port's state, and the summary
    says the rate is unknown rather than adding it as 0 Gb/s; no link figure is written on a sum it cannot make."""
    facts = healthy_handmade()
    facts["adapters"][1]["ports"][0]["rate_gbps"] = None
    r = judge_fabric(facts)
    assert r.status == "pass" and "400 Gb/s on 1, 1 at a rate unknown" in r.summary and "link_gbps" not in r.metrics
    [a["ports"][0].update(rate_gbps=None) for a in facts["adapters"]]
    r = judge_fabric(facts)
    assert r.status == "pass" and "2 active port(s), each at a rate unknown" in r.summary and "0 Gb/s" not in r.summary


@pytest.mark.parametrize("change, expected", [
    (lambda f: f.update(uverbs=[]), ("fail", "FABRIC_NOT_PASSED", "job")),
    (lambda f: f["libraries"].update({"libibverbs.so.1": "libibverbs.so.1: cannot open shared object file"}),
     ("fail", "FABRIC_USERSPACE_MISSING", "image")),
    (lambda f: f.update(providers=["efa"]), ("fail", "FABRIC_USERSPACE_MISSING", "image")),
    (lambda f: f.update(verbs_devices=[]), ("fail", "FABRIC_USERSPACE_MISSING", "image")),
    # a rail with no link (Polling) beside an active one of its model fails; a port turned off (Disabled) warns
    (lambda f: f["adapters"][0]["ports"][0].update(state="DOWN", phys_state="Polling"), ("fail", "FABRIC_PORT_DOWN", "host")),
    (lambda f: f["adapters"][0]["ports"][0].update(state="DOWN", phys_state="Disabled"), ("warn", "FABRIC_PORT_DOWN", "host")),
    (lambda f: [a["ports"][0].update(state="INIT") for a in f["adapters"]], ("fail", "FABRIC_PORT_DOWN", "host")),
    (lambda f: f["adapters"][1]["ports"][0].update(rate_gbps=200.0), ("warn", "FABRIC_RATE_DEGRADED", "host")),
    (lambda f: f.update(memlock=65536), ("fail", "FABRIC_MEMLOCK_LOW", "job")),
    (lambda f: f.update(nccl_env={"NCCL_IB_DISABLE": "1"}), ("fail", "FABRIC_NCCL_FORCED_SOCKET", "job")),
    (lambda f: f.update(nccl_env={"NCCL_NET": "Socket"}), ("fail", "FABRIC_NCCL_FORCED_SOCKET", "job")),
    (lambda f: f.update(nccl_env={"NCCL_IB_HCA": "mlx4"}), ("fail", "FABRIC_NCCL_FORCED_SOCKET", "job")),
    (lambda f: f.update(nccl_env={"NCCL_IB_HCA": "^mlx5_0,mlx5_1"}), ("fail", "FABRIC_NCCL_FORCED_SOCKET", "job")),
    (lambda f: f.update(peermem=False), ("warn", "FABRIC_GDR_OFF", "host")),
])
def test_each_fault_has_its_code_and_owner_handmade(change, expected):
    facts = healthy_handmade()
    change(facts)
    assert verdict(judge_fabric(facts)) == expected


def test_nccl_ib_hca_forms_that_match_pass_handmade():
    for spec in ("mlx5", "mlx5_0:1,mlx5_1:1", "=mlx5_0", "^mlx5_1"):
        assert judge_fabric(variant(healthy_handmade(), nccl_env={"NCCL_IB_HCA": spec})).status == "pass", spec


def test_dma_buf_is_gdr_without_peermem_handmade():
    facts = variant(healthy_handmade(), peermem=False, gpu_module="open", kernel="6.8.0-45-generic")
    assert judge_fabric(facts).status == "pass"
    assert judge_fabric(variant(facts, kernel="5.4.0")).code == "FABRIC_GDR_OFF"


def test_efa_names_the_missing_piece_handmade():
    efa = variant(healthy_handmade(), adapters=[{"name": "rdmap16s27", "driver": "efa", "hca_type": None, "ports": [
        {"port": 1, "state": "ACTIVE", "phys_state": "LinkUp", "rate_gbps": 100.0, "link_layer": "Unspecified"}]}],
        verbs_devices=["rdmap16s27"])
    r = judge_fabric(efa)
    assert verdict(r) == ("fail", "FABRIC_EFA_PLUGIN_MISSING", "image") and "aws-ofi-nccl net plugin" in r.summary
    no_fabric = variant(efa, net_plugins=["/opt/amazon/ofi-nccl/lib/libnccl-net-ofi.so"])
    no_fabric["libraries"]["libfabric.so.1"] = "libfabric.so.1: cannot open shared object file"
    assert "libfabric.so.1" in judge_fabric(no_fabric).summary
    assert judge_fabric(variant(efa, net_plugins=["/opt/amazon/ofi-nccl/lib/libnccl-net-ofi.so"])).status == "pass"


def test_no_rdma_anywhere_is_a_skip_never_a_fail():
    facts = variant(healthy_handmade(), adapters=[], uverbs=[], verbs_devices=[], nccl_env={"NCCL_IB_DISABLE": "1"})
    assert verdict(judge_fabric(facts)) == ("skip", "FABRIC_NONE", "host")


def test_a_host_listing_alone_is_judged_on_its_ports_and_says_what_was_not():
    """As a translated nvidia-smi listing passes on what it shows (tests/data/real-world), an ibstat listing does:
    its ports are judged, the container side is named as not judged; with no port state at all, nothing is judged."""
    r = judge_fabric({"adapters": _ib_adapters(8, 400.0), "uverbs": None, "libraries": None})
    assert r.status == "pass" and "not judged" in r.summary and "8 active port(s), 3200 Gb/s" in r.summary
    bare = {"adapters": [{"name": "mlx5_0", "ports": [{"port": 1}]}], "uverbs": None}
    assert verdict(judge_fabric(bare)) == ("skip", "FACTS_INCOMPLETE", None)
    assert verdict(judge_fabric({})) == ("skip", "FACTS_INCOMPLETE", None)


@pytest.mark.parametrize("bad", [{"memlock": -1}, {"memlock": "lots"}, {"adapters": [{"name": "x", "ports": [
    {"rate_gbps": float("nan")}]}]}, {"uverbs": "uverbs0"}])
def test_implausible_fabric_facts_are_refused(bad):
    r = judging.judge(CHECKS["fabric"], variant(healthy_handmade(), **bad), Options(), source="r/fabric.json")
    assert verdict(r) == ("fail", "FACTS_INVALID", "job")


# ------------------------------------------------------------------- the probe, replaying a /sys + /dev tree
def _tree(root, adapters: dict[str, dict], uverbs: int = 0) -> None:
    for name, spec in adapters.items():
        dev = root / "sys" / "class" / "infiniband" / name
        (dev / "device").mkdir(parents=True)
        (dev / "hca_type").write_text(spec["hca_type"] + "\n")
        drivers = root / "sys" / "bus" / "pci" / "drivers" / spec["driver"]
        drivers.mkdir(parents=True, exist_ok=True)
        os.symlink(drivers, dev / "device" / "driver")
        for number, (state, phys, rate, layer) in spec["ports"].items():
            port = dev / "ports" / str(number)
            port.mkdir(parents=True)
            for field, text in (("state", state), ("phys_state", phys), ("rate", rate), ("link_layer", layer)):
                (port / field).write_text(text + "\n")
    (root / "dev" / "infiniband").mkdir(parents=True)
    for i in range(uverbs):
        (root / "dev" / "infiniband" / f"uverbs{i}").write_text("")
    (root / "proc").mkdir()
    (root / "proc" / "modules").write_text("nvidia_peermem 16384 0 - Live 0x0000000000000000\n")


def test_the_probe_reads_a_sysfs_tree_under_its_root(tmp_path, monkeypatch):
    _tree(tmp_path, {"mlx5_0": {"hca_type": "MT4129", "driver": "mlx5_core", "ports": {
        1: ("4: ACTIVE", "5: LinkUp", "400 Gb/sec (4X NDR)", "InfiniBand")}},
        "mlx5_1": {"hca_type": "MT4129", "driver": "mlx5_core", "ports": {
            1: ("1: DOWN", "2: Polling", "10 Gb/sec (4X SDR)", "InfiniBand")}}}, uverbs=2)
    monkeypatch.setenv(rdma.ROOT_ENV, str(tmp_path))
    facts = fabric.probe(Options())
    assert facts["root"] == str(tmp_path) and facts["uverbs"] == ["uverbs0", "uverbs1"] and facts["peermem"] is True
    assert facts["adapters"][0] == {"name": "mlx5_0", "driver": "mlx5_core", "hca_type": "MT4129", "ports": [
        {"port": 1, "state": "ACTIVE", "phys_state": "LinkUp", "rate_gbps": 400.0, "width": 4, "speed": "NDR",
         "link_layer": "InfiniBand"}]}
    assert facts["adapters"][1]["ports"][0]["phys_state"] == "Polling"
    r = judging.judge(CHECKS["fabric"], facts, Options())
    codes = {f["code"] for f in r.data["findings"]}
    assert "FABRIC_PORT_DOWN" in codes
    if facts["libraries"]["libibverbs.so.1"] != fabric_check.LOADED:       # this machine: no rdma-core installed
        assert verdict(r) == ("fail", "FABRIC_USERSPACE_MISSING", "image") and "libibverbs.so.1" in r.summary


def test_the_probe_without_any_rdma_is_a_skip(tmp_path, monkeypatch):
    (tmp_path / "sys").mkdir()
    monkeypatch.setenv(rdma.ROOT_ENV, str(tmp_path))
    facts = fabric.probe(Options())
    assert facts["adapters"] == [] and facts["uverbs"] == [] and facts["rdma_cm"] is False
    assert isinstance(facts["memlock"], int) or facts["memlock"] == "unlimited"
    assert verdict(judging.judge(CHECKS["fabric"], facts, Options())) == ("skip", "FABRIC_NONE", "host")


@pytest.mark.parametrize("text, parsed", [
    ("400 Gb/sec (4X NDR)", (400.0, 4, "NDR")), ("100 Gb/sec (4X EDR)", (100.0, 4, "EDR")),
    ("2.5 Gb/sec (1X SDR)", (2.5, 1, "SDR")), ("200 Gb/sec", (200.0, None, None)), ("junk", (None, None, None)),
    # SDR as the kernel prints it, no speed named (an InfiniHost III's port, batch 188's hpv00 entry)
    ("10 Gb/sec (4X)", (10.0, 4, None)),
])
def test_sysfs_rate_strings(text, parsed):
    assert rdma.rate(text) == parsed


# ------------------------------------------------------------------------ the real-world corpus's sysfs trees
CORPUS = ROOT / "tests" / "data" / "real-world"


@pytest.mark.parametrize("item", sorted(p for p in CORPUS.iterdir() if (p / "root").is_dir()), ids=lambda p: p.name)
def test_each_translated_listing_probes_back_to_its_facts(item):
    """A listing is translated into a sysfs tree (root/) by the letter of FACTS.md; the probe reading that tree
    under VERIFY_FABRIC_ROOT gives exactly the adapters the facts hold."""
    facts = json.loads((item / "facts" / "fabric.json").read_text())["facts"]
    # the probe leaves out a PCI device id it could not read: a missing key is null (FACTS.md), as a translator writes it
    adapters = [{k: v for k, v in a.items() if not (k == "pci_device" and v is None)} for a in facts["adapters"]]
    # in the order the probe lists them (by name): a listing printed in another order holds the same adapters
    assert facts["root"] == "root" and rdma.adapters(str(item / "root")) == sorted(adapters, key=lambda a: a["name"])


def test_an_ib_hca_that_matches_nothing_is_the_job_s_fall_back_handmade():
    facts = variant(nccl_facts(world=16), nodes=2, infiniband=True, adapters=_ib_adapters(2, 400.0), uverbs=["uverbs0"],
                    verbs_loads=True, nccl_env={"NCCL_IB_HCA": "mlx4_0"}, nccl_log=_socket_log("NET/IB : No device found."))
    r = nccl.judge(facts, Options())
    assert verdict(r) == ("fail", "NCCL_NET_FALLBACK", "job") and "NCCL_IB_HCA=mlx4_0" in r.summary


def test_ib_without_gdr_on_any_connection_warns_and_with_it_does_not_handmade():
    lines = ["Using network IB", "Channel 00/0 : 0[0] -> 8[0] [send] via NET/IB/0",
             "Channel 00/0 : 8[0] -> 0[0] [receive] via NET/IB/0"]
    facts = variant(nccl_facts(world=16, peak=40.0), nodes=2, device_name="unknown GPU",
                    nccl_log=ncclog.parse("\n".join(info(m) for m in lines)))
    r = nccl.judge(facts, Options())
    assert verdict(r) == ("warn", "FABRIC_GDR_OFF", "host") and "2 IB/RoCE connection(s)" in r.summary
    assert any("NET/IB 2 connection(s), 0 with GDR" in d for d in r.details)
    gdr = [m.replace("NET/IB/0", "NET/IB/0/GDRDMA") for m in lines]
    assert nccl.judge(variant(facts, nccl_log=ncclog.parse("\n".join(info(m) for m in gdr))), Options()).status == "pass"


def test_a_truncated_port_is_not_down_and_sysfs_spellings_are_read_handmade():
    facts = healthy_handmade()
    facts["adapters"][0]["ports"][0].update(phys_state=None)
    facts["adapters"][1]["ports"][0].update(state="4: ACTIVE", phys_state="5: LinkUp")
    assert judge_fabric(facts).status == "pass"


def test_gdr_disabled_per_hca_is_read():
    # v2.18.6-1 src/graph/topo.cc l.643 .. v2.30.7-1 l.1653: "NET/%s : GPU Direct RDMA %s for HCA %d '%s'";
    # quoted from https://github.com/NVIDIA/nccl/issues/1537
    log = ncclog.parse("\n".join(info(m) for m in ["Using network IB", "NET/IB : GPU Direct RDMA Disabled for HCA 0 'mlx5_0'",
                                                   "NET/IB : GPU Direct RDMA Enabled for HCA 1 'mlx5_1'"]))
    assert log["hca_gdr"] == {"mlx5_0": False, "mlx5_1": True}
    r = nccl.judge(variant(nccl_facts(world=16, peak=40.0), nodes=2, device_name="unknown GPU", nccl_log=log), Options())
    assert r.status == "pass"                 # one HCA with GDR: not "disabled for every HCA"


def test_one_gpu_per_node_expects_one_nic_not_all_of_them_handmade():
    """NVIDIA/nccl-tests#232: 1 H100 per node beside 4 NICs reaches ~41 GB/s; its PCIe link drives one NIC's worth."""
    facts = variant(nccl_facts(world=2, peak=41.5), nodes=2, gpus=1, infiniband=True, adapters=_ib_adapters(4, 400.0),
                    device_name="unknown GPU", nccl_log=ncclog.parse(info("Using network IB")))
    r = nccl.judge(facts, Options())
    assert r.status == "pass" and r.metrics["busbw_vs_links"].value == pytest.approx(41.5 / 50, rel=0.01)
    assert any("1 driven by 1 rank(s) per node = 400 Gb/s" in d for d in r.details)


def test_the_hpcx_ibext_plugin_counts_as_ib_for_gdr():
    # "Using network IBext" with the SHARP plugin: https://github.com/NVIDIA/nccl/issues/988
    lines = ["NET/IB : Using [0]mlx5_0:1/IB/SHARP [1]mlx5_1:1/IB/SHARP ; OOB eth0:10.0.1.2<0>", "Using network IBext",
             "Channel 00/0 : 0[0] -> 8[0] [send] via NET/IBext/0"]
    log = ncclog.parse("\n".join(info(m) for m in lines))
    assert log["hcas"] == ["mlx5_0:1/IB/SHARP", "mlx5_1:1/IB/SHARP"] and gdr_summary(log) == (1, 0)


def test_socket_although_verbs_see_the_devices_is_the_host_s_quoting_the_log_handmade():
    log = ncclog.parse("\n".join(info(m) for m in ["NET/IB : Using [0]mlx5_0:1/IB ; OOB ib0:10.0.0.1<0>",
                                                     "NET/Socket : Using [0]eth0:10.0.0.2<0>", "Using network Socket"]))
    facts = variant(nccl_facts(world=16), nodes=2, infiniband=True, uverbs=["uverbs0"], verbs_loads=True, nccl_log=log)
    r = nccl.judge(facts, Options())
    assert verdict(r) == ("fail", "NCCL_NET_FALLBACK", "host") and "`Using network Socket`" in r.summary


def test_socket_because_every_port_is_down_is_the_host_s_handmade():
    down = _ib_adapters(2, 400.0)
    for a in down:
        a["ports"][0].update(state="DOWN", phys_state="Polling")
    facts = variant(nccl_facts(world=16), nodes=2, infiniband=True, adapters=down, uverbs=["uverbs0", "uverbs1"],
                    verbs_loads=True, nccl_log=_socket_log("NET/IB : No device found."))
    assert verdict(nccl.judge(facts, Options())) == ("fail", "NCCL_NET_FALLBACK", "host")


def test_net_plugins_and_providers_are_found_under_the_root(tmp_path):
    plugin = tmp_path / "opt" / "amazon" / "ofi-nccl" / "lib" / "x86_64-linux-gnu" / "libnccl-net-ofi.so"
    plugin.parent.mkdir(parents=True)
    plugin.write_text("")
    (tmp_path / "etc" / "libibverbs.d").mkdir(parents=True)
    (tmp_path / "etc" / "libibverbs.d" / "efa.driver").write_text("driver efa\n")
    lib = tmp_path / "usr" / "lib" / "x86_64-linux-gnu" / "libibverbs" / "libmlx5-rdmav34.so"
    lib.parent.mkdir(parents=True)
    lib.write_text("")
    assert rdma.net_plugins(str(tmp_path), {}) == ["opt/amazon/ofi-nccl/lib/x86_64-linux-gnu/libnccl-net-ofi.so"]
    assert rdma.net_plugins(str(tmp_path / "none"), {"LD_LIBRARY_PATH": ""}) == []
    assert rdma.providers(str(tmp_path)) == ["efa", "mlx5"]
