"""Issue 35, batches 173-174 (fix173), fixed for the class:
- Ray's memory monitor killing a job's workers for host RAM (`Memory on the node ... which exceeds the memory usage
  threshold of 0.95. Ray killed this worker`, the raylet's `N Workers (tasks / actors) killed due to memory pressure
  (OOM)`, a terminal's wrap anywhere in it) was not read by `verify explain`: now train facts, the job's kill
  (verify/explain/raymem.py);
- NCCL's NVLS set-up failing on a CUDA call (`transport/nvls.cc:<line> NCCL WARN Cuda failure ...`) is the NVSwitch
  fabric's, whatever CUDA calls it: `initialization error` there was read as the process's own CUDA state, the job's
  (verify/checks/nccl/nvlssetup.py).
Real lines from the entries named by slug (each source.md gives its URL)."""
from __future__ import annotations

import pytest

from tests.judging import explained, nccl_verdict, raw, verdict

pytestmark = pytest.mark.unit

RAY_MONITOR = "vllm-async-engine-ray-worker-vllm-init-killed-by-ray-memory-monitor-12.49-of-13.15gb-host-ram-threshold-0.95"
RAYLET = "wmpo-ray-raylet-node-172.24.0.226-two-workers-killed-due-to-memory-pressure-oom-terminal-wrapped"
NODE155 = "slurm-node155-three-ranks-nccl-socket-bond0-nvls-cc-246-cuda-failure-3-initialization-error-ddp-rank1-traceback-host"


@pytest.mark.parametrize("slug", [RAY_MONITOR, RAYLET])
def test_ray_memory_monitor_kills_are_the_job_s_host_memory_kills(slug):
    r = explained(raw(slug))
    assert verdict(r) == ("fail", "TRAIN_FAILED", "job"), r.summary


def test_ray_memory_monitor_read_unwrapped_and_zero_kills_is_no_kill():
    line = raw(RAYLET).replace("\n", " ")                     # the same raylet line, unwrapped
    assert verdict(explained(line)) == ("fail", "TRAIN_FAILED", "job")
    none = line.replace("2 Workers (tasks / actors) killed", "0 Workers (tasks / actors) killed")
    assert explained(none).code != "TRAIN_FAILED"            # the raylet's periodic summary of no kill


def test_nvls_set_up_failing_on_any_cuda_call_is_the_host_s():
    line = "node155:3054646:3054695 [1] transport/nvls.cc:246 NCCL WARN Cuda failure 3 'initialization error'"
    assert line in raw(NODE155)
    assert verdict(explained(raw(NODE155))) == ("fail", "NCCL_FAILED", "host")
    assert nccl_verdict(world_size=3, nodes=1, error=f"init: {line}") == ("fail", "NCCL_FAILED", "host")
    invalid = "node23:12098:12141 [2] transport/nvls.cc:244 NCCL WARN Cuda failure 1 'invalid argument'"
    assert nccl_verdict(world_size=8, nodes=1, error=invalid) == ("fail", "NCCL_FAILED", "host")
    # NCCL's other CUDA calls meeting `initialization error` stay the process's own CUDA state (midrun.py)
    other = "node155:3054646:3054695 [1] init.cc:1010 NCCL WARN Cuda failure 3 'initialization error'"
    assert nccl_verdict(world_size=3, nodes=1, error=f"init: {other}") == ("fail", "NCCL_FAILED", "job")
