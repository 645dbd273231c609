"""Batch 305 (translated by a helper who had not read the judges). The NVIDIA Container Toolkit names the last
condition of the image's NVIDIA_REQUIRE_CUDA it tried (`cuda>=10.0 brand=tesla,driver>=384,driver<385` on a 390
driver: `unsatisfied condition: driver < 385`): the same refusal of a host driver too old as `cuda>=`. The k8s
device plugin's `error getting device handle for index '0': Unknown Error` is the handle nvidia-smi's `Unable to
determine the device handle ...: Unknown Error` fails to get: that GPU does not answer (host)."""
from __future__ import annotations

import pytest

from tests.judging import explained
from verify.shared import cuda_errors

pytestmark = pytest.mark.unit

HOOK = ("nvidia-container-cli: requirement error: unsatisfied condition: {cond}\\\\n\\\"\"\": unknown.")


@pytest.mark.parametrize("cond", ["driver < 385", "driver >= 384", "brand = tesla", "cuda >= 10.0", "cuda>=12.8"])
def test_any_unsatisfied_requirement_of_the_image_is_the_host_driver_too_old(cond: str) -> None:
    d = cuda_errors.decode(HOOK.format(cond=cond))
    assert d is not None and (d.code, d.owner) == ("DRIVER_TOO_OLD", "host")


def test_a_condition_in_a_job_s_own_words_is_not_the_toolkit_s() -> None:
    assert cuda_errors.decode("assert failed: unsatisfied condition: batch < 385") is None


def test_the_toolkit_s_refusal_explained_names_the_old_driver() -> None:
    r = explained("docker run --runtime=nvidia -ti --rm nvidia/cuda:10.0-devel-ubuntu18.04 nvidia-smi\n"
                  + HOOK.format(cond="driver < 385") + "\n")
    assert (r.status, r.code, r.owner) == ("fail", "DRIVER_TOO_OLD", "host"), r.summary


@pytest.mark.parametrize("said, handle", [("Unknown Error", "Unknown Error"), ("GPU is lost", "GPU_IS_LOST")])
def test_the_device_plugin_s_handle_error_by_index_is_that_gpu_lost(said: str, handle: str) -> None:
    r = explained("panic: Unable to load resource managers to manage plugin devices: error building device map: "
                  f"error building GPU device map: error getting device handle for index '3': {said}\n")
    assert (r.status, r.code, r.owner) == ("fail", "GPU_LOST", "host"), r.summary
    assert "3" in r.summary


def test_a_handle_error_of_another_kind_is_no_lost_gpu() -> None:
    r = explained("error getting device handle for index '0': Insufficient Permissions\n")
    assert r.code != "GPU_LOST"
