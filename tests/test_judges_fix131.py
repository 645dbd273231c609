"""Issue 35, batches 128, 129 and 131: the classes their blind translations showed the judges, `verify explain` and
NCCL's log reader getting wrong.
- ibstat naming the generation beside an ambiguous rate (`Rate: 40 (FDR10)`: QDR is 40 as well) is that rate: read
  by `verify explain` as ibstat's bare `Rate: 40` is (width and speed null, FACTS.md's "Translating ibstat").
- Some (not all) NVLink links inactive on two or more GPUs of one node in a single read confirm each other: a link is
  seen inactive from both its ends, a retrain caught half-way is one GPU's moment (FACTS.md's one transient rule,
  "the same reading on its peers"). One GPU alone in one read still warns.
- NCCL 2.19+'s merged virtual devices in `NET/IB : Using` (NCCL_IB_MERGE_NICS: ` [0]={[0] rocep130s0:1/RoCE, [1]
  rocep130s0:2/RoCE}`) are read as their member ports, beside unmerged ` [1]mlx5_2:1/IB`, and a `Using network`
  line whose prefix lost its tid (`host:pid [dev]`) is still that process's.
- A segmentation fault whose signal line is kept alone (no frame shown, no cause named beside it) is the software the
  image ships crashing, whichever library: NCCL_FAILED, the image's, never a drain; with NCCL's frames it stays
  CHECK_CRASHED (crash.py).
Real lines are quoted from corpus entries (by slug)."""
from __future__ import annotations

import json

import pytest

from tests.helpers import ROOT
from tests.judging import explained, nccl_verdict, replayed, verdict
from verify.checks import CHECKS
from verify.checks.nccl import ncclog
from verify.explain import ib
from verify.judging import judge
from verify.options import Options

pytestmark = pytest.mark.unit

CORPUS = ROOT / "tests" / "data" / "real-world"
FDR10 = "cx3-mcx353a-fcb-fdr-56-hca-ibstat-rate-40-fdr10-ib-write-bw-4508-mbs-ubuntu16-horovod-node01"
MESH = "v100-sxm2-32gb-x7-nvlink-s-six-link-ends-inactive-on-gpus-3-to-6-azure-azhpc-diagnostics-fixture"
MERGED = "v100-pcie-2x2-cx3-pro-roce-nccl-2.21.5-net-ib-rocep130s0-ports-1-2-no-gdrdma-ib-write-bw-4554-mbs-lab"
IBEXT = "roce-ibext-v8-three-nodes-no-gdrdma-ib-disable-not-honoured"


def _expected(slug: str, check: str) -> tuple:
    v = json.loads((CORPUS / slug / "expected.json").read_text())["verdicts"][check]
    return v["status"], v["code"], v["owner"]


# ------------------------------------------------------------------ ibstat's rate with its generation named
def test_an_ibstat_rate_with_its_generation_named_is_read_as_the_rate():
    """`Rate: 40 (FDR10)` on an MT4099 (FDR, 56 Gb/s) port: 40 Gb/s, below the adapter's maximum (FDR10 slug)."""
    text = ("CA 'mlx4_0'\n\tCA type: MT4099\n\tNumber of ports: 1\n\tPort 1:\n\t\tState: Active\n"
            "\t\tPhysical state: LinkUp\n\t\tRate: 40 (FDR10)\n\t\tLink layer: InfiniBand\n")
    port = ib.parse(text)["adapters"][0]["ports"][0]
    assert (port["rate_gbps"], port["width"], port["speed"]) == (40.0, None, None)
    raw = (CORPUS / FDR10 / "raw.txt").read_text()
    assert verdict(explained(raw, "raw.txt")) == _expected(FDR10, "fabric") == ("warn", "FABRIC_RATE_DEGRADED", "host")


def test_a_rate_with_words_that_are_no_generation_stays_unknown():
    text = "CA 'mlx5_0'\n\tPort 1:\n\t\tState: Active\n\t\tRate: 40 (see below)\n"
    assert ib.parse(text)["adapters"][0]["ports"][0]["rate_gbps"] is None


# ------------------------------------------------------------------ NVLink links down on several GPUs in one read
def _gpu(devices: list[dict]) -> tuple:
    return verdict(judge(CHECKS["gpu"], {"torch": None, "devices": devices}, Options(), source="gpu.json"))


