"""Issue 35's hundred-and-fourth and hundred-and-fifth corpus batches (nvidia-smi stretches of one GPU; RDMA
userspace, memlock and NCCL), fixed by class:
- a section of `nvidia-smi -q -x` quoted without the report's root (`<clocks_event_reasons>` and its lines) is read as
  one GPU of unknown bus (l20-x4-hygon-q-x-xml-clocks-event-reasons-gpu-idle-only-...);
- a stretch of one GPU's `nvidia-smi -q` block cut above its identity is told by its Temperature, Power Readings and
  Clocks lines (v100-sxm2-32gb-x4-384.145-a-one-block-retired-pages-pending-no-...);
- a shell's `ulimit -S -l` is the soft memlock limit, `ulimit -H -l` the hard one, not read as the limit
  (slurm-cluster-ulimit-s-l-and-h-l-unlimited-...);
- libibverbs' `no userspace device-specific driver found for .../uverbs0` is a verbs device the kernel has and no
  provider of the image drives: the image's, judged on its own; and ncclGetErrorString's `internal error` before
  NCCL 2.12, as nccl-tests quotes it, is NCCL's internal error, the image's, never the node's
  (v100-pcie-x4-singularity-libibverbs-no-userspace-driver-for-uverbs0-nccl-tests-internal-error-image-lacks-libmlx5)."""
from __future__ import annotations

import pytest

from tests.judging import explained, verdict
from verify.checks import CHECKS
from verify.explain import fragment, noprovider, shellimit, smi, smixml
from verify.judging import judge
from verify.options import Options

pytestmark = pytest.mark.unit

# ------------------------------------------------------------------ nvidia-smi -q -x: a section without the root
# l20-x4-hygon-q-x-xml-clocks-event-reasons-gpu-idle-only-all-nine-read-1panel-root-detection-question (first lines)
L20_REASONS = """\
                <clocks_event_reasons>
                        <clocks_event_reason_gpu_idle>Active</clocks_event_reason_gpu_idle>
                        <clocks_event_reason_applications_clocks_setting>Not Active</clocks_event_reason_applications_clocks_setting>
                        <clocks_event_reason_sw_power_cap>Not Active</clocks_event_reason_sw_power_cap>
                        <clocks_event_reason_hw_slowdown>Not Active</clocks_event_reason_hw_slowdown>
                        <clocks_event_reason_hw_thermal_slowdown>Not Active</clocks_event_reason_hw_thermal_slowdown>
                </clocks_event_reasons>
"""


def test_a_q_x_section_without_the_report_root_is_one_gpu_of_unknown_bus():
    assert smixml.detect(L20_REASONS)
    (dev,) = smixml.parse(L20_REASONS)["devices"]
    assert (dev["throttle_reasons"], dev["throttle_reasons_read"]) == (0x1, 0x1 | 0x2 | 0x4 | 0x8 | 0x40)
    assert "index" not in dev and "pci_bus_id" not in dev
    r = explained(L20_REASONS)
    assert (r.name, *verdict(r)) == ("gpu", "pass", None, None), r.summary


def test_a_q_x_section_cut_below_another_s_end_is_read_past_that_end_and_judged():
    """The excerpt starts inside the section above it: its end tag closes nothing and is dropped, not the stop."""
    cut = ("                        <used>1 MiB</used>\n                </fb_memory_usage>\n"
           + L20_REASONS.replace("<clocks_event_reason_hw_slowdown>Not Active", "<clocks_event_reason_hw_slowdown>Active"))
    (dev,) = smixml.parse(cut)["devices"]
    assert dev["throttle_reasons"] == 0x1 | 0x8
    assert verdict(explained(cut))[:2] == ("warn", "THROTTLED")     # once: a transient read, not a failure


def test_xml_that_names_no_section_of_nvidia_smi_s_dtd_is_not_read_as_it():
    assert not fragment.FRAGMENT.search("<config>\n  <temperature>30</temperature>\n</config>\n")
    assert not smixml.detect("a sentence about <clocks_event_reasons> in prose\n")


# ------------------------------------------------------------------ nvidia-smi -q: a block's stretch
# v100-sxm2-32gb-x4-384.145-a-one-block-retired-pages-pending-no-32c-57w-of-300w-sm-1290-of-1530-centos7-toolkit-question
V100_STRETCH = """\
    Temperature
        GPU Current Temp            : 32 C
        GPU Shutdown Temp           : 90 C
        GPU Slowdown Temp           : 87 C
    Power Readings
        Power Management            : Supported
        Power Draw                  : 57.44 W
        Power Limit                 : 300.00 W
        Default Power Limit         : 300.00 W
        Enforced Power Limit        : 300.00 W
"""


def test_a_q_stretch_cut_above_the_gpu_s_identity_is_read_by_its_temperature_and_power_lines():
    assert smi.detect(V100_STRETCH)
    (dev,) = smi.parse(V100_STRETCH)["devices"]
    assert (dev["temperature_c"], dev["temperature_slowdown_c"], dev["power_limit_w"],
            dev["power_default_limit_w"]) == (32.0, 87.0, 300.0, 300.0)
    r = explained(V100_STRETCH)
    assert (r.name, *verdict(r)) == ("gpu", "pass", None, None), r.summary
    assert not smi.detect("The GPU Current Temp reads fine here.\n")    # one line of prose is no report


