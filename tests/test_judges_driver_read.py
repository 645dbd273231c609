"""A driver read with no NVML device (issue 35, item 1: a verdict rests on what is there and says what was not assessed).

The node's own tools reading the driver's version (nvidia-smi's or dcgmi diag's header, /proc/driver/nvidia/version,
the fabric manager naming the driver it refuses) prove the NVIDIA kernel module loaded, which it does only beside a GPU
it supports: the GPUs are there and their health was not read. Every translator of the corpus who met such a record
(12 of 12) warned HEALTH_NOT_ASSESSED, owner host, where verify said "nothing to judge" (a driver alone) or passed (a
driver beside torch's build, `h100-80gb-hbm3-max-nightly-...`: no GPU's health read, and a pass). A program's clean
run alone stays nothing to judge (FACTS.md); beside a driver read it warns, as FACTS.md always said. A record that
counts no GPU (neither torch's count nor NVML's list) is never "0 usable" against `--expect-gpus`.
Real records from the entries named by slug (each source.md gives its URL); the facts of the first test are hand-made.
"""
from __future__ import annotations

import pytest

from tests.judging import CORPUS, explained, raw, replayed, verdict
from verify.checks import CHECKS
from verify.facts import GpuFacts
from verify.judging import judge
from verify.options import Options

pytestmark = pytest.mark.unit

UNREAD = ("warn", "HEALTH_NOT_ASSESSED", "host")
NOTHING = ("skip", "FACTS_INCOMPLETE", None)


def _gpu(options: Options | None = None, **facts):
    return judge(CHECKS["gpu"], {**{k: None for k in GpuFacts.__annotations__}, **facts}, options or Options())


@pytest.mark.parametrize("facts, want", [
    ({"driver": "570.172.08"}, UNREAD),
    ({"driver": "570.172.08", "torch": "2.11.0+cu128", "torch_cuda": "12.8"}, UNREAD),     # was a pass
    ({"driver": "570.172.08", "cuda_init_error": "none"}, UNREAD),
    ({"driver": "570.172.08", "cuda_available": True}, UNREAD),
    ({"driver": "550.54.15", "devices": [{"index": 0}, {"index": 1}]}, UNREAD),              # dcgmi diag's GPU list
    ({"cuda_init_error": "none"}, NOTHING),                                                   # a program's run alone
    ({"torch": "2.11.0+cu128", "torch_cuda": "12.8"}, NOTHING),                               # a build is no node
    ({"devices": [{"index": 0}]}, NOTHING),                                                   # a program's device line
], ids=["driver", "driver-and-build", "driver-and-cuda-init", "driver-and-is-available", "driver-and-indices",
        "cuda-init-alone", "build-alone", "index-alone"])
def test_a_driver_read_shows_the_gpus_there_and_their_health_unread_handmade(facts, want):
    assert verdict(_gpu(**facts)) == want


def test_a_record_that_counts_no_gpu_is_never_zero_usable_handmade():
    """`--expect-gpus 8` beside a driver read alone: nothing counted the GPUs, so none is missing (it was `fail
    GPU_NOT_VISIBLE, job`: "NVML lists 0 usable" of a list never read)."""
    assert verdict(_gpu(Options(expect_gpus=8), driver="580.95.05")) == UNREAD
    assert verdict(_gpu(Options(expect_gpus=8), driver="580.95.05", devices=[])) != UNREAD   # an empty list is read


@pytest.mark.parametrize("slug", [
    "a100-80gb-pcie-x4-20b5-dcgm-3.3.5-550.54.15-diag-r3-integration-pcie-fails-autopilot-labels-node-healthy-checker-bug",
    "fabricmanager-530-driver-interface-530.30.02-vs-loaded-530.41.03-mismatch-refuses-to-start-nvswitches-not-shown",
])
def test_both_roads_warn_a_real_driver_read_with_no_health(slug):
    assert replayed(slug)["gpu"] == verdict(explained(raw(slug))) == UNREAD


def test_the_fabric_manager_s_refusal_names_the_loaded_driver():
    from verify.explain import fmstatus
    text = raw("fabricmanager-530-driver-interface-530.30.02-vs-loaded-530.41.03-mismatch-refuses-to-start-nvswitches-not-shown")
    assert fmstatus.parse(text)["driver"] == "530.41.03"


@pytest.mark.parametrize("slug", [
    "h100-80gb-hbm3-max-nightly-26.6-bf16-ops-matmul-rows-8-and-up-garbage-driver-570.172.08-library-not-gpu",
    "ubuntu-24.04-nvidia-driver-565-open-proc-driver-nvidia-version-565.57.01-open-kernel-module-nixgl-regex-tool-bug-healthy",
    "hgx-b200-talos-1.12-beta-fabricmanager-580.95.05-wrapper-picks-lpf-mlx5-10-of-four-for-nvlsm-node-does-not-work",
    "rtx4090-x3-550.54.15-p2p-open-module-bidirectional-p2p-41-gbs-gen4-x16-near-link-rate-healthy",
])
def test_the_facts_road_warns_a_real_driver_read_with_no_health(slug):
    assert (CORPUS / slug / "expected.json").is_file()
    assert replayed(slug)["gpu"] == UNREAD


def test_a_terminal_wrap_that_loses_a_table_s_rows_yields_to_the_q_report_beside_it():
    """A table cut by an 80-column terminal keeps its header's driver and loses its rows; the -q report in the same
    file read every GPU's health, which answers the table's unread warning (explain/inventory.py)."""
    rows = raw("a10-idle-p8-pcie-gen1-of-gen4-healthy").split("\n")
    text = "\n".join(line[i:i + 80] for line in rows for i in range(0, max(len(line), 1), 80))
    assert verdict(explained(text)) == ("pass", None, None)


@pytest.mark.parametrize("slug", [
    "h100-80gb-hbm3-gpud-accelerator-subcommand-type-nvidia-product-detected-driver-535.161.08-no-health-read",
    "ubuntu-24.04-nvidia-driver-565-open-proc-driver-nvidia-version-565.57.01-open-kernel-module-nixgl-regex-tool-bug-healthy",
    "gentoo-rtx-3080-ga102-10de-2206-at-01-00-0-open-kernel-module-555.58-hyprctl-systeminfo-gpu-information-healthy",
])
def test_proc_driver_nvidia_version_is_read_as_the_loaded_driver(slug):
    """`/proc/driver/nvidia/version`'s line, open module or proprietary (explain/driverversion.py), and nvidia-smi's
    table banner with no row below it (explain/smitable.py): the driver answered."""
    assert verdict(explained(raw(slug))) == UNREAD


@pytest.mark.parametrize("line, version", [
    ("NVRM version: NVIDIA UNIX x86_64 Kernel Module  535.104.05  Sat Aug 19 01:15:15 UTC 2023", "535.104.05"),
    ("NVRM version: NVIDIA UNIX Open Kernel Module for aarch64  580.95.05  Release Build  (dvs-builder@U22)", "580.95.05"),
    ("NVRM version: NVIDIA UNIX x86_64 Kernel Module  384.81  Sat Sep  2 02:43:11 PDT 2017", "384.81"),
])
def test_both_flavours_of_the_module_s_line_handmade(line, version):
    from verify.explain import driverversion
    assert driverversion.detect(line) and driverversion.parse(line)["driver"] == version