def _v100(index: int, links: list[bool]) -> dict:
    return {"index": index, "name": "Tesla V100-SXM2-32GB", "nvlink": links, "lost": False, "nvml_errors": {}}


UP = [True] * 6


def test_links_inactive_on_several_gpus_of_one_read_confirm_each_other():
    """GPU 3 `Link 3: <inactive>` / `Link 5: <inactive>`, GPU 4 `Link 1: <inactive>` ... (MESH slug): fail."""
    assert replayed(MESH)["gpu"] == _expected(MESH, "gpu") == ("fail", "NVLINK_DOWN", "host")
    assert verdict(explained((CORPUS / MESH / "raw.txt").read_text(), "raw.txt")) == _expected(MESH, "gpu")
    assert _gpu([_v100(0, UP), _v100(1, [True, False, True, True, True, True]),
                 _v100(2, [False, True, True, True, True, True])]) == ("fail", "NVLINK_DOWN", "host")


def test_links_inactive_on_one_gpu_in_one_read_still_warn():
    """The rule's other side: one GPU, one read (`v100-sxm2-32gb-nvlink-inactive`), unconfirmed."""
    assert _gpu([_v100(0, UP), _v100(3, [True, True, True, False, True, False])]) == ("warn", "NVLINK_DOWN", "host")
    assert replayed("v100-sxm2-32gb-nvlink-inactive")["gpu"] == ("warn", "NVLINK_DOWN", "host")


# ------------------------------------------------------------------ NCCL's merged IB devices
def test_a_merged_virtual_device_is_read_as_its_member_ports():
    """`NET/IB : Using [0]={[0] rocep130s0:1/RoCE, [1] rocep130s0:2/RoCE}` (MERGED slug, NCCL 2.21.5)."""
    log = ncclog.parse((CORPUS / MERGED / "raw.txt").read_text())
    assert log["hcas"] == ["rocep130s0:1/RoCE", "rocep130s0:2/RoCE"] and log["interface"] == "rocep130s0:1/RoCE"
    assert log["rank_networks"] == {"gpuserver1:15326": "IB"}
    stored = json.loads((CORPUS / MERGED / "facts" / "nccl.json").read_text())["facts"]["nccl_log"]
    assert stored == log


def test_merged_and_unmerged_devices_on_one_line_are_all_read():
    """Two merged devices (IBEXT slug), and NCCL's unmerged form beside a merged one (net_ib.cc's ` [%d]%s:%d/%s`)."""
    log = ncclog.parse((CORPUS / IBEXT / "raw.txt").read_text())
    assert log["hcas"] == ["mlx5_0:1/RoCE", "mlx5_1:1/RoCE", "mlx5_2:1/RoCE", "mlx5_3:1/RoCE"]
    assert log["interface"] == "mlx5_2:1/RoCE"
    mixed = ("h:1:2 [0] NCCL INFO NET/IB : Using [0]={[0] mlx5_0:1/IB, [1] mlx5_1:1/IB} [1]mlx5_2:1/RoCE [RO]; "
             "OOB eth0:10.0.0.1<0>\n")
    assert ncclog.parse(mixed)["hcas"] == ["mlx5_0:1/IB", "mlx5_1:1/IB", "mlx5_2:1/RoCE"]
    plain = "h:1:2 [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/IB [1]mlx5_1:1/IB [RO]; OOB eth0:10.0.0.1<0>\n"
    assert ncclog.parse(plain)["hcas"] == ["mlx5_0:1/IB", "mlx5_1:1/IB"]
    assert ncclog.parse(plain)["interface"] == "mlx5_0:1/IB"
    empty = "h:1:2 [0] NCCL INFO NET/IB : Using [RO]; OOB eth0:10.0.0.1<0>\n"     # 2.24+: printed with no device
    assert ncclog.parse(empty)["hcas"] == []


