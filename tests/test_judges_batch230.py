"""Batches 230 to 234 (issue 35): the lead's review.

- NCCL's RAS reports (`ncclras`: text, JSON, monitor events) were not recognised by `verify explain`, and their
  translations (a process `considered dead`, `PEER_DEAD`) failed the host by the default of an unnamed NCCL error: a
  false drain. RAS names processes lost or behind from the others' view, no cause: now the job's
  (verify/checks/nccl/rasreport.py), read by verify/explain/ncclras.py.
- NCCL 2.30's symmetric-memory window space running out (`ncclSpaceAlloc ... No suitable space found to accommodate
  size=... within limit=...`) failed the host the same way; it is NCCL's own address bookkeeping: the image's.
- Batch 234: GCP's config-checker shim refusing the job's NCCL_MIN_NCHANNELS (`NCCL/NET (shim) mismatch enforced:
  NCCL_MIN_NCHANNELS=8 (expected 4)`) failed the host; it is the job's setting against the node's policy
  (verify/checks/nccl/settings.py). `verify explain` did not read it as a failure at all: the shim's own failing
  returns carry its tag and a build path with a `-`, and the env plugin's closing line followed them.
- Batch 232: a `<temperature>` block of `nvidia-smi -q -x` pasted alone was not recognised; it is read as a fragment
  where its first child is the dtd's `<gpu_temp>`.
"""
from __future__ import annotations

import json

import pytest

from tests.judging import RAS_DEAD as DEAD
from tests.judging import contract, explained, nccl_verdict, verdict
from verify import explain as ex
from verify.explain import ncclras, smixml

pytestmark = pytest.mark.unit

# ncclras -v, NCCL 2.30.7's example (docs/examples/08_ras/01_fault_detection), trimmed to its last report
HEALTHY = """NCCL version 2.30.7 compiled with CUDA 12.8

Communicators... (0.002s)
=============

Group     Comms      Nodes     Ranks     Ranks     Ranks   Status  Errors
    #  in group   per comm  per node  per comm  in group
    0         1          2         4         8         8  RUNNING      OK

Errors
======


Warnings
========

TIMEOUT
  Encountered 2 communication timeouts while gathering communicator data

"""
JSON = {"nccl_version": "2.29.1", "communicators": [{
    "size": 2, "ranks": [{"rank": 0, "host": "172.16.64.245", "pid": 1524344, "cuda_dev": 0,
                          "status": {"init_state": 0, "async_error": 0}}],
    "missing_ranks": [{"rank": 1, "host": "172.16.64.245", "pid": 1524345, "cuda_dev": 1,
                       "status": {"unresponsive": True, "considered_dead": False}}]}]}
MONITOR = " [2025-12-19 13:07:07] PEER_DEAD: Process 1524345 on node 172.16.64.245 managing GPU 1\n"
KIND = next(k for k in ex.KINDS if k.parse is ncclras.parse)


def test_a_dead_process_in_ras_text_report_is_the_jobs():
    facts = ncclras.parse(DEAD)
    assert (facts["world_size"], facts["nodes"], facts["nccl_version"]) == (8, 2, "2.30.7")
    # RAS names no operation: the error's phase names none either (opname.py), never an all-reduce assumed
    assert "considered dead" in facts["error"] and facts["error"].startswith("collective: ")
    assert contract(KIND, facts) == []
    assert verdict(explained(DEAD)) == ("fail", "NCCL_FAILED", "job")


def test_ras_json_and_its_monitor_event_are_the_jobs():
    text = json.dumps(JSON, indent=2) + "\nRAS Monitor Mode - watching for peer changes (Ctrl+C to exit)...\n" + MONITOR
    facts = ncclras.parse(text)
    assert (facts["world_size"], facts["nodes"], facts["nccl_version"]) == (2, 1, "2.29.1")
    assert "unresponsive" in facts["error"] and "PEER_DEAD" in facts["error"]
    assert verdict(explained(text)) == ("fail", "NCCL_FAILED", "job")
    assert verdict(explained(MONITOR)) == ("fail", "NCCL_FAILED", "job")


