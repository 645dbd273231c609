# mypy: disable-error-code="arg-type, typeddict-item"
# (judges take their TypedDict facts; these tests hand them partial facts, as a translated record would)
"""Issue 35's sixty-fifth corpus batch, fixed by class:
- nccl-tests' device lines pasted into a page outside a code block lose their `#` to Markdown (a heading): `verify
  explain` reads `Rank 0 Group 0 Pid ... on <host> device 0 [...] <GPU>` as it reads `#  Rank ...`;
- a run of one rank with no collective's figures or failure recorded (a table cut before its rows) measured nothing
  whatever it printed: NCCL_SINGLE_RANK, the job's shape, as FACTS.md says of world size 1; not "nothing to judge";
- aws-ofi-nccl's `Selected Provider is efa` is NCCL's network chosen through EFA, as `Using network IB` is: a log that
  shows it (communicators complete, no failure) passes with the bandwidth not assessed;
- NCCL's own `Cuda failure 'initialization error'` (ncclUnhandledCudaError) met by a process whose CUDA had already
  run: the job's process (a fork after CUDA started, a launcher that dropped the CUDA environment), never the node's;
  the program's own first call failing so (nccl-tests' `Test CUDA failure`) is not read so;
- a failure after the job's NCCL_IB_HCA pinned NCCL to a device with no PCI function behind it (`Could not find real
  path of rxe1`: Soft-RoCE, soft-iWARP): the job's choice of device, never the node's adapters."""
from __future__ import annotations

import pytest

from tests.judging import explained, verdict
from verify import explain as ex
from verify.checks import nccl
from verify.options import Options

pytestmark = pytest.mark.unit


# ------------------------------------------------------------------ device lines whose `#` Markdown ate
def _header(ranks: int) -> str:
    lines = [" nThread 1 nGpus 1 minBytes 8 maxBytes 134217728 step: 2(factor) warmup iters: 5 iters: 20 agg iters: 1 "
             "validation: 1 graph: 0", "", " Using devices"]
    lines += [f"  Rank  {r} Group  0 Pid  {4100 + r} on gpu-node-{r} device  0 [0x00] NVIDIA L4" for r in range(ranks)]
    lines += ["", "       size         count      type   redop    root     time   algbw   busbw #wrong     time   "
              "algbw   busbw #wrong"]
    return "\n".join(lines) + "\n"


def test_device_lines_without_their_hash_give_the_ranks_nodes_and_gpu():
    facts = ex.nccltests.parse(_header(2))
    assert (facts["world_size"], facts["nodes"], facts.get("device_name")) == (2, 2, "NVIDIA L4")


def test_a_one_rank_table_cut_before_its_rows_is_a_single_rank_run_the_jobs():
    r = explained(_header(1))
    assert verdict(r) == ("skip", "NCCL_SINGLE_RANK", "job"), r.summary


# ------------------------------------------------------------------ one rank, no figures, no failure
def test_one_rank_with_no_figures_recorded_is_single_rank_not_nothing_to_judge():
    r = nccl.judge({"backend": "nccl", "world_size": 1, "gpus": 1, "nodes": 1, "sizes": None, "error": None}, Options())
    assert verdict(r) == ("skip", "NCCL_SINGLE_RANK", "job"), r.summary


def test_several_ranks_with_nothing_recorded_stay_nothing_to_judge_with_no_owner():
    r = nccl.judge({"backend": "nccl", "world_size": 4, "sizes": None, "error": None}, Options())
    assert (r.status, r.owner) == ("skip", None), r.summary
    assert r.code != "NCCL_SINGLE_RANK"


# ------------------------------------------------------------------ aws-ofi-nccl on provider efa
EFA_LOG = """1: compute-st-p5-2:4410:4410 [3] NCCL INFO NET/OFI Initializing aws-ofi-nccl 1.9.1-aws
1: compute-st-p5-2:4410:4502 [3] NCCL INFO NET/OFI Selected Provider is efa (found 32 nics)
1: compute-st-p5-2:4410:4502 [3] NCCL INFO comm 0x55d1c0 rank 11 nranks 16 cudaDev 3 busId 97000 - Init COMPLETE
0: compute-st-p5-1:3920:4011 [0] NCCL INFO comm 0x7a2e40 rank 0 nranks 16 cudaDev 0 busId 53000 - Init COMPLETE
"""


