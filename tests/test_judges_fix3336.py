"""Issue 35's thirty-third and thirty-sixth corpus batches (translated blind from real output): the readers and rules
they called for, by class (the entries themselves replay in tests/test_gpu_rules.py and tests/test_explain.py).

- NCCL's `no socket interface found` is the environment's interface selection even where the variable is not
  recorded (NCCL falls back to lo without one): the job's. XLA's (JAX's) report of a failed NCCL call, `... failed:
  <result>. Last NCCL warning(error) ... '<WARN>'`, is read as NCCL's failure, wrapped or not.
- A rendezvous port another process holds (EADDRINUSE: torch's TCPStore and its libuv store, NCCL's bind) is the
  launch's; torch's store that cannot bind an address that is not this host's (errno 99) likewise.
- No libnvidia-ml in a process on a node whose driver answers (its version read beside, by nvidia-smi on the host),
  with no device nodes shown: the process was started without the NVIDIA runtime: a failure, the job's. With the
  device nodes shown, or no driver shown, the rule before stands. `verify explain` reads NVML's library-not-found
  words, Go's log prefix (the device plugin's), and an `nvidia-smi -q` report below another tool's lines.
- A kernel log read whole (each line a record: dmesg, `dmesg -T`, /dev/kmsg, journalctl -k) in which the NVIDIA driver
  speaks and nothing reads as a failure is a log with no Xid, SXid or driver status: `[]`, not "not recognised". A
  log with a failure word, an error-priority record or another tool's line in it is not read so.
"""
from __future__ import annotations

from typing import Any, cast

import pytest

from verify import explain as ex
from verify.checks import nccl
from verify.checks.gpu.verdict import judge as judge_gpu
from verify.explain import kernel, launchers, nvml, rendezvous, smi
from verify.options import Options

pytestmark = pytest.mark.unit


def verdict(r: Any) -> tuple[Any, Any, Any]:
    return r.status, r.code, r.owner


# ----------------------------------------------------------------------------- NCCL: no interface, XLA's report
def _nccl(**facts: Any) -> Any:
    return nccl.judge(cast(Any, {"error": None, "nccl_env": None, "nccl_log": None, **facts}), Options())


@pytest.mark.parametrize("warn", ["Bootstrap : no socket interface found", "NET/Socket : no interface found"])
def test_no_socket_interface_is_the_environment_s_selection_even_unrecorded_handmade(warn):
    r = _nccl(error=f"init: ncclCommInitRank failed: invalid usage. Last NCCL warning(error): '{warn}'")
    assert verdict(r) == ("fail", "NCCL_FAILED", "job") and "NCCL_SOCKET_IFNAME" in r.summary + (r.remedy or "")


XLA_INIT = ("Failed to create NCCL communicator: INTERNAL: ncclCommInitRankConfig(comm, nranks, id, rank, config) "
            "failed:\ninvalid usage (run with NCCL_DEBUG=WARN for details). Last NCCL warning(error) log entry (may be "
            "unrelated) 'Bootstrap : no socket interface found'.")


@pytest.mark.parametrize("text", [XLA_INIT, XLA_INIT.replace("failed:\n", "failed: "),
                                  "jaxlib.xla_extension.XlaRuntimeError: INTERNAL: " + XLA_INIT.replace("\n", " ")])
def test_xla_s_report_of_a_failed_nccl_call_is_read_as_nccl_s_failure_handmade(text):
    facts = ex.nccl.parse(ex.pasted.bare(text))
    assert str(facts["error"]).startswith("init: ") and "no socket interface found" in str(facts["error"])
    assert verdict(ex.explain_text(text, "jax.log", Options())) == ("fail", "NCCL_FAILED", "job")


def test_xla_s_words_quoted_in_prose_are_no_failure():
    text = "If you see `Last NCCL warning(error) log entry (may be unrelated) 'Bootstrap : ...'`, set the variable."
    assert not ex.nccl.detect(text)


# ----------------------------------------------------------------------------- a rendezvous port in use
STORE_IN_USE = ("torch.distributed.DistNetworkError: The server socket has failed to listen on any local network "
                "address. The server socket has failed to bind to [::]:29501 (errno: 98 - Address already in use). The "
                "server socket has failed to bind to 0.0.0.0:29501 (errno: 98 - Address already in use).")
