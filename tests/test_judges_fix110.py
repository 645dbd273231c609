# mypy: disable-error-code="arg-type, typeddict-item"
# (judges take their TypedDict facts; these tests hand them partial facts, as a translated record would)
"""Issue 35's hundred-and-tenth corpus batch (NCCL INFO logs as launchers print them, RoCE/IB), fixed by class:
- one node vs several: a group of one rank whose log shows only NCCL's set-up (a launcher whose processes never
  joined: each prints its own nccl-tests header and `Rank 0`) is one rank, NCCL_SINGLE_RANK (job), never a pass on
  "GPUs that reach each other"; `verify explain` reads a world size from nccl-tests' device lines only where they run
  0..N-1 (a lone `Rank 7` is the tail of a cut listing, not a group of one);
- a job's NCCL_IB_DISABLE (or any fall-back the job owns) on one node whose ranks meet over P2P/SHM costs nothing:
  no FABRIC_NCCL_FORCED_SOCKET there; across nodes, or with connections over NET/Socket, it is still said;
- GB10 (DGX Spark) has no GPUDirect RDMA by design (unified memory; NVIDIA's DGX Spark porting guide): IB/RoCE
  connections without /GDRDMA are no host fault there (no FABRIC_GDR_OFF, no drain); `verify explain` reads the GPU
  from torch's `Found GPU0 <name> which is of cuda capability` warning above the NCCL lines."""
from __future__ import annotations

from pathlib import Path

import pytest

from tests.judging import explained, verdict
from verify.checks import nccl
from verify.explain import nccl as ncclx
from verify.options import Options

pytestmark = pytest.mark.unit

CORPUS = Path(__file__).parent / "data" / "real-world"


# ---------------------------------------------------------- one rank each: a launcher whose processes never joined
# the corpus's a100-two-nodes-nlp-gpu-05-07-nccl-tests-each-process-rank-0-of-1-hpcx-ibext-net-ib-no-device-socket-bond0
TWO_HEADERS = """nThread 1 nGpus 1 minBytes 134217728 maxBytes 3221225472 step: 2(factor) warmup iters: 5 iters: 20 agg iters: 1 validation: 1 graph: 0
Using devices
nThread 1 nGpus 1 minBytes 134217728 maxBytes 3221225472 step: 2(factor) warmup iters: 5 iters: 20 agg iters: 1 validation: 1 graph: 0
Using devices
Rank  0 Group  0 Pid 524323 on nlp-gpu-05 device  0 [0x21] NVIDIA A100-SXM4-80GB
Rank  0 Group  0 Pid  18325 on nlp-gpu-07 device  0 [0x51] NVIDIA A100-SXM4-80GB
nlp-gpu-05:524323:524323 [0] NCCL INFO Bootstrap : Using bond0:10.25.193.57<0>
nlp-gpu-05:524323:524323 [0] NCCL INFO NET/IB : No device found.
nlp-gpu-05:524323:524323 [0] NCCL INFO NET/Socket : Using [0]bond0:10.25.193.57<0>
"""
SETUP_LOG = {"interface": "bond0:10.25.193.57<0>", "ib_no_device": True, "hcas": [], "networks": [], "transports": [],
             "net_channels": {}, "proof": ["NET/IB : No device found.", "NET/Socket : Using [0]bond0:10.25.193.57<0>"]}


@pytest.mark.parametrize("log", [SETUP_LOG, {**SETUP_LOG, "networks": ["Socket"], "network": "Socket"},
                                 {"networks": ["IBext"], "hcas": ["mlx5_0:1/IB"], "transports": [], "net_channels": {}}])
def test_one_rank_whose_log_shows_only_set_up_is_a_single_rank(log):
    r = nccl.judge({"backend": "nccl", "world_size": 1, "nodes": 1, "nccl_log": log}, Options())
    assert verdict(r) == ("skip", "NCCL_SINGLE_RANK", "job"), r.summary


