"""Issue 35's twenty-second to twenty-fourth corpus batches (translated blind from real output): the readers and
rules they called for, by class (the batches' entries themselves replay in tests/test_gpu_rules.py and
tests/test_explain.py).

- Application Xids 13 and 31 (NVIDIA's catalogue: most often the program's) under three or more processes on one GPU
  point at the GPU: a warning for the host, not for each program (Xid 43, a channel's teardown, is not counted).
- A GPU's NVSwitch fabric registration (State Completed) says it joined the fabric, nothing of its own health: a
  device with only that read is not assessed (HEALTH_NOT_ASSESSED), never healthy. `verify explain` reads a grepped
  Fabric section.
- libfabric's EFA provider that cannot register a CUDA buffer with the EFA device (no peer-to-peer path to GPU memory)
  makes NCCL's fall-back to sockets the host's, not the image's missing plugin; Open MPI's `[1,0]<stdout>:` is read
  under a CI log's indent.
- `verify explain` reads `nvidia-smi -q`'s `GPU Recovery Action` (and the older `GPU Reset Status` lines) and a
  process's /proc/<pid>/limits `Max locked memory` (slurmd's: its jobs inherit it).
- CUDA's `busy or unavailable` (46) beside GPUs in an exclusive compute mode is another process holding the GPU
  (the job's placement, fail, owner job); in compute mode Prohibited it is the node's setting (host). The compute
  mode is a fact (`compute_mode`: NVML, `nvidia-smi -q`, the table's `Compute M.` column, the CSV query).
- Eight GPUs of a model only built on NVSwitch boards (HGX H100/H800/H200/H20/B200) in one node's run are behind
  NVSwitches though the record does not say so: NVLS is expected (its NVLS_NOT_USED judged); nccl-tests' device
  lines give an NCCL INFO log its ranks, nodes and GPU.
- NCCL's `message truncated : receiving N bytes instead of M` (socket and IB) is the ranks disagreeing on a collective's
  size or NCCL_* settings: the job's; work requests flushed (status 5) with no other completion error are still the
  transport failing between the nodes (host); `NET/IB : mlx5_1:1 Got async event` (2.19+ names the device) is read;
  nccl-tests' `mpirun -np N ... -g G` launch line gives a table without device lines its world size.
- `verify explain` reads `nvidia-smi -q -x` (XML, what exporters read) by the -q reader's own paths, a cut document for
  what came before the cut, never expanding a declared entity; `for GPU0000:4F:00.0` (no space) is a handle error too.
- A report pasted twice (one GPU listed twice) is no verify bug: each GPU once, its last reading judged (the newest
  evidence), the earlier filling only what it did not read; the corpus's excerpts pasted twice keep their verdicts.
- Batches 28-30: the node's only InfiniBand port is down only if no port that may be InfiniBand (link layer not shown)
  is ACTIVE; a sound memlock limit read on its own passes on what it shows (issue 35 item 1); systemd's
  `LimitMEMLOCK=` is read; NCCL's `posix_fallocate failed: No space left on device` is /dev/shm full (the job's);
  `bind failed : Cannot assign requested address` is an address the job gave, not this host's; `ECC Mode` is read.
- CUDA 10.0 and older numbered the unknown error 30 (999 since 10.1): torch's `cuda runtime error (30) : unknown
  error` is the driver's state, as 999 is; an error torch's CUDA start-up traceback ends in is CUDA refusing to start.
"""
from __future__ import annotations

from typing import Any

import pytest

from verify import explain as ex
from verify.checks import CHECKS
from verify.explain import cuda
from verify.judging import judge
from verify.options import Options
from verify.shared import cuda_errors

pytestmark = pytest.mark.unit

TRACE_30 = """THCudaCheck FAIL file=/opt/conda/conda-bld/pytorch_1/work/aten/src/THC/THCGeneral.cpp line=51 error=30 : unknown error
Traceback (most recent call last):
  File "train.py", line 9, in <module>
    torch.zeros(1).cuda()
  File "/usr/lib/python3.7/site-packages/torch/cuda/__init__.py", line 162, in _lazy_init
    torch._C._cuda_init()
RuntimeError: cuda runtime error (30) : unknown error at /opt/conda/conda-bld/pytorch_1/work/aten/src/THC/THCGeneral.cpp:51
"""


