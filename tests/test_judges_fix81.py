# mypy: disable-error-code="arg-type, typeddict-item"
# (judges take their TypedDict facts; these tests hand them partial facts, as a translated record would)
"""Issue 35's eighty-first and eighty-second corpus batches, fixed by class:
- a net plugin other than NCCL's own verbs or sockets refusing a buffer registration as an invalid argument (GCP
  TCPXO's `NET/FasTrak ...: INVALID_ARGUMENT: Buffer registration request ...`, as aws-ofi-nccl's `Unable to register
  memory ... RC: -22`) is the image's NCCL and plugin not matching; `verify explain` reads such a WARN as a failure,
  never "nothing to judge";
- a GPU whose every live NVML read errors (nvidia-smi's `ERR!` in its name, temperature, power, ECC ...) while only
  static fields come back is lost (GPU_LOST, host), not "not assessed"; one or two fields in error still warn;
- nvidia-smi's table on Windows names its third column `TCC/WDDM` where Linux has `Persistence-M`: read alike."""
from __future__ import annotations

import pytest

from tests.judging import explained, verdict
from verify.checks import gpu, nccl
from verify.options import Options

pytestmark = pytest.mark.unit

# gcp-a3-mega-10-nodes-tcpxo-fastrak-megatron-subgroup-buffer-registration-no-valid-fd-nccl-2.27.5-broken-pipe
_FASTRAK = ("NCCL WARN NET/FasTrak ...: INVALID_ARGUMENT: Buffer registration request does not have a valid fd set.\n"
            "NCCL WARN NET/FasTrak ...: FAILED_PRECONDITION: receive() error: 32: Broken pipe\n")


def test_a_net_plugin_refusing_a_buffer_registration_as_invalid_is_the_image_s():
    facts = {"backend": "nccl", "nodes": 10, "error": "collective: " + _FASTRAK.replace("\n", "; ").rstrip("; ")}
    r = nccl.judge(facts, Options())
    assert verdict(r) == ("fail", "NCCL_FAILED", "image"), r.summary
    assert "INVALID_ARGUMENT" in r.summary


def test_verify_explain_reads_a_net_plugin_s_refused_registration_as_a_failure():
    r = explained(_FASTRAK)
    assert verdict(r) == ("fail", "NCCL_FAILED", "image"), r.summary


@pytest.mark.parametrize("line", [
    "NCCL WARN NET/IB : Call to ibv_reg_mr_iova2 failed with error Invalid argument",     # NCCL's own verbs: not a plugin
    "NCCL WARN NET/FasTrak ...: FAILED_PRECONDITION: receive() error: 32: Broken pipe",   # no registration refused
])
def test_neither_verbs_nor_a_plugin_s_other_error_is_read_as_the_plugin_s_refusal(line):
    r = nccl.judge({"backend": "nccl", "error": f"all_reduce: {line}"}, Options())
    assert r.owner != "image"


# a40-node-a44-525.125.06-gpu0-err-in-name-ecc-fan-temp-power-util-mig-nvidia-smi-stalls-gpu1-idle-fine
_A40 = """+-----------------------------------------------------------------------------+
| NVIDIA-SMI 525.125.06   Driver Version: 525.125.06   CUDA Version: 12.0     |
|-------------------------------+----------------------+----------------------+
| GPU  Name        Persistence-M| Bus-Id        Disp.A | Volatile Uncorr. ECC |
| Fan  Temp  Perf  Pwr:Usage/Cap|         Memory-Usage | GPU-Util  Compute M. |
|                               |                      |               MIG M. |
|===============================+======================+======================|
|   0  ERR!                On   | 00000000:19:00.0 Off |                 ERR! |
|ERR!  ERR! ERR!    ERR! / ERR! |      0MiB / 46068MiB |    ERR!      Default |
|                               |                      |                 ERR! |
+-------------------------------+----------------------+----------------------+
|   1  NVIDIA A40          On   | 00000000:1A:00.0 Off |                    0 |
|  0%   26C    P8    12W / 300W |      0MiB / 46068MiB |      0%      Default |
|                               |                      |                  N/A |
+-------------------------------+----------------------+----------------------+
"""


