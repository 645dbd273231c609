"""Batch 292 (NCCL WARN lines, translated by a helper who had not read the judges): aws-ofi-nccl's `Unexpected number of
remote rails for dev N. Expected A but got B`, handed to NCCL as its internal error, is the two ends of a connection
given different numbers of EFA devices (littlemex/distributed-ai's EKS pods each requesting 8 of a p5en's 16), the
class of NCCL's own ring check: the ranks' views differ, the launch's, never the image's NCCL nor a drain."""
from __future__ import annotations

import pytest

from tests.judging import explained, nccl_verdict

pytestmark = pytest.mark.unit

RAILS = "NET/OFI Unexpected number of remote rails for dev 4. Expected 1 but got 2"


def test_peers_that_disagree_on_their_rails_are_the_launch_s_never_the_image_s() -> None:
    error = f"collective: NCCL error: ncclInternalError: Internal check failed. Last error: {RAILS}"
    assert nccl_verdict(error=error, efa=True) == ("fail", "NCCL_FAILED", "job")


def test_the_log_that_shows_it_is_judged_alike() -> None:
    text = ("torch.distributed.DistBackendError: NCCL error in: ProcessGroupNCCL.cpp:1970, internal error - please "
            "report this issue to the NCCL developers, NCCL version 2.21.5\nncclInternalError: Internal check failed.\n"
            f"Last error:\n{RAILS}\n")
    r = explained(text)
    assert (r.status, r.code, r.owner) == ("fail", "NCCL_FAILED", "job"), r.summary
    assert "rails" in r.summary and "EFA devices" in r.remedy


def test_an_internal_error_with_no_sign_of_ranks_that_differ_stays_the_image_s() -> None:
    error = "collective: NCCL error: ncclInternalError: Internal check failed. Last error: NET/OFI Unable to post"
    assert nccl_verdict(error=error, efa=True) == ("fail", "NCCL_FAILED", "image")