def test_a_rank_error_in_ras_json_is_read_in_ras_words():
    report = {"nccl_version": "2.27.3", "communicators": [{"size": 2, "ranks": [
        {"rank": 0, "host": "a", "pid": 1, "status": {"init_state": 0, "async_error": 6}},
        {"rank": 1, "host": "b", "pid": 2, "status": {"init_state": 0, "async_error": 0}}]}]}
    facts = ncclras.parse(json.dumps(report))
    assert facts["nodes"] == 2 and "Rank 0 reported Remote process error" in facts["error"]
    assert verdict(explained(json.dumps(report))) == ("fail", "NCCL_FAILED", "job")


def test_every_communicator_running_is_no_error_and_no_pass():
    facts = ncclras.parse(HEALTHY)
    assert facts["error"] is None           # RAS's own TIMEOUT warning is its collection's trouble
    assert explained(HEALTHY).status != "pass"


def test_a_cause_of_a_nodes_own_beside_ras_decides():
    error = "all_reduce: DEAD 1 job process is considered dead | NCCL WARN NET/IB : Got completion from peer 10.0.0.2 with status=12"
    assert nccl_verdict(error=error, world_size=8) != ("fail", "NCCL_FAILED", "job")


def test_ras_words_in_a_hang_are_the_jobs_timeout():
    error = ("all_reduce: Watchdog caught collective operation timeout | MISMATCH Communicator ranks have different "
             "AllReduce operation counts 7 ranks have launched up to operation 12 Rank 3 has not launched any operations")
    assert nccl_verdict(error=error, world_size=8)[1:] == ("NCCL_TIMEOUT", "job")


def test_symmetric_window_space_exhausted_is_the_images():
    error = ("all_reduce: [0] nccl/src/allocator.cc:229 (ncclSpaceAlloc) NCCL WARN Allocation failed. No suitable space "
             "found to accommodate size=0x2171600000 within limit=0x2d00000000")
    assert nccl_verdict(error=error) == ("fail", "NCCL_FAILED", "image")


@pytest.mark.parametrize("text", [
    '{"nccl_version": ' + "[" * 100_000 + '"communicators"',
    '{"nccl_version": "2.29.1", "communicators": 5}\n',
    '{"nccl_version": "2.29.1", "communicators": [{"size": "8", "ranks": "x", "missing_ranks": [1, {"status": 3}]}]}\n',
    '{"nccl_version": "x", "communicators": [],\n' * 3_000,
    "Errors\n======\n" + "  indented before any header\n" * 3,
])
def test_hostile_ras_input_is_read_without_a_traceback(text):
    facts = ncclras.parse(text)
    assert facts["backend"] == "nccl"
    explained(text)


SHIM = """tcpxo-wb-0:890:890 [0] NCCL INFO NCCL version 2.28.7+cuda13.2
tcpxo-wb-0:890:890 [0] NCCL INFO NET/Plugin: Loaded net plugin config_checker_shim (v7)
tcpxo-wb-0:890:890 [0] NCCL INFO NCCL/NET (shim) activated shim layers, 'Guest Config Checker'

[2026-08-02 13:25:57] tcpxo-wb-0:890:890 [0] /build/nccl-shim/src/guest_config_checker.cc:101 NCCL WARN NCCL/NET (shim) mismatch enforced: NCCL_MIN_NCHANNELS=8 (expected 4)
tcpxo-wb-0:890:890 [0] NCCL INFO NCCL/NET (shim) /build/nccl-shim/src/guest_config_checker.cc:132 -> 4
tcpxo-wb-0:890:890 [0] NCCL INFO NCCL/NET (shim) /build/nccl-shim/src/guest_config_checker.cc:168 -> 4
tcpxo-wb-0:890:890 [0] NCCL INFO ENV/Plugin: Closing env plugin ncclEnvDefault
"""


def test_a_setting_the_nodes_policy_refuses_is_the_jobs_on_both_roads():
    assert nccl_verdict(error="init: NCCL/NET (shim) mismatch enforced: NCCL_MIN_NCHANNELS=8 (expected 4)") == (
        "fail", "NCCL_FAILED", "job")
    r = explained(SHIM)
    assert verdict(r) == ("fail", "NCCL_FAILED", "job"), r.summary
    assert "NCCL_MIN_NCHANNELS" in r.remedy


