"""Issue 35's fourteenth and fifteenth corpus batches (translated blind from real output), fixed by class.

- NCCL's internal error (ncclInternalError, nccl-tests' `internal error - please report this issue to the NCCL
  developers`) is never evidence against the node: the job's where it switched on a feature NCCL ships off
  (NCCL_GIN_ENABLE, NCCL_COLLNET_ENABLE), else the image's NCCL or net plugin; a cause NCCL's log or the job's
  settings name comes first. Corpus: `p5-nccl-2.28.9-gin-over-aws-ofi-efa-rail-count-mismatch-internal-error` (GIN
  over EFA), `nccl-socket-ifname-eth2-absent-internal-error` (the job's interface, named first).
- CUDA error 100 (no CUDA-capable device is detected) is the process seeing no GPU: the job's device request or
  CUDA_VISIBLE_DEVICES (GPU_NOT_VISIBLE, job); CUDA error 101 (invalid device ordinal) a program asking for a GPU
  index it does not have (DEVICE_COUNT_MISMATCH, job). Corpus: `redn-trainer-hardcoded-cuda-visible-devices-cuda-100-
  no-device`, `torchtitan-ngpu-8-ranks-on-two-visible-gpus-cuda-101-invalid-device-ordinal`.
- Xid 137 is in the one catalog as NVIDIA's guide has it (tests/test_xid_catalog.py).
"""
from __future__ import annotations

import json

import pytest

from tests.helpers import ROOT
from verify.checks import CHECKS
from verify.judging import judge
from verify.options import Options
from verify.shared import cuda_errors

pytestmark = pytest.mark.unit

CORPUS = ROOT / "tests" / "data" / "real-world"
GIN = CORPUS / "p5-nccl-2.28.9-gin-over-aws-ofi-efa-rail-count-mismatch-internal-error" / "facts" / "nccl.json"


def verdict(r):
    return r.status, r.code, r.owner


def gin_facts(**env: str) -> dict:
    facts = json.loads(GIN.read_text())["facts"]
    facts["nccl_env"] = {"NCCL_DEBUG": "INFO", **env}
    return facts


@pytest.mark.parametrize("env, owner", [({"NCCL_GIN_ENABLE": "1"}, "job"), ({"NCCL_COLLNET_ENABLE": "1"}, "job"),
                                        ({"NCCL_GIN_ENABLE": "0"}, "image"), ({}, "image")],
                         ids=["gin-on", "collnet-on", "gin-off", "nothing-switched-on"])
def test_nccl_s_internal_error_is_the_job_s_feature_or_the_image_s_nccl_never_the_node_s(env, owner):
    """The real GIN-over-EFA failure, with and without the job's switch: never the host's (no drain)."""
    r = judge(CHECKS["nccl"], gin_facts(**env), Options())
    assert verdict(r) == ("fail", "NCCL_FAILED", owner)
    assert "internal error" in r.summary and (owner != "job" or next(iter(env)) in (r.remedy or ""))


def test_a_cause_nccl_s_log_names_comes_before_its_internal_error():
    """The job's NCCL_SOCKET_IFNAME naming an interface the host lacks ends in the same internal error: the
    interface is named first (the corpus entry's verdict)."""
    item = CORPUS / "nccl-socket-ifname-eth2-absent-internal-error"
    facts = json.loads((item / "facts" / "nccl.json").read_text())["facts"]
    expected = json.loads((item / "expected.json").read_text())["verdicts"]["nccl"]
    r = judge(CHECKS["nccl"], facts, Options())
    assert verdict(r) == (expected["status"], expected["code"], expected["owner"]) == ("fail", "NCCL_FAILED", "job")
    assert "internal error under" not in r.summary


@pytest.mark.parametrize("text, code", [
    ("RuntimeError: cuda runtime error (100) : no CUDA-capable device is detected at THCGeneral.cpp:50", "GPU_NOT_VISIBLE"),
    ("CUDA_ERROR_NO_DEVICE", "GPU_NOT_VISIBLE"),
    ("cudaErrorNoDevice", "GPU_NOT_VISIBLE"),
    ("RuntimeError: CUDA error: invalid device ordinal", "DEVICE_COUNT_MISMATCH"),
    ("CUDA_ERROR_INVALID_DEVICE", "DEVICE_COUNT_MISMATCH"),
])
def test_cuda_s_no_device_and_invalid_ordinal_are_the_job_s(text, code):
    decoded = cuda_errors.decode(text)
    assert decoded is not None and (decoded.code, decoded.owner) == (code, "job")


def test_a_bare_100_or_101_is_no_cuda_error():
    """`error 100` is as often an HTTP status or errno: only CUDA's own wording counts (as for 2, 214 and 220)."""
    assert cuda_errors.decode("HTTP error 101 switching protocols") is None
    assert cuda_errors.decode("Test failed with error 100 of 200") is None
    assert cuda_errors.decode("CUDA error: 100") is cuda_errors.NO_DEVICE
