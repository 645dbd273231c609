"""Batches 216 and 218 (issue 35): the lead's review of what the blind translations showed.

- A unified-memory GPU's nvidia-smi table (DGX Spark GB10, Jetson Thor) prints `Not Supported` in the memory cell:
  the row was not read at all, so its temperature and power went unread and a healthy GB10 warned
  HEALTH_NOT_ASSESSED on the explain road while its translation passed
  (dgx-spark-gb10-580.95.05-table-p8-40c-4w-memory-usage-not-supported-ecc-na-k8s-device-plugin-question-healthy).
- torch's rendezvous store asked for libuv by a torch built without it (`use_libuv was requested but PyTorch was build
  without libuv support`, torch 2.4+ Windows wheels) failed NCCL_FAILED owned by the host on the facts road and was
  not recognised by explain: the torch build is the image's
  (windows-laptop-one-gpu-torch-2.5.1-cu121-torchrun-tcpstore-use-libuv-requested-but-pytorch-built-without-libuv).
"""
from __future__ import annotations

from typing import Any, cast

import pytest

from tests.judging import explained, verdict
from verify.checks import nccl
from verify.explain import smitable
from verify.options import Options

pytestmark = pytest.mark.unit

GB10 = """\
| NVIDIA-SMI 580.95.05              Driver Version: 580.95.05      CUDA Version: 13.0     |
|   0  NVIDIA GB10                    On  |   0000000F:01:00.0 Off |                  N/A |
| N/A   40C    P8              4W /  N/A  | Not Supported          |      0%      Default |
|                                         |                        |                  N/A |
"""


def test_a_unified_memory_gpus_table_row_is_read_without_its_memory():
    dev = smitable.parse(GB10)["devices"][0]
    assert (dev["temperature_c"], dev["power_w"], dev.get("memory_bytes")) == (40.0, 4.0, None)
    r = explained(GB10)
    assert (r.name, *verdict(r)) == ("gpu", "pass", None, None), r.summary


def test_a_row_whose_memory_cell_is_garbled_is_still_not_read():
    row = GB10.replace("Not Supported         ", "Not Reported, see log")
    assert "temperature_c" not in (smitable.parse(row)["devices"] or [{}])[0]


LIBUV = ('  File "...\\torch\\distributed\\elastic\\rendezvous\\static_tcp_rendezvous.py", line 67, in next_rendezvous\n'
         "    self._store = TCPStore(  # type: ignore[call-arg]\n"
         "RuntimeError: use_libuv was requested but PyTorch was build without libuv support\n")


def test_a_torch_without_libuv_asked_for_its_libuv_store_is_the_images_build():
    r = explained(LIBUV)
    assert (r.name, *verdict(r)) == ("nccl", "fail", "NCCL_FAILED", "image"), r.summary
    assert "USE_LIBUV=0" in (r.remedy or "")
    facts: dict[str, Any] = {"backend": "nccl", "error": "init: RuntimeError: use_libuv was requested but PyTorch "
                             "was build without libuv support"}
    assert verdict(nccl.judge(cast(Any, facts), Options()))[2] == "image"


def test_a_sentence_about_the_libuv_error_is_not_the_error():
    assert explained("Q: what does `use_libuv was requested but PyTorch was build without libuv support` mean?\n"
                     ).name != "nccl"
