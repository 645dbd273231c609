# mypy: disable-error-code="arg-type, typeddict-item"
# (judges take their TypedDict facts; these tests hand them partial facts, as a translated record would)
"""Issue 35's forty-ninth corpus batch (cloud fabrics: AWS EFA under aws-ofi-nccl), fixed by class:
- aws-ofi-nccl's `NET/OFI Unable to insert remote address into address vector` (the peer's EFA endpoint cannot be
  addressed: EFA traffic between the instances is not let through, their security group or subnet) is the cluster
  network's, the host's, even where NCCL reports it as its internal error (the code the plugin hands it);
- the EFA kernel driver's refusal of a command (`infiniband efa_0: Failed to process command ALLOC_PD (opcode 14)
  comp_status 1 err -12`) beside the plugin's failure is the node's EFA device or driver;
- `verify explain` reads aws-ofi-nccl's lines as printed: untagged (`NET/OFI ...` under torch's `Last error:`, v1.0's
  unit-test logger `INFO: Function: ofi_init Line: 686: NET/OFI ...`), its WARN on a call that returned an error code
  as the failure, and the EFA kernel lines pasted beside them; its initialisation giving up (`Only EFA provider is
  supported`, `aws-ofi-nccl initialization failed`) is no failure: NCCL goes on without it;
- on one node, that give-up is the network set-up a node's GPUs never use: pass, as a missing plugin there."""
from __future__ import annotations

import pytest

from tests.judging import explained, verdict
from verify.checks import nccl
from verify.checks.nccl import ncclog
from verify.options import Options

pytestmark = pytest.mark.unit


def log(**fields):
    return {"networks": [], "net_channels": {}, "ib_no_device": False, "hca_gdr": {}, "env": {}, "rank_networks": {},
            "proof": [], **fields}


# ------------------------------------------------------------------ the peer's EFA address not insertable
AV_LINE = "NET/OFI Unable to insert remote address into address vector for device 3. RC: 0"
TORCH_AV = f"""\
[rank0]: torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:2027, internal error - please report this issue to the NCCL developers, NCCL version 2.21.5
[rank0]: ncclInternalError: Internal check failed.
[rank0]: Last error:
[rank0]: {AV_LINE}
"""


def test_an_efa_peer_address_not_insertable_is_the_cluster_network_s_not_nccl_s_internal_error():
    facts = {"backend": "nccl", "world_size": 16, "nodes": 2, "efa": True,
             "error": f"ncclInternalError: Internal check failed. Last error: {AV_LINE}",
             "nccl_log": log(ofi_error=AV_LINE, proof=[AV_LINE])}
    r = nccl.judge(facts, Options())
    assert verdict(r) == ("fail", "NCCL_FAILED", "host"), r.summary
    assert "security group" in (r.remedy or "")


def test_explain_reads_the_plugin_s_line_under_torch_s_last_error_and_gives_the_same_verdict():
    r = explained(TORCH_AV)
    assert verdict(r) == ("fail", "NCCL_FAILED", "host"), r.summary
    assert AV_LINE in r.summary          # the whole line, not its `RC: 0` tail


def test_nccl_s_internal_error_without_the_plugin_s_line_stays_the_image_s():
    text = TORCH_AV.replace(f"[rank0]: {AV_LINE}\n", "[rank0]: some other message\n")
    assert explained(text).owner == "image"


def test_the_plugin_s_registration_refused_as_invalid_stays_the_image_s():
    text = ("ip-10-1-2-3:88:140 [0] register_mr_buffers:544 NCCL WARN NET/OFI Unable to register memory (type = 2) "
            "for device 0. RC: -22, Error: Invalid argument\n")
    assert verdict(explained(text)) == ("fail", "NCCL_FAILED", "image")


# ------------------------------------------------------------------ the EFA device refusing its driver's command
DMESG = ("[ 2210.501388] infiniband efa_0: Failed to process command CREATE_QP (opcode 1) comp_status 1 err -12\n"
         "[ 2210.501390] infiniband efa_0: Failed to create qp [-12]\n")
OFI_WARN = ("ip-10-0-7-21:3120:3188 [2] create_nccl_ofi_component:459 NCCL WARN NET/OFI Couldn't open AV. RC: -22, "
            "ERROR: Invalid argument\n")


def test_the_efa_device_refusing_its_driver_s_command_beside_the_plugin_s_failure_is_the_node_s():
    r = explained("ip-10-0-7-21:3120:3120 [2] NCCL INFO NET/OFI Selected Provider is efa (found 1 nics)\n"
                  + OFI_WARN + DMESG)
    assert verdict(r) == ("fail", "NCCL_FAILED", "host"), r.summary
    assert "CREATE_QP" in r.summary and "fi_pingpong" in (r.remedy or "")


def test_the_same_from_facts_that_quote_the_kernel_line():
    line = "infiniband efa_0: Failed to process command REG_MR (opcode 7) comp_status 1 err -12"
    facts = {"backend": "nccl", "efa": True, "error": "NET/OFI Couldn't open AV. RC: -22, ERROR: Invalid argument",
             "nccl_log": log(ofi_provider="efa", proof=[line])}
    assert verdict(nccl.judge(facts, Options())) == ("fail", "NCCL_FAILED", "host")


def test_the_plugin_s_failed_call_alone_is_the_failure_and_blames_no_efa_device():
    r = explained(OFI_WARN)
    assert r.status == "fail" and "EFA device" not in r.summary, r.summary


def test_aws_ofi_nccl_v1_0_s_unit_test_logger_is_read_as_its_lines():
    text = ("INFO: Function: ofi_init Line: 686: NET/OFI Selected Provider is efa\n"
            "WARN: Function: create_nccl_ofi_component Line: 459: NET/OFI Couldn't open AV. RC: -22, ERROR: Invalid "
            "argument\n" + DMESG)
    parsed = ncclog.parse(text)
    assert parsed["ofi_provider"] == "efa" and parsed["ofi_error"].startswith("NET/OFI Couldn't open AV")
    assert parsed["proof"][0].startswith("infiniband efa_0: Failed to process command CREATE_QP")
    assert verdict(explained(text)) == ("fail", "NCCL_FAILED", "host")


# ------------------------------------------------------------------ the plugin giving up at its initialisation
GAVE_UP = ("node-3:511:511 [0] ofi_init:1288 NCCL WARN NET/OFI Only EFA provider is supported\n"
           "node-3:511:511 [0] ofi_init:1339 NCCL WARN NET/OFI aws-ofi-nccl initialization failed\n")


def test_the_plugin_giving_up_at_init_is_no_failure():
    assert explained(GAVE_UP).status != "fail"


def test_on_one_node_the_plugin_giving_up_at_init_passes_as_a_missing_plugin_does():
    lines = ["NET/OFI Only EFA provider is supported", "NET/OFI aws-ofi-nccl initialization failed"]
    facts = {"backend": "nccl", "nodes": 1, "gpus": 4, "nccl_log": log(ofi_error=lines[0], proof=lines)}
    r = nccl.judge(facts, Options())
    assert r.status == "pass" and "one node" in r.summary, r.summary


@pytest.mark.parametrize("nodes", [2, None])
def test_across_nodes_or_nodes_unknown_the_give_up_alone_is_no_pass(nodes):
    lines = ["NET/OFI OFI fi_getinfo() call failed: No data available"]
    facts = {"backend": "nccl", "nodes": nodes, "nccl_log": log(ofi_error=lines[0], proof=lines)}
    assert nccl.judge(facts, Options()).status != "pass"