@pytest.mark.parametrize("line", ["RuntimeError: cuda runtime error (30) : unknown error at THCGeneral.cpp:51",
                                  "THCudaCheck FAIL file=x/THCGeneral.cpp line=51 error=30 : unknown error",
                                  "RuntimeError: cuda runtime error (999) : unknown error at THCGeneral.cpp:70"])
def test_cuda_s_old_number_for_the_unknown_error_is_the_driver_s_state_handmade(line):
    decoded = cuda_errors.decode(line)
    assert decoded is not None and (decoded.code, decoded.owner) == ("DRIVER_ERROR", "host")


def test_an_error_in_torch_s_cuda_start_up_traceback_is_a_refusal_to_initialise_handmade():
    assert str(cuda.refusal(TRACE_30)).startswith("THCudaCheck FAIL file=") and "error=30" in str(cuda.refusal(TRACE_30))
    result = ex.explain_text(TRACE_30, "trace.txt", Options())
    assert (result.name, result.status, result.code, result.owner) == ("gpu", "fail", "DRIVER_ERROR", "host")


def test_out_of_memory_in_a_running_program_s_thc_line_is_no_refusal_handmade():
    """The same THCGeneral.cpp prints the caching allocator's out of memory mid-run: no start-up trace, no refusal."""
    text = "THCudaCheck FAIL file=/pytorch/aten/src/THC/THCGeneral.cpp line=844 error=2 : out of memory\n" \
           "RuntimeError: cuda runtime error (2) : out of memory at /pytorch/aten/src/THC/THCGeneral.cpp:844\n"
    assert cuda.refusal(text) is None
    said = "If torch says `cuda runtime error (30) : unknown error`, reboot the node.\n"
    assert cuda.refusal(said) is None


def _xid(xid: int, pid: int, bus: str = "0000:db:00") -> dict:
    return {"xid": xid, "index": None, "uuid": None, "pci_bus_id": bus, "source": "kernel_log", "time": None,
            "text": f"NVRM: Xid (PCI:{bus}): {xid}, pid={pid}, Ch 00000008, intr 00000000. MMU Fault"}


@pytest.mark.parametrize("events, owner", [
    ([_xid(31, 100), _xid(31, 200), _xid(13, 300)], "host"),           # three programs, one GPU: suspect the GPU
    ([_xid(31, 100), _xid(31, 100), _xid(31, 200)], "job"),            # two programs: each program's own
    ([_xid(43, p) for p in (1, 2, 3, 4)], "job"),                      # 43 is each program's teardown, not counted
    ([_xid(31, 1, "0000:3d:00"), _xid(31, 2, "0000:db:00"), _xid(31, 3, "0000:1b:00")], "job"),   # three GPUs
], ids=["three-processes", "two-processes", "xid43-teardowns", "spread-over-gpus"])
def test_application_xids_under_several_programs_on_one_gpu_suspect_the_gpu_handmade(events, owner):
    r = judge(CHECKS["gpu"], {"torch": None, "xid_events": events}, Options())
    assert (r.status, r.code, r.owner) == ("warn", "XID_ERROR", owner), r.summary


FABRIC = "    Fabric\n        State                             : Completed\n        Status                            : Success\n"


def test_a_fabric_state_alone_is_no_health_read_handmade():
    """The corpus's other single-area excerpts (clock reasons alone) pass on what they show; the fabric state is
    registration, not health."""
    device = {"index": 0, "nvswitch": True, "fabric": {"state": "completed", "status": "success", "clique_id": None,
                                                       "cluster_uuid": None, "health": None}}
    r = judge(CHECKS["gpu"], {"torch": None, "nvml_error": "none", "devices": [device]}, Options())
    assert (r.status, r.code, r.owner) == ("warn", "HEALTH_NOT_ASSESSED", "host"), r.summary
    r = judge(CHECKS["gpu"], {"torch": None, "nvml_error": "none", "devices": [{**device, "row_remap": {
        "correctable": 0, "uncorrectable": 0, "pending": 0, "failed": 0}}]}, Options())
    assert r.status == "pass", r.summary
    explained = ex.explain_text("$ nvidia-smi -q -i 0 | grep -i -A 2 Fabric\n" + FABRIC, "fabric.txt", Options())
    assert (explained.name, explained.status, explained.code) == ("gpu", "warn", "HEALTH_NOT_ASSESSED")