def test_two_ranks_on_one_node_with_the_same_log_still_pass_on_it():
    r = nccl.judge({"backend": "nccl", "world_size": 2, "nodes": 1, "nccl_log": SETUP_LOG}, Options())
    assert r.status == "pass" and "one node" in r.summary, r.summary


def test_explain_reads_each_process_s_own_rank_0_as_one_rank():
    r = explained(TWO_HEADERS)
    assert verdict(r) == ("skip", "NCCL_SINGLE_RANK", "job"), r.summary


@pytest.mark.parametrize("lines, world", [
    # the corpus's rtx4090-x8-...-mlx5-bond-0-network-ib: the listing's last line only
    ("#  Rank  7 Group  0 Pid 1936469 on    node031 device  7 [0xd1] NVIDIA GeForce RTX 4090\n", None),
    ("#  Rank  1 Group  0 Pid   4962 on      test2 device  0 [0x81] NVIDIA A100-PCIE-40GB\n", None),
    ("#  Rank  0 Group  0 Pid   4961 on      test1 device  0 [0x81] NVIDIA A100-PCIE-40GB\n"
     "#  Rank  1 Group  0 Pid   4962 on      test2 device  0 [0x81] NVIDIA A100-PCIE-40GB\n", 2),
])
def test_device_lines_give_a_world_size_only_when_they_run_from_rank_0(lines, world):
    assert ncclx.ranks(lines)[0] == world


# ---------------------------------------------------------- a job's NCCL_IB_DISABLE on one node: nothing crosses it
# the corpus's v100-x2-one-process-nccl-2.12.12-job-ib-disable-socket-on-ib0-p2p-direct-pointer-one-node-ddp
V100 = """cdr2584:98188:98188 [0] NCCL INFO Bootstrap : Using ib0:172.19.146.21<0>
cdr2584:98188:98188 [0] NCCL INFO NET/Plugin : No plugin found (libnccl-net.so), using internal implementation
cdr2584:98188:98188 [0] NCCL INFO NCCL_IB_DISABLE set by environment to 1.
cdr2584:98188:98188 [0] NCCL INFO NET/Socket : Using [0]ib0:172.19.146.21<0>
cdr2584:98188:98188 [0] NCCL INFO Using network Socket
NCCL version 2.12.12+cuda11.7
cdr2584:98188:98759 [0] NCCL INFO Channel 00 : 0[18000] -> 1[af000] via P2P/direct pointer
cdr2584:98188:98760 [1] NCCL INFO Channel 01 : 1[af000] -> 0[18000] via P2P/direct pointer
"""
V100_LOG = {"network": "Socket", "networks": ["Socket"], "interface": "ib0:172.19.146.21<0>",
            "transports": ["P2P/direct"], "net_channels": {}, "env": {"NCCL_IB_DISABLE": "1"}}


def test_a_job_s_ib_disable_on_one_node_over_p2p_is_no_finding():
    r = nccl.judge({"backend": "nccl", "world_size": 2, "nodes": 1, "nccl_env": {"NCCL_IB_DISABLE": "1"},
                    "nccl_log": V100_LOG}, Options())
    assert r.status == "pass" and r.code is None, r.summary
    assert explained(V100).status == "pass"


@pytest.mark.parametrize("more", [
    {"nodes": 2},                                                                  # across nodes: sockets carry it
    {"nodes": 1, "nccl_log": {**V100_LOG, "net_channels": {"Socket": {"connections": 4, "gdr": 0}}}},
    {"nodes": None},                                                               # one node not shown
])
def test_a_job_s_ib_disable_that_can_carry_traffic_is_still_said(more):
    facts = {"backend": "nccl", "world_size": 2, "nccl_env": {"NCCL_IB_DISABLE": "1"}, "nccl_log": V100_LOG, **more}
    r = nccl.judge(facts, Options())
    assert r.code == "FABRIC_NCCL_FORCED_SOCKET" and r.owner == "job", r.summary