LIBUV_IN_USE = ("torch.distributed.DistNetworkError: The server socket has failed to listen on any local network "
                "address. port: 29400, useIpv6: false, code: -98, name: EADDRINUSE, message: address already in use")
NOT_MINE = ("RuntimeError: The server socket has failed to listen on any local network address. The server socket has "
            "failed to bind to 10.0.0.7:29500 (errno: 99 - Cannot assign requested address).")


@pytest.mark.parametrize("line", [STORE_IN_USE, LIBUV_IN_USE, NOT_MINE, "[rank0]: " + STORE_IN_USE])
def test_a_rendezvous_store_that_cannot_bind_is_the_launch_s_handmade(line):
    assert ex.kind_of(line) is not None and ex.kind_of(line).name == "torch.distributed rendezvous error"  # type: ignore[union-attr]
    assert verdict(ex.explain_text(line, "train.log", Options())) == ("fail", "NCCL_FAILED", "job")
    assert verdict(_nccl(error=f"init: {line}", nodes=1)) == ("fail", "NCCL_FAILED", "job")


def test_nccl_s_own_bind_on_a_port_in_use_is_the_launch_s_handmade():
    r = _nccl(error="init: misc/socket.cc:484 NCCL WARN Net : Call to bind failed : Address already in use")
    assert verdict(r) == ("fail", "NCCL_FAILED", "job")


def test_the_store_s_other_failures_are_not_read_as_a_bind_handmade():
    """A peer that never joined names no cause on its own: not this reader's."""
    text = "torch.distributed.DistStoreError: Timed out after 901 seconds waiting for clients. 1/2 clients joined."
    assert not rendezvous.detect(text)
    assert not rendezvous.detect("Docs: if you see `The server socket has failed to bind ... Address already in use`")


# ----------------------------------------------------------------------------- no libnvidia-ml on a node whose driver answers
def _gpu(**facts: Any) -> Any:
    base = {"torch": None, "devices": None, "nvml_error": None, "device_nodes": None, "driver": None}
    return judge_gpu(cast(Any, {**base, **facts}), Options())


def test_no_nvml_library_beside_an_answering_driver_is_the_process_s_start_handmade():
    r = _gpu(nvml_library=False, driver="550.54.15")
    assert verdict(r) == ("fail", "GPU_NOT_VISIBLE", "job") and "NVIDIA runtime" in r.summary
    # no driver shown: whose it is stays the toolkit's, and a failure only where GPUs are expected
    assert verdict(_gpu(nvml_library=False)) == ("skip", "GPU_NOT_VISIBLE", "host")
    assert "/dev/nvidia* exist" not in _gpu(nvml_library=False).summary          # not recorded: not claimed
    # device nodes shown: the runtime gave the GPUs and not the libraries: the toolkit's, as before
    shown = _gpu(nvml_library=False, device_nodes=True, driver="550.54.15")
    assert verdict(shown) == ("skip", "GPU_NOT_VISIBLE", "host") and "/dev/nvidia* exist" in shown.summary


PLUGIN = """$ kubectl logs -n kube-system nvidia-device-plugin-daemonset-x2k9v
2024/03/01 10:00:00 Loading NVML
2024/03/01 10:00:00 Failed to initialize NVML: {words}.
2024/03/01 10:00:00 If this is a GPU node, did you set the docker default runtime to `nvidia`?
$ nvidia-smi -q | head
==============NVSMI LOG==============
Timestamp                                 : Fri Mar  1 10:01:00 2024
Driver Version                            : 550.54.15
CUDA Version                              : 12.4
"""


@pytest.mark.parametrize("words", ["could not load NVML library", "ERROR_LIBRARY_NOT_FOUND"])
def test_a_plugin_that_cannot_load_nvml_beside_the_host_s_nvidia_smi_is_explained_handmade(words):
    text = PLUGIN.format(words=words)
    facts = nvml.parse(ex.pasted.bare(text))
    assert facts["nvml_library"] is False and facts["nvml_error"] is None and facts["driver"] == "550.54.15"
    assert verdict(ex.explain_text(text, "plugin.log", Options())) == ("fail", "GPU_NOT_VISIBLE", "job")
    # without the host's nvidia-smi, nothing shows the GPUs are there
    alone = "\n".join(text.splitlines()[:4])
    assert ex.explain_text(alone, "plugin.log", Options()).status == "skip"