def _dev(index, **more):
    return {"index": index, "pci_bus_id": f"00000000:1{index}:00.0", "lost": None, "memory_bytes": 46068 << 20,
            "persistence": True, **more}


def test_a_gpu_answering_every_live_read_with_an_error_is_lost():
    errors = {k: "ERR!" for k in ("name", "fan_speed", "temperature_c", "performance_state", "power_w",
                                  "power_limit_w", "utilization", "ecc_volatile_uncorrectable")}
    facts = {"driver": "525.125.06", "devices": [
        _dev(0, nvml_errors=errors),
        _dev(1, name="NVIDIA A40", lost=False, nvml_errors={}, temperature_c=26.0, power_w=12.0, power_limit_w=300.0,
             ecc=[True, None], ecc_volatile_uncorrectable=0)]}
    r = gpu.judge(facts, Options())
    assert verdict(r) == ("fail", "GPU_LOST", "host"), r.summary


def test_a_gpu_with_its_cooling_alone_unread_still_warns():
    facts = {"driver": "525.125.06", "devices": [
        _dev(0, name="NVIDIA A40", lost=False, nvml_errors={"fan_speed": "ERR!", "temperature_c": "ERR!"},
             power_w=80.0, power_limit_w=300.0, ecc=[True, None], ecc_volatile_uncorrectable=0)]}
    r = gpu.judge(facts, Options())
    assert r.code != "GPU_LOST" and r.status == "warn", r.summary


def test_verify_explain_reads_every_err_column_of_the_table():
    r = explained(_A40, "nvidia-smi.txt")
    assert verdict(r) == ("fail", "GPU_LOST", "host"), r.summary


# l4-windows-tcc-528.89-one-gpu-idle-p8-40c-12w-of-72w-ecc-0-waifu2x-gui-does-not-detect-it
_L4 = """+-----------------------------------------------------------------------------+
| NVIDIA-SMI 528.89       Driver Version: 528.89       CUDA Version: 12.0     |
|-------------------------------+----------------------+----------------------+
| GPU  Name            TCC/WDDM | Bus-Id        Disp.A | Volatile Uncorr. ECC |
| Fan  Temp  Perf  Pwr:Usage/Cap|         Memory-Usage | GPU-Util  Compute M. |
|                               |                      |               MIG M. |
|===============================+======================+======================|
|   0  NVIDIA L4          TCC   | 00000000:00:03.0 Off |                    0 |
| N/A   40C    P8    12W /  72W |      1MiB / 23034MiB |      0%      Default |
|                               |                      |                  N/A |
+-------------------------------+----------------------+----------------------+
"""


def test_verify_explain_reads_the_windows_table_s_driver_model_column():
    r = explained(_L4, "nvidia-smi.txt")
    assert verdict(r) == ("pass", None, None), r.summary
    assert "NVIDIA L4" in r.summary


# perlmutter-slurm-slingshot-cxi-aws-ofi-nccl-nccl-2.24.3-register-mr-einval-connect-res-3-julia-cuda-compat-fix and
# h20-3e-vm-pair-tencent-rdma-plugin-v6-roce-bonds-gid-3-tc-160-gdrdma-every-net-channel-alltoall-50-gbs-tuning-not-fault
def test_the_reader_keeps_a_net_plugin_s_name_with_spaces_in_its_transports():
    from verify.checks.nccl import ncclog
    text = ("nid001261:1906368:1908389 [0] NCCL INFO Channel 01/1 : 4[0] -> 0[0] [receive] via NET/AWS Libfabric/7/GDRDMA/Shared\n"
            "vm-host38:33957:34018 [0] NCCL INFO Channel 01/1 : 1[0] -> 2[1] [receive] via NET/NCCL RDMA Plugin v6/0/GDRDMA\n"
            "vm-host38:33957:34018 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[1] via P2P/CUMEM/read\n"
            "vm-host38:33957:34018 [0] NCCL INFO Channel 00/0 : 1[0] -> 2[1] [send] via NET/IB/0\n")
    log = ncclog.parse(text)
    assert log["transports"] == ["NET/AWS Libfabric", "NET/IB", "NET/NCCL RDMA Plugin v6", "P2P/CUMEM"]
    assert set(log["net_channels"]) == {"AWS Libfabric", "NCCL RDMA Plugin v6", "IB"}