EFA_P2P = ("        [1,10]<stderr>:libfabric:22:1725400706::efa:domain:efa_domain_hmem_info_init_cuda():169<warn> Failed "
           "to register CUDA buffer with the EFA device, FI_HMEM transfers that require peer to peer support will fail.")
SOCKET = "        [1,8]<stdout>:worker-1:20:67 [0] NCCL INFO Channel 00/0 : 8[0] -> 0[0] [send] via NET/Socket/0"


MISSING = "worker-1:20:67 [0] NCCL INFO NET/Plugin : Plugin load (libnccl-net.so) returned 2 : libnccl-net.so: " \
          "cannot open shared object file: No such file or directory"


@pytest.mark.parametrize("lines, owner, said", [
    ([SOCKET, EFA_P2P], "host", "cannot reach GPU memory"),
    ([SOCKET, MISSING, EFA_P2P], "host", "cannot reach GPU memory"),     # the device's path comes before the plugin
    ([SOCKET, MISSING, "worker-1:20:67 [0] NCCL INFO NET/OFI Selected Provider is efa (found 4 nics)"], "image",
     "no aws-ofi-nccl"),
], ids=["efa-cannot-reach-gpu-memory", "and-no-plugin", "no-plugin-alone"])
def test_an_efa_device_that_cannot_reach_gpu_memory_makes_a_socket_fallback_the_host_s_handmade(lines, owner, said):
    r = ex.explain_text("\n".join(lines) + "\n", "nccl.log", Options())
    assert (r.name, r.status, r.code, r.owner) == ("nccl", "fail", "NCCL_NET_FALLBACK", owner), r.summary
    assert said in r.summary


def test_open_mpi_s_tag_is_read_under_an_indent_and_an_indent_alone_is_kept():
    from verify.explain import launchers
    assert launchers.prefixes(SOCKET).startswith("worker-1:20:67 [0] NCCL INFO")
    assert launchers.prefixes("        State                 : Completed") == "        State                 : Completed"


@pytest.mark.parametrize("text, action", [
    ("    GPU Recovery Action                   : Reset\n    GPU UUID : GPU-1\n", "reset"),
    ("    GPU Recovery Action                   : Drain and Reset\n    GPU UUID : GPU-1\n", "drain_and_reset"),
    ("    GPU Recovery Action                   : None\n    GPU UUID : GPU-1\n", "none"),
    ("    GPU Reset Status\n        Reset Required : Yes\n        Drain and Reset Recommended : No\n", "reset"),
    ("    GPU Reset Status\n        Reset Required : No\n        Drain and Reset Recommended : No\n", "none"),
    ("    GPU Reset Status\n        Reset Required : Requested functionality has been deprecated\n"
     "    GPU Recovery Action : Reset\n", "reset"),
])
def test_nvidia_smi_q_s_recovery_action_is_read_in_both_wordings(text, action):
    from verify.explain import smi
    assert smi.detect(text) and smi.parse(text)["devices"][0]["recovery_action"] == action


def test_a_daemon_s_proc_limits_memlock_is_read_handmade():
    from verify.explain import ulimit
    text = "cat /proc/3844/limits | grep locked\nMax locked memory         65536                65536                bytes\n"
    assert ulimit.parse(text) == {"memlock": 65536}
    assert ulimit.parse(text.replace("65536                65536", "unlimited            unlimited")) == \
        {"memlock": "unlimited"}


