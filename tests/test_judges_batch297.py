"""Batch 297 (image faults, translated by a helper who had not read the judges): nvidia-docker 1.0 refused an image
needing a newer CUDA than the driver in its own words (`Error: unsupported CUDA version: driver 8.0 < image 9.0.176`,
nvidia-docker#497, h2oai/h2o4gpu#298): the class of the Container Toolkit's `unsatisfied condition: cuda>=`, the
host driver's (DRIVER_TOO_OLD), through the facts and through `verify explain` alike, where the healthy nvidia-smi
table beside it had been read as a pass. Batch 298: CUDA refusing a running program any GPU fails."""
from __future__ import annotations

import pytest

from tests.judging import explained
from verify.shared.cuda_errors import decode

pytestmark = pytest.mark.unit

LINE = "nvidia-docker | 2017/10/13 08:33:01 Error: unsupported CUDA version: driver 8.0 < image 9.0.176"
TABLE = """\
+-----------------------------------------------------------------------------+
| NVIDIA-SMI 375.66                 Driver Version: 375.66                    |
|-------------------------------+----------------------+----------------------+
| GPU  Name        Persistence-M| Bus-Id        Disp.A | Volatile Uncorr. ECC |
| Fan  Temp  Perf  Pwr:Usage/Cap|         Memory-Usage | GPU-Util  Compute M. |
|===============================+======================+======================|
|   0  GeForce 930MX       Off  | 0000:01:00.0     Off |                  N/A |
| N/A   40C    P8    N/A /  N/A |    243MiB /  2002MiB |      0%      Default |
+-------------------------------+----------------------+----------------------+
"""


@pytest.mark.parametrize("line", [LINE, "Error: unsupported CUDA version: driver 10.1 < image 11.0"])
def test_nvidia_docker_1_s_refusal_is_the_driver_too_old(line: str) -> None:
    decoded = decode(line)
    assert decoded is not None and (decoded.code, decoded.owner) == ("DRIVER_TOO_OLD", "host")


def test_the_refusal_beside_a_healthy_table_is_never_a_pass() -> None:
    r = explained(LINE + "\n" + TABLE, "docker.log")
    assert (r.status, r.code, r.owner) == ("fail", "DRIVER_TOO_OLD", "host"), r.summary


def test_prose_about_versions_is_not_the_refusal() -> None:
    assert decode("the unsupported CUDA version of the image was fixed by a driver upgrade") is None


def test_cuda_refusing_a_running_program_any_gpu_fails_as_the_refusal_at_start_does() -> None:
    """Batch 298 (gafusion/gacode#363): Cray GTL's `cudaHostRegister: no CUDA-capable device is detected` under an
    srun that asked for no GPUs is the job's request, and the run had nothing to run on: a failure, not a warning,
    through the facts' `cuda_errors` as through `verify explain`'s init reading."""
    from tests.judging import verdict
    from verify.checks import CHECKS
    from verify.judging import judge
    from verify.options import Options
    text = "GTL_DEBUG: [0] cudaHostRegister: no CUDA-capable device is detected"
    r = judge(CHECKS["gpu"], {"cuda_errors": [{"index": None, "text": text}]}, Options())
    assert verdict(r) == ("fail", "GPU_NOT_VISIBLE", "job"), r.summary
    assert verdict(explained(text + "\n", "job.log")) == ("fail", "GPU_NOT_VISIBLE", "job")