def test_links_inactive_on_several_gpus_of_a_model_not_known_wired_are_not_confirmed():
    """No false drain: a model the table does not know may be a bridged PCIe card (H100 NVL: a fixed pattern of
    inactive links is its design), so two of them in one read stay a warning; a known bridged SKU is not judged."""
    def card(index: int, name: str) -> dict:
        return {"index": index, "name": name, "nvlink": [True] * 12 + [False] * 6, "lost": False, "nvml_errors": {}}
    assert _gpu([card(0, "NVIDIA Future GPU"), card(1, "NVIDIA Future GPU")]) == ("warn", "NVLINK_DOWN", "host")
    assert _gpu([card(0, "NVIDIA H100 NVL"), card(1, "NVIDIA H100 NVL")])[1] != "NVLINK_DOWN"


def test_a_prefix_without_its_tid_names_the_process_and_one_without_its_host_names_none():
    """`gpuserver1:15326 [0] NCCL INFO Using network IB` (MERGED slug) is gpuserver1's process 15326;
    `::16674:17023 [0] NCCL INFO Using network IB` (`azure-nc-a100-v4-image-graph-file-dev-1-not-found`) has lost its
    host, and its pid and tid are no `host:pid`."""
    assert ncclog.parse("gpuserver1:15326 [0] NCCL INFO Using network IB\n")["rank_networks"] == {"gpuserver1:15326": "IB"}
    assert ncclog.parse("::16674:17023 [0] NCCL INFO Using network IB\n")["rank_networks"] == {}
    assert ncclog.parse("node-a:11:12 [3] NCCL INFO Using network IB\n")["rank_networks"] == {"node-a:11": "IB"}


def test_the_device_list_of_nccl_2_23_on_and_of_hpc_x_s_sharp_plugin_is_read_as_before():
    """2.23+ prints the physical devices only (` [%d]%s:%d/%s`, virtual ones on `Made virtual device` lines), and
    HPC-X's plugin appends `/SHARP`: `NET/IB : Using [0]ibp0:1/IB/SHARP [1]ibp1:1/IB/SHARP [RO]; OOB ...`."""
    sharp = "h:1:2 [0] NCCL INFO NET/IB : Using [0]ibp0:1/IB/SHARP [1]ibp1:1/IB/SHARP [RO]; OOB eth0:10.0.0.1<0>\n"
    assert ncclog.parse(sharp)["hcas"] == ["ibp0:1/IB/SHARP", "ibp1:1/IB/SHARP"]
    bare = "h:1:2 [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/IB ; OOB ib0:192.168.11.1<0>\n"      # no [RO]
    assert ncclog.parse(bare)["hcas"] == ["mlx5_0:1/IB"] and ncclog.parse(bare)["interface"] == "mlx5_0:1/IB"


# ------------------------------------------------------------------ a segmentation fault with no frame shown
RAS = "h100-nccl-2.27.7-ras-thread-segfault-address-0x48-in-libnccl-training-crash-nccl-ras-enable-0-bypass"


def test_a_segmentation_fault_with_no_frame_shown_is_the_image_s_never_a_drain():
    """`collective: [n125-011-039:288505:0:296459] Caught signal 11 (Segmentation fault: address not mapped to object
    at address 0x48)` alone in `error` (RAS slug): the software crashed, whichever library; not the node."""
    assert replayed(RAS)["nccl"] == _expected(RAS, "nccl") == ("fail", "NCCL_FAILED", "image")
    for error in ("all_reduce: Segmentation fault (core dumped)", "init: SIGSEGV"):
        assert nccl_verdict(backend="nccl", error=error) == ("fail", "NCCL_FAILED", "image")


def test_a_segmentation_fault_with_frames_keeps_the_frames_rule():
    """NCCL's frames: CHECK_CRASHED (image); the driver's (`libcuda.so`): not this rule's, never the image's by it."""
    nccl = "all_reduce: Caught signal 11 (Segmentation fault) | 3 /opt/nccl/lib/libnccl.so(+0x120057) [0x7ff1c18c1057]"
    assert nccl_verdict(backend="nccl", error=nccl) == ("fail", "CHECK_CRASHED", "image")
    driver = "all_reduce: Caught signal 11 (Segmentation fault) | 3 /usr/lib/x86_64-linux-gnu/libcuda.so.1(+0x2a1f) [0x1]"
    assert nccl_verdict(backend="nccl", error=driver)[2] != "image"
    hung = "all_reduce: Watchdog caught collective operation timeout ... Segmentation fault (core dumped)"
    assert nccl_verdict(backend="nccl", error=hung)[1] == "NCCL_TIMEOUT"
