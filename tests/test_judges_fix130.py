"""Issue 35, batch 130 (Kubernetes and Slurm GPU nodes). The classes fixed:
- nccl-tests' CUDACHECK quoting cudaGetErrorString after its source line (`Test CUDA failure common.cu:1045 'unknown
  error'`) is CUDA's 999, decoded by the one catalog (the node's driver stack, DRIVER_ERROR, host) in a program's
  `cuda_errors`; `verify explain` reads the line as a running program's CUDA error, which names the cause beside
  NCCL's reading of the same line;
- XLA's one-line report of a failed NCCL call (`NCCL operation ncclGroupEnd() failed: ... Last NCCL warning(error) log
  entry (may be unrelated) '...'.`) wrapped over several lines by a post is joined back by `verify explain`, so the
  quoted WARN (`Error while creating shared memory segment ... No space left on device (28)`) decides, as the facts'
  one-line `error` does.
Real lines are quoted with their slugs (each source.md gives its URL)."""
from __future__ import annotations

import pytest

from tests.judging import explained, raw, replayed, verdict
from verify.shared import cuda_errors

pytestmark = pytest.mark.unit

P4D = "p4d-24xlarge-slurm-pyxis-nccl-tests-test-cuda-failure-unknown-error-999-fixed-by-host-modprobe-nvidia-uvm"
XPK = "gke-a3-megagpu-8g-xpk-jobset-without-dev-shm-volume-maxtext-ncclgroupend-shm-segment-31850880-enospc"
P4D_LINE = "compute-od-gpu-dy-p4d-24xlarge-1: Test CUDA failure common.cu:1045 'unknown error'"



# ----------------------------------------------------- nccl-tests' CUDA failure: 999 by its quoted string
@pytest.mark.parametrize("line", [P4D_LINE, "test: Test CUDA failure common.cu:389 'unknown error'"])
def test_nccl_tests_cuda_failure_quoting_unknown_error_is_cuda_999(line):
    assert cuda_errors.decode(line) is cuda_errors.UNKNOWN_ERROR


def test_a_bare_unknown_error_or_another_quoted_string_is_not_999():
    assert cuda_errors.decode("Error: unknown error") is None        # any program's words, no CUDA check's
    assert cuda_errors.decode("node0: Test CUDA failure common.cu:389 'an illegal memory access was encountered'") \
        is cuda_errors.KERNEL_FAULT


def test_nccl_tests_stopped_by_cuda_999_is_the_hosts_driver_stack():
    """P4D: all_reduce_perf in a pyxis container stops at CUDA's 999, cured by loading nvidia_uvm on the host."""
    assert replayed(P4D) == {"gpu": ("fail", "DRIVER_ERROR", "host")}
    r = explained(raw(P4D))
    # named by its words: the program printed no number, so the summary says none (out-mend3: never a number the
    # program did not print)
    assert (r.name, *verdict(r)) == ("gpu", "fail", "DRIVER_ERROR", "host") and "(unknown error)" in r.summary
    assert "999" not in r.summary


def test_nccl_tests_cuda_failure_of_the_jobs_kernel_stays_the_jobs():
    r = explained("# Using devices\nnode0: Test CUDA failure common.cu:389 'an illegal memory access was encountered'\n"
                  " .. node0 pid 1: Test failure common.cu:1007\n")
    assert (r.status, r.code, r.owner) == ("fail", "NCCL_FAILED", "job")  # mendf: the cause is the gpu check's finding; the collective's own code, the cause's owner


# ----------------------------------------------------- XLA's failed NCCL call, wrapped by a post
def test_xlas_ncclgroupend_failure_wrapped_over_lines_is_read_as_one_message():
    """XPK: the quoted WARN runs over three lines; /dev/shm out of space is the pod spec's, as its facts say."""
    assert replayed(XPK) == {"nccl": ("fail", "SHM_TOO_SMALL", "job")}
    r = explained(raw(XPK))
    assert verdict(r) == ("fail", "SHM_TOO_SMALL", "job") and "31850880" in r.summary


def test_xlas_one_line_message_and_a_callers_wrap_after_failed_read_as_before():
    one = ("E0101 00:00:00.000000 1 nccl_collectives.cc:1] NCCL operation ncclCommInitRank(comm, 8, id, 0) failed: "
           "unhandled system error. Last NCCL warning(error) log entry (may be unrelated) 'Bootstrap : no socket "
           "interface found'.")
    r = explained(one)
    assert r.status == "fail" and "init: E0101" in r.summary
    wrapped = ("Failed to create NCCL communicator: INTERNAL: ncclCommInitRankConfig(comm, 8, id, 0) failed:\n"
               "unhandled system error. Last NCCL warning(error) log entry (may be unrelated) 'Bootstrap : no socket "
               "interface found'.")
    r = explained(wrapped)
    assert r.status == "fail" and "init: Failed to create NCCL communicator" in r.summary


def test_an_unclosed_quote_with_no_closing_line_joins_nothing_below():
    """A cut excerpt (the WARN's quote never closes in four lines) is read for what it shows, never completed."""
    text = ("NCCL operation ncclGroupEnd() failed: unhandled system error. Last NCCL warning(error) log entry (may be "
            "unrelated) 'Error while\nnext line\nanother\nthird\nfourth\nfifth'")
    r = explained(text)
    assert r.status == "fail" and "'Error while" in r.summary and "next line" not in r.summary
