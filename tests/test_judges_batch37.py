"""Issue 35's thirty-seventh to thirty-ninth corpus batches (NVSwitch systems, the network NCCL chose and why, GPU
nodes under load; translated blind): the readers and rules they called for, by class (the entries themselves replay
in tests/test_gpu_rules.py and tests/test_explain.py).

- A CUDA driver error's number as a wrapper prints it (`cuInit err: 802`, `cuda driver library init failure: 802`,
  ollama's and llama.cpp's loaders) is decoded as its name would be; NCCL's `vendor err 129` (the NIC's) is not.
"""
from __future__ import annotations

import pytest

from verify.shared import cuda_errors

pytestmark = pytest.mark.unit


@pytest.mark.parametrize("text", ["cuInit err: 802", "cuda driver library init failure: 802",
                                  "Unable to load cudart library libcuda.so.570.86.15: cuda driver library init "
                                  "failure: 802"])
def test_a_driver_call_s_error_number_as_a_wrapper_prints_it_is_decoded(text):
    decoded = cuda_errors.decode(text)
    assert decoded is not None and decoded == cuda_errors.decode("CUDA_ERROR_SYSTEM_NOT_READY")


@pytest.mark.parametrize("text", ["NET/IB : Got completion from peer 10.0.0.2<1> with status=12 opcode=0 len=0 vendor "
                                  "err 802 (Send)", "retry err 802"])
def test_a_bare_err_number_is_no_cuda_error(text):
    assert cuda_errors.decode(text) is None