def test_a_host_owned_fall_back_on_one_node_still_warns():
    """The rule is the job's switch-off only: a node whose adapters are all down is said even on one node."""
    log = {**V100_LOG, "env": {}}
    adapters = [{"name": "mlx5_0", "ports": [{"state": "DOWN", "link_layer": "InfiniBand"}]}]
    r = nccl.judge({"backend": "nccl", "world_size": 2, "nodes": 1, "nccl_log": log, "adapters": adapters,
                    "infiniband": True}, Options())
    assert (r.status, r.code, r.owner) == ("warn", "NCCL_NET_FALLBACK", "host"), r.summary


# ---------------------------------------------------------- GB10: no GPUDirect RDMA by design
# the corpus's gb10-dgx-spark-pair-torch-nccl-net-ib-roce-gid-index-3-sixteen-channels-no-gdrdma-by-design-before-...
GB10_RAW = CORPUS / ("gb10-dgx-spark-pair-torch-nccl-net-ib-roce-gid-index-3-sixteen-channels-no-gdrdma-by-design-"
                     "before-mesh-plugin") / "raw.txt"
ROCE_LOG = {"transports": ["NET/IB"], "net_channels": {"IB": {"connections": 16, "gdr": 0}},
            "env": {"NCCL_IB_GID_INDEX": "3"}}


@pytest.mark.parametrize("log", [ROCE_LOG, {"networks": ["IB"], "hcas": ["rocep1s0f1"],
                                            "hca_gdr": {"rocep1s0f1": False}, "transports": [], "net_channels": {}}])
def test_gb10_without_gdrdma_is_no_host_fault(log):
    r = nccl.judge({"backend": "nccl", "world_size": 2, "nodes": 2, "device_name": "NVIDIA GB10", "nccl_log": log},
                   Options())
    assert r.status == "pass" and r.owner is None, r.summary


@pytest.mark.parametrize("name", [None, "NVIDIA H100 80GB HBM3", "NVIDIA GB100", "NVIDIA GB200"])
def test_a_gpu_that_can_do_gdrdma_still_warns_the_host(name):
    r = nccl.judge({"backend": "nccl", "world_size": 2, "nodes": 2, "device_name": name, "nccl_log": ROCE_LOG}, Options())
    assert verdict(r) == ("warn", "FABRIC_GDR_OFF", "host"), r.summary


def test_explain_reads_the_gpu_from_torch_s_warning_above_nccl_s_lines():
    text = GB10_RAW.read_text()
    assert "Found GPU0 NVIDIA GB10 which is of cuda capability 12.1." in text
    assert ncclx.parse(text).get("device_name") == "NVIDIA GB10"
    r = explained(text)
    assert r.status == "pass" and "GB10" in r.summary, r.summary
    # without the warning the same NCCL lines name no GPU: GDR 0 warns the host as before
    nccl_only = "\n".join(line for line in text.splitlines() if "NCCL INFO" in line)
    assert verdict(explained(nccl_only)) == ("warn", "FABRIC_GDR_OFF", "host")


def test_explain_reads_the_gpu_from_torch_s_newer_warning_alone():
    text = ("/opt/venv/lib/python3.12/site-packages/torch/cuda/__init__.py:235: UserWarning:\n"
            "NVIDIA GB10 with CUDA capability sm_121 is not compatible with the current PyTorch installation.\n"
            + "\n".join(line for line in GB10_RAW.read_text().splitlines() if "NCCL INFO" in line) + "\n")
    assert ncclx.parse(text).get("device_name") == "NVIDIA GB10"
    assert explained(text).status == "pass"


@pytest.mark.parametrize("name", ["GB10", "NVIDIA DGX Spark"])
def test_the_gpu_or_the_system_named_either_way(name):
    r = nccl.judge({"backend": "nccl", "world_size": 2, "nodes": 2, "device_name": name, "nccl_log": ROCE_LOG}, Options())
    assert r.status == "pass", r.summary


def test_a_gpu_quoted_in_prose_names_no_device():
    assert ncclx.parse("as the doc says, `Found GPU0 NVIDIA GB10 which is of cuda capability 12.1.` is harmless\n"
                       ":1:1 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[0] [send] via NET/IB/4\n").get("device_name") is None