K40 = """Check failed: error == cudaSuccess (46 vs. 0)  all CUDA-capable devices are busy or unavailable
+-----------------------------------------------------------------------------+
| NVIDIA-SMI 375.26                 Driver Version: 375.26                    |
|-------------------------------+----------------------+----------------------+
| GPU  Name        Persistence-M| Bus-Id        Disp.A | Volatile Uncorr. ECC |
| Fan  Temp  Perf  Pwr:Usage/Cap|         Memory-Usage | GPU-Util  Compute M. |
|===============================+======================+======================|
|   0  Tesla K40m          On   | 0000:04:00.0     Off |                    0 |
| N/A   35C    P0    63W / 235W |     74MiB / 11439MiB |      0%   E. Process |
+-------------------------------+----------------------+----------------------+
"""


# Default: no exclusive mode holds it, so a sharing configuration (MPS) does: the job's (tests/test_judges_fix52.py)
@pytest.mark.parametrize("mode, owner", [("E. Process", "job"), ("Prohibited", "host"), ("Default", "job")])
def test_cuda_busy_or_unavailable_is_read_with_the_gpus_compute_mode_handmade(mode, owner):
    r = ex.explain_text(K40.replace("E. Process", mode.ljust(10)), "k40.txt", Options())
    assert (r.name, r.status, r.code, r.owner) == ("gpu", "fail", "GPU_NOT_VISIBLE", owner), r.summary
    if mode != "Default":
        assert ("exclusive compute mode" if owner == "job" else "Prohibited") in r.summary


@pytest.mark.parametrize("word, mode", [("Exclusive_Process", "exclusive_process"), ("Default", "default"),
                                        ("Prohibited", "prohibited"), ("N/A", None)])
def test_nvidia_smi_q_s_compute_mode_is_read(word, mode):
    from verify.explain import smi
    text = f"GPU 00000000:04:00.0\n    Product Name : Tesla K40m\n    Compute Mode : {word}\n"
    assert smi.parse(text)["devices"][0].get("compute_mode") == mode


@pytest.mark.parametrize("gpu, ranks, expected", [("NVIDIA H800", 8, True), ("NVIDIA H100 80GB HBM3", 8, True),
                                                  ("NVIDIA H800 PCIe", 8, False), ("NVIDIA H200 NVL", 8, False),
                                                  ("NVIDIA H800", 4, False), ("NVIDIA A100-SXM4-80GB", 8, False)])
def test_eight_gpus_of_an_hgx_only_model_are_behind_nvswitches_handmade(gpu, ranks, expected):
    from verify.checks.nccl import bandwidth
    facts: Any = {"nvswitch": None, "nodes": 1, "world_size": ranks, "device_name": gpu, "nccl_version": "2.21.5"}
    assert bandwidth.nvls_expected(facts) is expected
    said: Any = {**facts, "nvswitch": False}
    assert bandwidth.nvls_expected(said) is False      # a record that says no switch wins


FAILED_AT = "h:1:2 [0] NCCL INFO comm 0x1 rank 0 nRanks 2 nNodes 2 localRanks 1 localRank 0 MNNVL 0\n"


@pytest.mark.parametrize("line, owner, said", [
    ("h:1:3 [1] transport/net_socket.cc:488 NCCL WARN NET/Socket : peer 10.0.5.194<41988> message truncated : "
     "receiving 4 bytes instead of 2. If you believe your socket network is in healthy state, there may be a mismatch",
     "job", "the job's"),
    ("h:1:3 [1] transport/net_ib.cc:1400 NCCL WARN NET/IB : Message truncated : received 8192 bytes instead of 4096",
     "job", "the job's"),
    ("h:1:3 [0] ib_plugin.c:1007 NCCL WARN NET/IB : Got completion from peer 10.1.32.3<42519> with error 5, opcode 0, "
     "len 0, vendor err 249", "host", "flushed"),
    ("h:1:3 [0] transport/net_ib.cc:100 NCCL WARN NET/IB : mlx5_1:1 Got async event : local catastrophic error",
     "host", "adapter reported an error"),
], ids=["socket-truncated", "ib-truncated", "flushed-only", "async-event-named-device"])
def test_what_nccl_s_transport_warnings_say_is_owned_by_their_cause_handmade(line, owner, said):
    text = FAILED_AT + line + "\nh:1:2 [0] NCCL INFO transport/net.cc:1117 -> 6\n" \
        "RuntimeError: NCCL error in: ProcessGroupNCCL.cpp:1970, remote process exited or there was a network error\n"
    r = ex.explain_text(text, "nccl.log", Options())
    assert (r.name, r.status, r.code, r.owner) == ("nccl", "fail", "NCCL_FAILED", owner), r.summary
    assert said in r.summary