# ------------------------------------------------------------------ ulimit -S -l / -H -l
# slurm-cluster-ulimit-s-l-and-h-l-unlimited-for-users-root-and-slurm-ucx-alloc-failures-not-memlock
SOFT_AND_HARD = "# ulimit -S -l\nunlimited\n# ulimit -H -l\nunlimited\n"


def test_ulimit_s_l_is_the_soft_memlock_limit_and_h_l_the_hard_one_not_read():
    assert shellimit.memlock(SOFT_AND_HARD) == "unlimited"
    r = explained(SOFT_AND_HARD)
    assert (r.name, *verdict(r)) == ("fabric", "pass", None, None), r.summary
    assert shellimit.memlock("$ ulimit -H -l\n64\n") is None                     # the ceiling, not the limit
    low = "$ ulimit -S -l\n64\n$ ulimit -H -l\nunlimited\n"
    assert shellimit.memlock(low) == 64 * 1024
    assert verdict(explained(low))[:2] == ("fail", "FABRIC_MEMLOCK_LOW")


# ------------------------------------------------------------------ libibverbs: no provider; NCCL's 'internal error'
# v100-pcie-x4-singularity-libibverbs-no-userspace-driver-for-uverbs0-nccl-tests-internal-error-image-lacks-libmlx5
WARNING = "libibverbs: Warning: no userspace device-specific driver found for /sys/class/infiniband_verbs/uverbs0"
SINGULARITY = f"""\
Singularity> ./build/all_reduce_perf -b 8 -e 128M -f 2 -g 4
# nThread 1 nGpus 4 minBytes 8 maxBytes 134217728 step: 2(factor) warmup iters: 5 iters: 20 validation: 1
#
# Using devices
#   Rank  0 Pid 108039 on ip-0AB85F07 device  0 [0x00] Tesla V100-PCIE-16GB
#   Rank  1 Pid 108039 on ip-0AB85F07 device  1 [0x00] Tesla V100-PCIE-16GB
{WARNING}
ip-0AB85F07: Test NCCL failure common.cu:775 'internal error'
"""


def _fabric(**facts):
    return judge(CHECKS["fabric"], facts, Options())


def test_libibverbs_finding_no_provider_for_a_kernel_verbs_device_is_the_image_s_on_its_own():
    r = _fabric(verbs_error=WARNING)
    assert verdict(r) == ("fail", "FABRIC_USERSPACE_MISSING", "image"), r.summary
    assert "uverbs0" in r.summary
    # with the adapters listed, the same warning names what the image lacks
    port = {"port": 1, "state": "ACTIVE", "phys_state": "LinkUp", "link_layer": "InfiniBand"}
    listed = _fabric(adapters=[{"name": "mlx5_0", "driver": "mlx5_core", "ports": [port]}], verbs_error=WARNING)
    assert verdict(listed) == ("fail", "FABRIC_USERSPACE_MISSING", "image"), listed.summary
    # a device libibverbs did open: the one left out is not shown to be the job's
    opened = _fabric(verbs_error=WARNING, verbs_devices=["mlx5_0"], uverbs=["uverbs0", "uverbs1"])
    assert opened.code != "FABRIC_USERSPACE_MISSING", opened.summary


def test_the_warning_printed_above_nccl_tests_is_read_and_quoted_in_prose_is_not():
    assert noprovider.parse(SINGULARITY) == {"verbs_error": WARNING}
    r = explained(SINGULARITY)
    assert (r.name, *verdict(r)) == ("fabric", "fail", "FABRIC_USERSPACE_MISSING", "image"), r.summary
    assert not noprovider.detect(f"If you see `{WARNING}`, install the providers.\n")


@pytest.mark.parametrize("error", [
    "init: Test NCCL failure common.cu:775 'internal error'",                          # nccl-tests, NCCL < 2.12
    "NCCL error in: /opt/pytorch/torch/lib/c10d/ProcessGroupNCCL.cpp:825, internal error, NCCL version 2.7.8",
])
def test_ncclgeterrorstring_s_internal_error_before_2_12_is_nccl_s_own_the_image_s(error):
    r = judge(CHECKS["nccl"], {"backend": "nccl", "world_size": 4, "nodes": 1, "error": error}, Options())
    assert verdict(r) == ("fail", "NCCL_FAILED", "image"), r.summary


def test_an_internal_error_another_library_names_is_not_nccl_s():
    error = "all_reduce: RuntimeError: the server hit an internal error while serving the request"
    r = judge(CHECKS["nccl"], {"backend": "nccl", "world_size": 4, "nodes": 1, "error": error}, Options())
    assert r.owner != "image", r.summary


def test_clock_reason_lines_grepped_out_of_their_section_are_read_under_it():
    grepped = "\n".join(line for line in L20_REASONS.splitlines() if "_reason_" in line)
    (dev,) = smixml.parse(grepped)["devices"]
    assert (dev["throttle_reasons"], dev["throttle_reasons_read"]) == (0x1, 0x1 | 0x2 | 0x4 | 0x8 | 0x40)