def test_the_shim_warn_followed_by_ncclS_going_on_is_no_failure():
    going_on = SHIM.replace("ENV/Plugin: Closing env plugin ncclEnvDefault", "NET/Plugin: Using internal network plugin.")
    going_on += "tcpxo-wb-0:890:890 [0] NCCL INFO Using network Socket\n"
    assert explained(going_on).status != "fail"


TEMPERATURE = """<temperature>
    <gpu_temp>37 C</gpu_temp>
    <gpu_temp_tlimit>56 C</gpu_temp_tlimit>
    <memory_temp>N/A</memory_temp>
</temperature>
"""


def test_an_nvidia_smi_temperature_block_alone_is_read():
    assert smixml.detect(TEMPERATURE)
    devices = smixml.parse(TEMPERATURE)["devices"]
    assert devices and devices[0]["temperature_c"] == 37.0
    assert not smixml.detect("<temperature>\n  <value>37</value>\n</temperature>\n")   # another tool's XML


def test_a_running_jobs_ranks_one_operation_apart_are_no_failure():
    # ras-4-nodes-32-ranks-nccl-2.26.2-running-mismatch-allgather-640-vs-641-two-ranks-ahead-no-error-snapshot
    text = HEALTHY.replace("RUNNING      OK", "RUNNING  MISMATCH") + (
        "#0-0 (fa93daea854b060b) MISMATCH\n  Communicator ranks have different AllGather operation counts\n"
        "  30 ranks have launched up to operation 640\n  2 ranks have launched up to operation 641\n"
        "  Rank 12 -- GPU 4 managed by process 323032 on node 10.137.190.124\n")
    assert ncclras.parse(text)["error"] is None
    assert explained(text).status != "fail"


@pytest.mark.parametrize("said, owner", [
    ("2 ranks reported Unhandled CUDA error Rank 3 -- GPU 3 managed by process 41 on node n2", "job"),
    ("Rank 5 reported Invalid usage -- GPU 5 managed by process 44 on node n2", "job"),
])
def test_ras_rank_errors_by_class_alone_are_the_jobs(said, owner):
    error = f"all_reduce: #0-0 (1bdb83b038775869) ERROR Asynchronous errors on 2 ranks {said}"
    assert nccl_verdict(error=error, world_size=8) == ("fail", "NCCL_FAILED", owner)


def test_the_toolkit_hook_under_its_real_binary_name_is_read():
    # gtx-1660-ti-gpu-operator-1.4.0-driver-ctr-460.32.03-installed-cuda-vector-add-hook-nvidia-container-cli-...
    text = ('Error: failed to start container "cuda-vector-add": Error response from daemon: OCI runtime create failed: '
            "container_linux.go:370: starting container process caused: process_linux.go:459: container init caused: "
            "Running hook #0:: error running hook: exit status 1, stdout: , stderr: nvidia-container-cli.real: "
            "initialization error: driver error: failed to process request: unknown\n")
    assert verdict(explained(text)) == ("fail", "DRIVER_ERROR", "host")


@pytest.mark.parametrize("launch, limit", [
    ("docker run \\\n-e DMLC_ROLE=scheduler \\\n--cap-add IPC_LOCK \\\n--ulimit memlock=-1 \\\n-it --rm byteps/pytorch bpslaunch\n",
     "unlimited"),
    ("$ sudo docker run --gpus all --ulimit memlock=-1:-1 --ulimit stack=67108864 nvcr.io/nvidia/pytorch:24.05-py3\n",
     "unlimited"),
    ("podman run --ulimit memlock=65536:65536 img ./train\n", 65536),
    ("# in the docs: pass --ulimit memlock=-1 to docker\n", None),            # no engine's run: prose
])
def test_a_container_engines_run_sets_the_memlock_its_processes_run_under(launch, limit):
    from verify.explain import setlimit
    assert setlimit.memlock(launch) == limit