def test_an_nccl_tests_table_without_device_lines_takes_its_world_from_the_launch_line():
    from verify.explain import nccltests
    head = "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong\n"
    row = "    33554432       8388608     float     sum      -1    812.3   41.31   41.31      0    808.2   41.52   41.52      0\n"
    launched = "$ mpirun --allow-run-as-root -x NCCL_DEBUG=INFO -np 2 ./all_reduce_perf -b 2M -e 16G -f 2 -g 1\n"
    facts = nccltests.parse(launched + head + row)
    assert facts["world_size"] == 2 and facts["sizes"] and facts["nodes"] is None
    assert nccltests.parse(launched.replace("-g 1", "-g 4") + head + row)["world_size"] == 8
    bare = nccltests.parse("$ ./build/all_reduce_perf -b 32M -e 32M\n" + head + row)
    assert bare["sizes"] is None and "its ranks not shown" in bare["mode"]       # no figure judged on no world size


XML = """<?xml version="1.0" ?>
<!DOCTYPE nvidia_smi_log SYSTEM "nvsmi_device_v11.dtd">
<nvidia_smi_log>
    <driver_version>515.105.01</driver_version>
    <cuda_version>11.7</cuda_version>
    <gpu id="00000000:00:1E.0">
        <product_name>Tesla T4</product_name>
        <uuid>GPU-d37e67a5-91dd-3774-a5cb-99096249601a</uuid>
        <compute_mode>Default</compute_mode>
        <pci>
            <pci_gpu_link_info>
                <pcie_gen><max_link_gen>3</max_link_gen><current_link_gen>3</current_link_gen></pcie_gen>
                <link_widths><max_link_width>16x</max_link_width><current_link_width>16x</current_link_width></link_widths>
            </pci_gpu_link_info>
        </pci>
        <clocks_event_reasons>
            <clocks_event_reason_gpu_idle>Active</clocks_event_reason_gpu_idle>
            <clocks_event_reason_hw_slowdown>Not Active</clocks_event_reason_hw_slowdown>
        </clocks_event_reasons>
        <ecc_errors><volatile><dram_uncorrectable>2</dram_uncorrectable></volatile></ecc_errors>
        <temperature><gpu_temp>35 C</gpu_temp></temperature>
    </gpu>
</nvidia_smi_log>
"""


def test_nvidia_smi_q_x_is_read_by_the_q_reader_s_paths():
    from verify.explain import smixml
    facts = smixml.parse(XML)
    dev = facts["devices"][0]
    assert facts["driver"] == "515.105.01" and dev["name"] == "Tesla T4" and dev["pci_bus_id"] == "00000000:00:1E.0"
    assert (dev["pcie_gen"], dev["pcie_width"], dev["pcie_width_max"], dev["compute_mode"]) == (3, 16, 16, "default")
    assert (dev["throttle_reasons"], dev["throttle_reasons_read"], dev["ecc_volatile_uncorrectable"]) == (0x1, 0x9, 2)
    r = ex.explain_text(XML, "q.xml", Options())
    assert (r.name, r.status, r.code, r.owner) == ("gpu", "fail", "ECC_UNCORRECTABLE", "host")
    cut = smixml.parse(XML[:XML.index("<ecc_errors>")])              # a paste cut mid-document
    assert cut["devices"][0]["pcie_width"] == 16 and "ecc_volatile_uncorrectable" not in cut["devices"][0]
    bomb = '<!DOCTYPE nvidia_smi_log [<!ENTITY a "aaaaaaaaaa">]><nvidia_smi_log>&a;</nvidia_smi_log>'
    assert smixml.parse(bomb)["devices"] is None


