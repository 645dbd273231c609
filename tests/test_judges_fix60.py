"""Issue 35, older GPUs and legacy drivers (batch 60): the driver's legacy notice (a driver branch that dropped the
GPU: the host's driver install, DRIVER_ERROR), torch's `PyTorch no longer supports this GPU because it is too old`
(a build below the GPU: the image's, ARCH_NOT_IN_BUILD), and a running program's CUDA error quoted by
cudaGetErrorString's words alone. Handmade lines in the tools' own words, read by `verify explain` and judged from
the facts alike."""
from __future__ import annotations

import pytest

from verify import explain as ex
from verify.checks import CHECKS
from verify.judging import judge
from verify.options import Options
from verify.shared import xidcatalog

pytestmark = pytest.mark.unit

# nv.c's notice as dmesg prints it (the timestamp on its first line only) and as journalctl -k does (on every line)
LEGACY = ("[    4.201337] NVRM: The NVIDIA GeForce GTX 680 GPU installed in this system is\n"
          "NVRM:  supported through the NVIDIA 470.xx Legacy drivers. Please\n"
          "NVRM:  visit http://www.nvidia.com/object/unix.html for more\n"
          "NVRM:  information.  The 535.129.03 NVIDIA driver will ignore\n"
          "NVRM:  this GPU.  Continuing probe...\n")
LEGACY_JOURNAL = "".join(f"Feb 02 09:14:07 gpu-n12 kernel: {line}\n" for line in (
    "NVRM: The NVIDIA Quadro K4000 GPU installed in this system is",
    "NVRM:  supported through the NVIDIA 470.xx Legacy drivers. Please",
    "NVRM:  visit http://www.nvidia.com/object/unix.html for more",
    "NVRM:  information.  The 525.60.13 NVIDIA driver will ignore",
    "NVRM:  this GPU.  Continuing probe...",
    "NVRM: No NVIDIA GPU found."))
PROBE_FAILED = "[    4.201399] NVRM: The NVIDIA probe routine failed for 1 device(s).\n"


def _explained(text: str) -> tuple[str, str | None, str | None]:
    r = ex.explain_text(text, "excerpt.txt", Options())
    return r.status, r.code, r.owner


def test_the_legacy_notice_is_its_own_status_naming_the_branch():
    assert xidcatalog.rm_status("NVRM:  supported through the NVIDIA 390.xx Legacy drivers. Please") == \
        (xidcatalog.LEGACY_GPU, None)
    assert xidcatalog.legacy_gpu("kernel: NVRM:  supported through the NVIDIA 340.xx Legacy drivers.") == "340.xx"
    assert xidcatalog.rm_status("NVRM:  visit http://www.nvidia.com/object/unix.html for more") is None


@pytest.mark.parametrize("text", [LEGACY, LEGACY_JOURNAL, LEGACY + PROBE_FAILED],
                         ids=["dmesg", "journal-no-gpu-found", "with-probe-failed"])
def test_a_driver_branch_that_dropped_the_gpu_fails_the_hosts_driver_install(text):
    # the notice names the cause: with the probe's failure after it, still the install (the cause ranks first)
    assert _explained(text) == ("fail", "DRIVER_ERROR", "host")


def test_the_facts_road_judges_the_recorded_legacy_status():
    r = judge(CHECKS["gpu"], {"driver": "535.129.03", "devices": None, "driver_errors": [
        {"status": "legacy_gpu", "code": None, "text": "NVRM:  supported through the NVIDIA 470.xx Legacy drivers.",
         "time": None, "source": "kernel_log"}]}, Options())
    assert (r.status, r.code, r.owner) == ("fail", "DRIVER_ERROR", "host"), r.summary
    assert "470.xx" in r.summary


def test_a_sentence_about_legacy_drivers_drains_nothing():
    text = "Is the K80 supported through the NVIDIA 470.xx Legacy drivers only? nvidia-smi lists it fine here.\n"
    assert _explained(text)[2] != "host"


# torch's warning, as 1.x and later print it (the minimum line) and as 0.3.x did (without it)
TOO_OLD = ("/opt/conda/lib/python3.10/site-packages/torch/cuda/__init__.py:152: UserWarning:\n"
           "    Found GPU0 Tesla K40m which is of cuda capability 3.5.\n"
           "    PyTorch no longer supports this GPU because it is too old.\n"
           "    The minimum cuda capability supported by this library is 5.0.\n")
TOO_OLD_03 = ("/usr/lib/python3/site-packages/torch/cuda/__init__.py:97: UserWarning:\n"
              "    Found GPU1 GeForce GTX 670 which is of cuda capability 3.0.\n"
              "    PyTorch no longer supports this GPU because it is too old.\n")


@pytest.mark.parametrize("text", [TOO_OLD, TOO_OLD_03], ids=["with-minimum", "0.3-form"])
def test_torchs_too_old_warning_is_a_build_without_code_for_the_gpu(text):
    assert _explained(text) == ("fail", "ARCH_NOT_IN_BUILD", "image")


def test_the_too_old_warning_is_recorded_as_the_programs_error_on_its_torch_index():
    facts = ex.torcharch.parse(TOO_OLD_03)
    assert facts["cuda_errors"] == [{"index": 1, "text": "PyTorch no longer supports this GPU because it is too old."}]
    assert facts["capabilities"] == ["3.0"] and facts["arch_list"] is None
    r = judge(CHECKS["gpu"], {"capabilities": ["3.7"], "devices": None, "cuda_errors": [
        {"index": 0, "text": "PyTorch no longer supports this GPU because it is too old."}]}, Options())
    assert (r.status, r.code, r.owner) == ("fail", "ARCH_NOT_IN_BUILD", "image"), r.summary


def test_a_sentence_quoting_the_too_old_warning_is_not_read():
    text = "Why does it say `Found GPU0 Tesla K80 which is of cuda capability 3.7` and that it is too old? It trains.\n"
    assert not ex.torcharch.detect(text)


@pytest.mark.parametrize(("line", "verdict"), [
    ("uncorrectable ECC error encountered", ("fail", "ECC_UNCORRECTABLE", "host")),
    ("an illegal memory access was encountered", ("warn", "CUDA_KERNEL_FAULT", "job")),
], ids=["ecc-host", "kernel-fault-job"])
def test_a_cuda_error_quoted_by_its_string_alone_is_the_programs_error(line, verdict):
    # Torch7's and many programs' `cudaGetErrorString(err)` printed as the whole line
    assert _explained(f"iteration 412 / 1000, loss 3.18\n{line}\n") == verdict


@pytest.mark.parametrize("text", [
    "out of memory\n",                                          # the kernel's or any program's as often as CUDA's
    "unknown error\n",
    "I sometimes see uncorrectable ECC error encountered in our logs, is that the GPU?\n",
], ids=["oom-bare", "unknown-bare", "prose"])
def test_a_bare_string_other_tools_print_or_a_sentence_drains_nothing(text):
    assert _explained(text)[2] != "host"