def test_nvml_s_other_refusals_stay_nvml_errors():
    facts = nvml.parse("Failed to initialize NVML: Driver/library version mismatch\n")
    assert facts["nvml_error"].endswith("version mismatch") and "nvml_library" not in facts


def test_go_s_log_prefix_is_a_launcher_prefix():
    assert launchers.prefixes("2020/10/14 18:04:53 Loading NVML") == "Loading NVML"
    assert launchers.prefixes("2020/10/14 18:04:53.123456 Loading NVML") == "Loading NVML"


def test_an_nvidia_smi_report_below_another_tool_s_lines_keeps_its_header():
    text = 'config.json:\n{\n    "default-runtime": "nvidia",\n}\n' + PLUGIN.split("$ nvidia-smi -q | head\n")[1]
    facts = smi.parse(text)
    assert (facts["driver"], facts["cuda_driver"], facts["devices"]) == ("550.54.15", "12.4", None)


# ----------------------------------------------------------------------------- a kernel log read whole, no event
KMSG = """6,812,5123400,-;nvidia-nvswitch0: open (major=508)
6,813,5123410,-;nvidia-nvswitch1: open (major=508)
6,814,9123400,-;IPv6: ADDRCONF(NETDEV_CHANGE): eth0: link becomes ready
6,815,9123500,-;perf: interrupt took too long (2510 > 2500), lowering kernel.perf_event_max_sample_rate to 79500
"""
DMESG = """[    5.100000] nvidia: loading out-of-tree module taints kernel.
[    5.100001] nvidia: module verification failed: signature and/or required key missing - tainting kernel
[    5.300000] NVRM: loading NVIDIA UNIX x86_64 Kernel Module  550.54.15  Tue Mar  5 22:23:56 UTC 2024
[    5.400000] nvidia-uvm: Loaded the UVM driver, major device number 509.
"""
JOURNAL = """-- Boot 5d3c0f --
Mar 05 10:00:01 gpu-node-7 kernel: nvidia-modeset: Loading NVIDIA Kernel Mode Setting Driver for UNIX platforms
Mar 05 10:00:01 gpu-node-7 kernel: nvidia_uvm: module uses symbols from proprietary module nvidia, inheriting taint.
Mar 05 10:00:02 gpu-node-7 kernel: [drm] Initialized nvidia-drm 0.0.0 20160202 for 0000:3b:00.0 on minor 1
"""


@pytest.mark.parametrize("text", [KMSG, DMESG, "$ dmesg\n" + DMESG, JOURNAL])
def test_a_kernel_log_read_whole_with_no_event_shows_none_handmade(text):
    assert kernel.detect(text)
    facts = kernel.parse(text)
    assert (facts["xid_events"], facts["sxid_events"], facts["driver_errors"]) == ([], [], [])
    assert ex.explain_text(text, "dmesg.txt", Options()).status == "pass"


@pytest.mark.parametrize("extra", [
    "[    6.000000] pcieport 0000:00:03.0: AER: Uncorrected (Non-Fatal) error received: 0000:3b:00.0",
    "[    6.000000] NVRM: GPU 0000:3b:00.0: GPU does not have the necessary power cables connected.",
    "[    6.000000] nvidia: probe of 0000:3b:00.0 failed with error -1",
    "[    6.000000] INFO: task python:1234 blocked for more than 120 seconds.\n[    6.000001] Call Trace:",
    "a note the poster added under the log",
])
def test_a_kernel_log_with_a_failure_or_another_tool_s_line_is_not_read_as_clean(extra):
    assert not kernel._clean(DMESG + extra + "\n")


def test_a_kernel_log_without_the_driver_or_at_error_priority_is_not_read_as_clean():
    assert not kernel._clean("\n".join(line for line in KMSG.splitlines() if "nvswitch" not in line) * 2)
    assert not kernel._clean(KMSG + "3,816,9123600,-;eth0: something went sideways\n")
    assert not kernel._clean(JOURNAL + "Mar 05 10:00:03 gpu-node-7 kernel: some_module: inheriting taint from a friend\n")
