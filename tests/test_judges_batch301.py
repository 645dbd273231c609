"""Batch 301 (translated by a helper who had not read the judges): NCCL's own `NCCL WARN Failed to initialize any NET
plugin` (net.cc; ncclCommInitRank returns ncclInvalidUsage, no fall-back) is the failure as NCCL logs it, whether or
not the program's error follows in the paste: a log ending at it is no "nothing to judge". The owner stays the rule of
verify/checks/nccl/netinit.py (the job's NCCL_NET or container, the image's where its plugin does not load); the same
words mentioned in a sentence are not read (said.py)."""
from __future__ import annotations

import pytest

from tests.judging import explained

pytestmark = pytest.mark.unit

OFI = """NCCL INFO NET/Plugin: Loaded net plugin AWS Libfabric (v11)
NCCL INFO NET/OFI Initializing aws-ofi-nccl 1.21.1
NCCL INFO NET/OFI No eligible providers were found
[2026-09-17 04:02:30] n0:3333526:3333526 [0] int nccl_net_ofi_create_plugin(nccl_net_ofi_plugin_t**):418 NCCL WARN NET/OFI aws-ofi-nccl initialization failed
[2026-09-17 04:02:30] n0:3333526:3333526 [0] plugin/net.cc:306 NCCL WARN Failed to initialize any NET plugin
"""


def test_a_log_ending_at_no_network_is_nccl_failing_at_init_and_never_the_node_s() -> None:
    r = explained(OFI)
    assert (r.status, r.code, r.owner) == ("fail", "NCCL_FAILED", "job"), r.summary


def test_gib_not_found_as_nccl_logs_it_is_the_same_failure() -> None:
    r = explained("node1:77:77 [0] NCCL INFO NCCL_NET set by environment to gIB\n"
                  "node1:77:77 [0] plugin/net.cc:640 NCCL WARN Error: network gIB not found.\n")
    assert (r.status, r.code) == ("fail", "NCCL_FAILED") and r.owner != "host", r.summary


def test_the_words_in_a_sentence_are_not_a_failure() -> None:
    r = explained("Both ranks died after `NCCL WARN Failed to initialize any NET plugin`, as the docs warn.\n")
    assert r.status != "fail", r.summary
