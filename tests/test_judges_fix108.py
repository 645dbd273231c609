# mypy: disable-error-code="arg-type, typeddict-item"
# (judges take their TypedDict facts; these tests hand them partial facts, as a translated record would)
"""Issue 35's hundred-and-eighth corpus batch (RDMA adapter state as operators paste it), fixed by class:
- NCCL starting no network at all (`NCCL WARN Failed to initialize any NET plugin`, then ncclInvalidUsage from
  ncclCommInitRank: src/plugin/net.cc's ncclNetInit) is the job's settings or container (NCCL_NET names one network
  and that one cannot start here: no /dev/infiniband in the container, a plugin off the library path or built for
  another NCCL): NCCL_FAILED, owner job, never a drain; the container given no RDMA device is named where the facts
  show it, and a host fault the nccl judge found still decides.
The batch's other disagreements are strict expected failures (tests/test_gpu_rules.py, tests/test_explain.py)."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.judging import explained, verdict
from verify.checks import nccl
from verify.checks.nccl.netinit import no_network_verdict
from verify.findings import Findings
from verify.options import Options
from verify.result import FAIL, WARN, CheckResult

pytestmark = pytest.mark.unit

CORPUS = Path(__file__).parent / "data" / "real-world"
# the corpus's two-node-mp-launch-engine-containers-devices-empty-no-dev-infiniband-nccl-failed-to-initialize-any-net-
# plugin-invalid-usage-job (https://github.com/getainode/ainode/pull/87): "both ranks met at the rendezvous, then died in
# `ncclCommInitRank` with `NCCL error: invalid usage` after `NCCL WARN Failed to initialize any NET plugin`"
ENTRY = CORPUS / ("two-node-mp-launch-engine-containers-devices-empty-no-dev-infiniband-nccl-failed-to-initialize-any-"
                  "net-plugin-invalid-usage-job")
ERROR = "init: ncclCommInitRank: NCCL error: invalid usage (after NCCL WARN Failed to initialize any NET plugin)"
# torch's wording of the same result, NCCL's WARN under its `Last error:`
TORCH = ("init: torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/NCCLUtils.hpp:317, "
         "invalid usage (run with NCCL_DEBUG=WARN for details), NCCL version 2.21.5 ncclInvalidUsage: This usually "
         "reflects invalid usage of NCCL library. Last error: Failed to initialize any NET plugin")


def test_the_entry_s_nccl_record_is_the_job_s_never_a_drain():
    facts = json.loads((ENTRY / "facts" / "nccl.json").read_text())["facts"]
    assert facts["error"] == ERROR
    r = nccl.judge(facts, Options())
    assert verdict(r) == ("fail", "NCCL_FAILED", "job"), r.summary
    assert "Failed to initialize any NET plugin" in r.summary and "NCCL_NET" in (r.remedy or "")


@pytest.mark.parametrize("error, more", [
    (ERROR, {"nodes": 2}),
    (TORCH, {"nodes": 2, "nccl_env": {"NCCL_NET": "IB"}}),       # torch's: not "give each rank its own GPU"
    (TORCH, {"nodes": 1, "nccl_env": {"NCCL_NET": "gIB"}}),      # one node, a cloud plugin the image's profile forced
])
def test_no_network_started_is_the_job_s_with_its_own_remedy(error, more):
    r = nccl.judge({"backend": "nccl", "nccl_available": True, "error": error, **more}, Options())
    assert verdict(r) == ("fail", "NCCL_FAILED", "job"), r.summary
    assert "could start no network" in r.summary and "own GPU" not in (r.remedy or "")
    forced = (more.get("nccl_env") or {}).get("NCCL_NET")
    assert not forced or f"NCCL_NET={forced}" in r.summary


def test_the_container_given_no_rdma_device_is_named_as_the_cause():
    """The node's InfiniBand shown (`infiniband`: sysfs) and the container's /dev/infiniband empty (`Devices: []`)."""
    r = nccl.judge({"backend": "nccl", "error": ERROR, "world_size": 2, "nodes": 2, "infiniband": True, "uverbs": []},
                   Options())
    assert verdict(r) == ("fail", "NCCL_FAILED", "job"), r.summary
    assert "no /dev/infiniband/uverbs*" in r.summary and "--device /dev/infiniband" in (r.remedy or "")


def test_a_host_fault_among_the_findings_still_decides():
    """Pure: the rule stands aside where the nccl judge already holds a failure of the host's."""
    found = Findings()
    found.add(FAIL, "NCCL_NET_FALLBACK", "InfiniBand present, sockets used", "check the HCAs", "host")
    assert no_network_verdict({}, ERROR, "failed", found, CheckResult("nccl", "pass", "")) is None
    found = Findings()
    found.add(WARN, "FABRIC_GDR_OFF", "no GPUDirect RDMA", "load nvidia_peermem", "host")    # a warning decides nothing
    r = no_network_verdict({}, ERROR, "failed", found, CheckResult("nccl", "pass", ""))
    assert r is not None and verdict(r) == ("fail", "NCCL_FAILED", "job")


def test_other_invalid_usage_keeps_its_rule():
    """Two ranks on one GPU is still the program's misuse, with its own remedy."""
    r = nccl.judge({"backend": "nccl", "error": "init: NCCL error in: x.cpp:1, invalid usage (run with NCCL_DEBUG=WARN "
                    "for details), NCCL version 2.18.1 Last error: Duplicate GPU detected : rank 1 and rank 0 both on "
                    "CUDA device 1000"}, Options())
    assert verdict(r) == ("fail", "NCCL_FAILED", "job") and "own GPU" in (r.remedy or "")


def test_verify_explain_reads_the_warn_as_nccl_prints_it():
    """NCCL's WARN (net.cc's message, verbatim) under its `host:pid:tid [dev]` prefix, then its failing return: the
    same verdict as the record, never the node's."""
    text = ("spark-3:212:212 [0] NCCL INFO NCCL_NET set by environment to IB\n"
            "spark-3:212:212 [0] plugin/net.cc:1102 NCCL WARN Failed to initialize any NET plugin\n"
            "spark-3:212:212 [0] init.cc:1873 NCCL INFO init.cc:1467 -> 5\n")
    r = explained(text)
    assert verdict(r) == ("fail", "NCCL_FAILED", "job"), r.summary