def test_unlimited_memlock_set_by_docker_run_is_not_the_registration_failures_cause():
    # byteps-four-hosts-docker-ulimit-memlock-unlimited-ipc-lock-ps-lite-ibv-reg-mr-enomem-rx-depth-job
    text = ("Check failed: mr ibv_reg_mr failed: Cannot allocate memory\ndocker run \\\n-e DMLC_ENABLE_RDMA=ibverbs \\\n"
            "--device /dev/infiniband/uverbs0 \\\n--cap-add IPC_LOCK \\\n--ulimit memlock=-1 \\\n"
            "-it --rm --net=host byteps/pytorch:latest \\\nbpslaunch\n")
    assert verdict(explained(text)) != ("fail", "FABRIC_MEMLOCK_LOW", "host")


STRAY = ("[0] misc/socket.cc:484 NCCL WARN socketFinalizeAccept: wrong magic 74656d2f20544547 != 7970663b906d70b9")


def test_an_http_request_on_ncclS_listen_socket_is_the_images_nccl():
    # nccl-ibext-v10-gdrdma-worker-9-stray-http-get-on-proxy-listen-port-wrong-magic-proxy-service-hangs-...
    from verify.checks.nccl.straypeer import stray_text
    assert stray_text(STRAY) == "GET /met"
    assert nccl_verdict(error=f"collective: hang: after '{STRAY}'", world_size=96) == ("fail", "NCCL_TIMEOUT", "image")
    assert verdict(explained(f"worker-9 >> :166:1226 {STRAY}\n"))[2] == "image"


@pytest.mark.parametrize("error", [
    "init: socketFinalizeAccept: wrong magic 8a7b6c5d4e3f2a1b != 7970663b906d70b9",       # no text: another rank's
    f"collective: {STRAY} | NET/IB : Got completion from peer 10.0.0.2 with status=12",  # the node's own cause
])
def test_other_wrong_magics_are_not_a_stray_programs(error):
    assert nccl_verdict(error=error, world_size=8)[2] != "image"


def test_the_readers_benchmark_prints_each_reader_at_n_and_4n(capsys):
    from verify.explain import bench
    assert bench.main(20) == 0
    rows = capsys.readouterr().out.splitlines()
    assert len(rows) == 1 + len(bench.CASES) and all(r.split()[-1].replace(".", "").isdigit() or r.endswith("inf")
                                                     for r in rows[1:])


def test_round_three_readers():
    # perlmutter-gpu-shifter-...-oom-kill-...: Slurm 23's `oom_kill event in StepId` (no `(s)`)
    oom = ("qdo-srun.py: srun#64: slurmstepd: error: Detected 1 oom_kill event in StepId=43622791.67. Some of the step "
           "tasks have been OOM Killed.\n")
    assert verdict(explained(oom)) == ("fail", "TRAIN_FAILED", "job")
    # pai-megatron-qwen3-...-killed-by-signal-killed-...: a worker SIGKILLed, no /dev/shm words
    killed = "[rank0]: RuntimeError: DataLoader worker (pid 9382) is killed by signal: Killed. \n"
    assert verdict(explained(killed)) == ("fail", "LOADER_FAILED", "job")
    # gpud-accelerator-nvidia-error-xid-state-unhealthy-xid48-...: GPUd's component state names `GPU PCI:`
    gpud = ('"reason":"XID 48 (Double Bit ECC Error) detected on GPU PCI:0000:6b:00 UUID:GPU-c44c6e5f-72cf-8200-97c2-'
            'f9b9ebcf2dbb",\n')
    assert verdict(explained(gpud)) == ("fail", "ECC_UNCORRECTABLE", "host")
    # dmlcloud-...-nvml-device-handle-nvmlerror-unknown-...: pynvml's handle call answered Unknown Error
    lost = ('  File "/x/torch/cuda/__init__.py", line 1073, in _get_pynvml_handler\n'
            "    handle = pynvml.nvmlDeviceGetHandleByIndex(device)\n"
            '  File "/x/pynvml.py", line 1042, in _nvmlCheckReturn\n    raise NVMLError(ret)\n'
            "pynvml.NVMLError_Unknown: Unknown Error\n")
    assert verdict(explained(lost)) == ("fail", "GPU_LOST", "host")
    # the same error from a call that is no handle's (a field query) names no lost GPU
    assert verdict(explained(lost.replace("nvmlDeviceGetHandleByIndex", "nvmlDeviceGetPowerUsage"))) != (
        "fail", "GPU_LOST", "host")