def test_aws_ofi_ncclss_efa_provider_is_the_fabric_in_use_a_pass():
    r = explained(EFA_LOG)
    assert (r.status, r.code) == ("pass", None), r.summary
    assert "provider efa" in r.summary


def test_the_efa_provider_in_facts_passes_and_tcp_does_not():
    log = {"ofi_provider": "efa", "proof": ["NET/OFI Selected Provider is efa (found 4 nics)"]}
    r = nccl.judge({"backend": "nccl", "world_size": 16, "error": "none", "efa": True, "nccl_log": log}, Options())
    assert r.status == "pass", r.summary
    tcp = {"ofi_provider": "tcp", "proof": ["NET/OFI Selected Provider is tcp (found 1 nics)"]}
    r = nccl.judge({"backend": "nccl", "world_size": 16, "error": "none", "nccl_log": tcp}, Options())
    assert r.status != "pass", r.summary


# ------------------------------------------------------------------ NCCL's own CUDA call: initialization error
@pytest.mark.parametrize("warn", [
    "trainer-1:2211:2290 [2] enqueue.cc:1310 NCCL WARN Cuda failure 'initialization error'",
    "trainer-1:2211:2290 [2] init.cc:1601 NCCL WARN Cuda failure 3 'initialization error'",
], ids=["words", "numbered"])
def test_ncclss_cuda_call_finding_cuda_uninitialised_is_the_jobs_process(warn):
    text = (f"trainer-1:2211:2211 [2] NCCL INFO Bootstrap : Using eth0:10.8.0.7<0>\n{warn}\n"
            "torch.distributed.DistBackendError: NCCL error in: ProcessGroupNCCL.cpp:1970, unhandled cuda error "
            "(run with NCCL_DEBUG=INFO for details), NCCL version 2.19.3\n"
            "ncclUnhandledCudaError: Call to CUDA function failed.\n")
    assert verdict(explained(text))[1:] == ("NCCL_FAILED", "job")
    r = nccl.judge({"backend": "nccl", "error": f"init: {warn.split('] ', 1)[1]} (ncclUnhandledCudaError)"}, Options())
    assert verdict(r) == ("fail", "NCCL_FAILED", "job"), r.summary


def test_the_programs_own_cuda_call_failing_so_is_not_read_as_the_jobs_process():
    error = "all_reduce: Test CUDA failure common.cu:892 'initialization error'"
    r = nccl.judge({"backend": "nccl", "error": error}, Options())
    assert "already run" not in r.summary, r.summary


# ------------------------------------------------------------------ NCCL_IB_HCA naming a software RDMA device
def _soft_roce(hca: str | None) -> dict:
    warn = "worker-3:77:77 [0] transport/net_ib.cc:115 NCCL WARN Could not find real path of rxe1 (/sys/class/infiniband/rxe1/device)"
    env = {"NCCL_IB_HCA": hca} if hca else {}
    return {"backend": "nccl", "error": "init: Segmentation fault (core dumped)", "nccl_env": env, "infiniband": True,
            "nccl_log": {"hcas": ["rxe1:1/RoCE"], "interface": "rxe1:1/RoCE", "ib_error": warn,
                         "proof": ["worker-3:77:77 [0] NCCL INFO NET/IB : Using [0]rxe1:1/RoCE [RO]; OOB enp3s0:10.1.0.4<0>"]}}


@pytest.mark.parametrize("hca", ["rxe1", "=rxe1:1"])
def test_the_jobs_ib_hca_pinning_a_software_rdma_device_owns_the_failure(hca):
    r = nccl.judge(_soft_roce(hca), Options())
    assert verdict(r) == ("fail", "NCCL_FAILED", "job"), r.summary
    assert "rxe1" in r.summary


@pytest.mark.parametrize("hca", [None, "^rxe1", "mlx5_0"])
def test_a_device_without_real_path_the_job_did_not_pin_is_not_the_jobs_setting(hca):
    r = nccl.judge(_soft_roce(hca), Options())
    assert "pins NCCL" not in r.summary, r.summary
