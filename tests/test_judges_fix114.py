"""Issue 35's hundred-and-fourteenth corpus batch (NCCL on InfiniBand, CollNet/SHARP), fixed by class: NCCL's
failing-return traces of an optional transport's setup (`transport.cc:291 -> 2`, `init.cc:670 -> 2`) that NCCL then
handles itself (`Cannot initialize CollNet, using point-to-point network instead`) are no failure: the SHARP plugin
could not create a job on a fabric without SHARP, and NCCL went on
(ib-vm-cloud-eight-gpu-nodes-nccl-collnet-sharp-coll-init-cannot-create-sharp-job-minus-11-falls-back-to-p2p-provider-has-no-sharp).
Before, `verify explain` read the traces as a failed init and blamed the host."""
from __future__ import annotations

import pytest

from tests.judging import explained, verdict

pytestmark = pytest.mark.unit

TRACES = """\
ib-vm-52:1047884:1048148 [7] sharp_plugin.c:320 NCCL WARN NET/IB : SHARP coll init error: Cannot create SHARP job(-11)
ib-vm-40:1098215:1098536 [7] NCCL INFO transport.cc:291 -> 2
ib-vm-41:1056977:1057185 [4] NCCL INFO init.cc:670 -> 2
"""
FELL_BACK = ("ib-vm-41:1056918:1057186 [0] transport.cc:323 NCCL WARN Cannot initialize CollNet, using point-to-point "
             "network instead\n")


def test_collnet_setup_traces_nccl_then_handles_are_no_failure():
    r = explained(TRACES + FELL_BACK)
    assert r.name == "nccl" and r.status != "fail", (r.status, r.summary)
    assert verdict(r)[2] != "host"


def test_the_same_traces_without_nccl_s_fall_back_notice_still_fail_the_init():
    r = explained(TRACES)
    assert (r.name, r.status) == ("nccl", "fail"), r.summary


def test_a_failure_said_in_words_beside_the_fall_back_still_decides():
    said = ("ib-vm-41:1056918:1057186 [0] NCCL INFO NET/IB : Got completion from peer 10.0.0.2<43210> with error 12, "
            "opcode 0, len 0, vendor err 129 (Recv)\n")
    r = explained(TRACES + FELL_BACK + said)
    assert (r.name, r.status) == ("nccl", "fail"), r.summary