DKMS = ("Building module:\ncleaning build area...\nunset ARCH; env NV_VERBOSE=1 'make' -j16 NV_EXCLUDE_BUILD_MODULES='' "
        "KERNEL_UNAME=5.13.18-21.09.16.amdgpu.ubuntu modules.....(bad exit status: 2)\n"
        "Error! Bad return status for module build on kernel: 5.13.18-21.09.16.amdgpu.ubuntu (x86_64)\n")


def test_dkms_failing_to_build_the_nvidia_module_is_the_hosts_driver_install():
    # ubuntu-custom-amdgpu-kernel-5.13.18-dkms-nvidia-470.86-bad-exit-status-2-nvidia-smi-couldnt-communicate-...
    smi = ("NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. Make sure that the latest "
           "NVIDIA driver is installed and running.\n\n")
    assert verdict(explained(smi + DKMS)) == ("fail", "DRIVER_ERROR", "host")
    # another package's module (no NVIDIA make line) is not the NVIDIA driver's
    other = DKMS.replace("NV_EXCLUDE_BUILD_MODULES='' ", "").replace("NV_VERBOSE=1 ", "")
    assert verdict(explained(smi + other)) != ("fail", "DRIVER_ERROR", "host")


def test_a_failed_build_for_another_kernel_beside_gpus_that_answer_warns():
    from verify.checks import CHECKS
    from verify.judging import judge
    from verify.options import Options
    event = {"status": "module_build_failed", "code": None, "source": "kernel_log", "time": None,
             "text": "Error! Bad return status for module build on kernel: 6.8.0-51-generic (x86_64)"}
    answering = [{"index": 0, "uuid": "GPU-1", "lost": False, "temperature_c": 40.0}]
    r = judge(CHECKS["gpu"], {"torch": None, "devices": answering, "driver_errors": [event]}, Options())
    assert (r.status, r.code, r.owner) != ("fail", "DRIVER_ERROR", "host")
    assert any("6.8.0-51-generic" in d for d in [r.summary, *r.details]), r.summary
    r = judge(CHECKS["gpu"], {"torch": None, "driver_errors": [event]}, Options())
    assert verdict(r) == ("fail", "DRIVER_ERROR", "host")


def test_a_python_extension_modules_undefined_symbol_is_the_images_package_set():
    # m1-docker-debian-anaconda-aarch64-h5py-3.3.0-defs-so-undefined-symbol-h5sencode-pip-source-build-...
    from verify.checks.train.imagefault import image_fault
    message = ("/opt/conda/lib/python3.8/site-packages/h5py/defs.cpython-38-aarch64-linux-gnu.so: undefined symbol: "
               "H5Sencode")
    assert (image_fault({"type": "ImportError", "message": message}) or "").startswith("defs.cpython-38")
    assert verdict(explained(f"ImportError: {message}\n")) == ("fail", "TRAIN_FAILED", "image")
    assert image_fault({"type": "ImportError", "message": "No module named 'h5py.defs'"}) is None


def test_bad_input_against_the_new_readers_invents_nothing():
    """The review's bad inputs: a DKMS line cut before its kernel is no record (and no kernel log to pass), and RAS
    JSON whose ranks RAS could not have written (rank -1, none) names no lost process."""
    cut = "Error! Bad return status for module build on kernel: \nNV_EXCLUDE_BUILD_MODULES\n"
    assert explained(cut).status != "pass"
    forged = ('{"nccl_version": "2.29.1", "communicators": [{"size": 8, "ranks": [{"rank": true, "status": '
              '{"async_error": 6}}], "missing_ranks": [{"rank": -1, "status": {"considered_dead": true}}, '
              '{"status": {"unresponsive": true}}]}]}\n')
    assert ncclras.parse(forged)["error"] is None and explained(forged).status != "fail"
