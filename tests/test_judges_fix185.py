"""Issue 35, batches 185 and 186 (fix185), fixed for the class:
- a failure at import or start whose words name a library or native operator of the image (the dynamic linker's
  `cannot open shared object file` / `undefined symbol`, torchvision's missing `torchvision::nms`) is the image's:
  train TRAIN_FAILED, owner image, never the host's nor verify's own bug (verify/checks/train/imagefault.py), read by
  `verify explain` from the traceback or the loader's line (verify/explain/importfail.py);
- a device whose clocks NVML read (nvidia-smi -q's Clocks and Max Clocks) has no health read: HEALTH_NOT_ASSESSED,
  never "nothing to judge" (verify/checks/gpu/verdict.py, verify/explain/smi.py);
- NVML's clock event reasons as CUDA.jl prints them are read as nvidia-smi's are (verify/explain/nvmljl.py).
Real lines from the entries named by slug (each source.md gives its URL)."""
from __future__ import annotations

import pytest

from tests.judging import explained, raw, replayed, verdict
from verify.checks import CHECKS
from verify.judging import judge
from verify.options import Options

pytestmark = pytest.mark.unit

HALLO = "hallo-inference-import-torchvision-meta-nms-operator-torchvision-nms-does-not-exist-torch-torchvision-mismatch-image"
RETURNN = ("returnn-github-actions-ci-import-torch-libtorch-cuda-undefined-symbol-ncclmemfree-nvidia-nccl-cu11-2.14.3-"
           "beside-cu12-2.27.3-image")
WHISPER = ("whisper-webui-venv-faster-whisper-cuda-could-not-load-libcudnn-ops-infer-so-8-aborted-fixed-by-nvidia-"
           "cudnn-cu11-wheel-image")
CLOCKS = "geforce-smi-q-clocks-sm-2025-of-max-2100-mhz-memory-10251-of-10501-no-reasons-shown"
JULIA = "cuda-jl-nvml-clock-event-reasons-nine-read-idle-only-after-reboot-healthy"
IMAGE = ("fail", "TRAIN_FAILED", "image")


def _train(kind: str, message: str, phase: str = "init") -> tuple[str, str | None, str | None]:
    failure = {"rank": None, "node": None, "phase": phase, "type": kind, "message": message}
    return verdict(judge(CHECKS["train"], {"failures": [failure]}, Options()))


@pytest.mark.parametrize("slug,line", [
    (HALLO, "RuntimeError: operator torchvision::nms does not exist"),
    (RETURNN, "ImportError: /home/runner/.local/lib/python3.10/site-packages/torch/lib/libtorch_cuda.so: undefined "
              "symbol: ncclMemFree"),
    (WHISPER, "Could not load library libcudnn_ops_infer.so.8. Error: libcudnn_ops_infer.so.8: cannot open shared "
              "object file: No such file or directory"),
])
def test_a_library_or_operator_the_image_lacks_at_start_is_the_image_s(slug, line):
    assert line in raw(slug)
    assert replayed(slug) == {"train": IMAGE}
    assert verdict(explained(raw(slug))) == IMAGE
    assert verdict(explained(line + "\n")) == IMAGE


def test_the_class_beyond_the_examples_and_its_limits():
    assert _train("ImportError", "/usr/lib/x86_64-linux-gnu/libstdc++.so.6: version `GLIBCXX_3.4.30' not found "
                                 "(required by /opt/conda/lib/python3.10/site-packages/torch/lib/libtorch_python.so)"
                  ) == IMAGE
    assert _train("OSError", "libcudart.so.12: cannot open shared object file: No such file or directory",
                  "train") == IMAGE
    # the driver's own library is the host's container runtime, not the image: not this rule
    assert _train("OSError", "libcuda.so.1: cannot open shared object file: No such file or directory") != IMAGE
    # verify's own ImportError without a library named stays its own bug
    assert _train("ImportError", "cannot import name 'x' from 'verify.shared'")[1] == "CHECK_CRASHED"
    # a warning the run survives (torch's cuDNN fallback, magictime-inference-ubuntu-22.04-...-run-continued): none
    assert verdict(explained("conv.py:456: UserWarning: Attempt to open cnn_infer failed: handle=0 error: "
                             "libcudnn_cnn_infer.so.8: cannot open shared object file: No such file or directory\n")
                   ) != IMAGE
    # a quote in prose is no failure of this program
    assert explained("If you see `libfoo.so: cannot open shared object file`, install foo.\n").name != "train"


def test_a_device_whose_clocks_nvml_read_is_not_assessed_never_nothing_to_judge():
    assert "SM                                : 2025 MHz" in raw(CLOCKS)
    want = {"gpu": ("warn", "HEALTH_NOT_ASSESSED", "host")}
    assert replayed(CLOCKS) == want
    assert {"gpu": verdict(explained(raw(CLOCKS)))} == want


def test_nvml_clock_event_reasons_from_julia_are_read():
    assert "hw_slow = false" in raw(JULIA)
    assert verdict(explained(raw(JULIA))) == ("pass", None, None)
    slow = raw(JULIA).replace("hw_slow = false", "hw_slow = true")
    assert verdict(explained(slow))[0] != "pass"