def test_a_handle_error_without_the_space_names_its_gpu_lost():
    from verify.explain import nvml
    facts = nvml.parse("Unable to determine the device handle for GPU0000:4F:00.0: Unknown Error\n")
    dev = facts["devices"][0]
    assert dev["lost"] is True and dev["nvml_errors"] == {"handle": "Unknown Error"} and "4F:00" in dev["pci_bus_id"]


def test_a_report_pasted_twice_judges_each_gpu_once_by_its_last_reading():
    first = XML.replace("<dram_uncorrectable>2</dram_uncorrectable>", "<dram_uncorrectable>0</dram_uncorrectable>")
    r = ex.explain_text(first + XML, "twice.xml", Options())          # two documents: the later shows the error
    assert (r.status, r.code) == ("fail", "ECC_UNCORRECTABLE") and any("more than once" in d for d in r.details)
    facts = {"devices": [{"index": 0, "pci_bus_id": "0000:06:00.0", "temperature_c": 40.0},
                         {"index": 0, "pci_bus_id": "00000000:06:00.0", "uuid": "GPU-1", "temperature_c": None}]}
    assert ex.once(facts) == ["GPU at 06:00.0"]
    assert facts["devices"] == [{"index": 0, "pci_bus_id": "00000000:06:00.0", "uuid": "GPU-1", "temperature_c": 40.0}]


def test_a_port_down_beside_an_active_port_of_unknown_link_layer_warns_handmade():
    from verify.checks.fabric import check as fabric
    down = {"port": 1, "state": "DOWN", "phys_state": None, "rate_gbps": None, "link_layer": "InfiniBand"}
    up = {"port": 1, "state": "ACTIVE", "phys_state": None, "rate_gbps": None, "link_layer": None}
    facts: Any = {"adapters": [{"name": "mlx5_0", "ports": [down]}, {"name": "mlx5_7", "ports": [up]}]}
    r = fabric.judge(facts, Options())
    assert (r.status, r.code, r.owner) == ("warn", "FABRIC_PORT_DOWN", "host"), r.summary
    facts["adapters"][1]["ports"][0]["link_layer"] = "Ethernet"      # the only InfiniBand port is down
    assert fabric.judge(facts, Options()).status == "fail"


@pytest.mark.parametrize("line, memlock", [("LimitMEMLOCK=18446744073709551615", "unlimited"),
                                           ("LimitMEMLOCK=infinity", "unlimited"), ("LimitMEMLOCK=65536", 65536)])
def test_systemd_s_memlock_limit_is_read(line, memlock):
    from verify.explain import ulimit
    assert ulimit.parse(f"LimitNOFILE=4096\n{line}\nLimitNPROC=257223\n") == {"memlock": memlock}


def test_nccl_s_shm_segment_it_could_not_size_is_dev_shm_full_handmade():
    text = ("include/shm.h:28 NCCL WARN Call to posix_fallocate failed: No space left on device\n"
            "include/shm.h:48 NCCL WARN Error while creating shared memory segment nccl-shm-recv-2-0-1-3 (size 9637888)\n")
    r = ex.explain_text(text, "nccl.log", Options())
    assert (r.name, r.status, r.code, r.owner) == ("nccl", "fail", "SHM_TOO_SMALL", "job"), r.summary


def test_a_bind_to_an_address_not_this_host_s_is_the_job_s_handmade():
    from verify.checks import CHECKS
    facts = {"backend": "nccl", "error": "Call to bind failed : Cannot assign requested address",
             "nccl_env": {"NCCL_COMM_ID": "192.168.0.91:27030"}}
    r = judge(CHECKS["nccl"], facts, Options())
    assert (r.status, r.code, r.owner) == ("fail", "NCCL_FAILED", "job") and "not this host's" in r.summary


def test_nvidia_smi_q_s_ecc_mode_is_read():
    from verify.explain import smi
    text = "GPU 00000000:18:00.0\n    Product Name : NVIDIA H800\n    ECC Mode\n        Current : Disabled\n" \
           "        Pending : Enabled\n"
    assert smi.parse(text)["devices"][0]["ecc"] == [False, True]
