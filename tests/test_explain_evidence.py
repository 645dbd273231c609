"""Issue 35, second batch: the classes behind the translator's mismatches, each on real public wording (URLs in the
comments) and each new host-owned verdict beside a real excerpt where the host is healthy (no false drain).
- a tool's "not known" (N/A, [N/A], Not Supported, Unknown) is null in every parser, and a fact verify's own parser
  made that its judge refuses is nobody's fault but verify's (no owner);
- evidence only adds: a memlock fault stays a fault beside more evidence; UCX's and libibverbs' own memlock messages;
- a CUDA error by its name or string in any program's wording, by its number where the line is CUDA's;
- NCCL: connections via NET/Socket with no `Using network` line; an IPoIB interface proves InfiniBand for the log's
  own cause, never for the host; a WARN of a failing socket call is the failure; lines under stacked launcher
  prefixes, and a CUDA refusal such a log quotes."""
from __future__ import annotations

import pytest

from tests.judging import verdict
from verify import explain as ex
from verify.checks import fabric, nccl
from verify.checks.nccl import ncclog
from verify.checks.nccl.transport import IPOIB
from verify.explain import ib, smi, ulimit
from verify.options import Options
from verify.shared import cuda_errors

pytestmark = pytest.mark.unit


def explained(text: str):
    return verdict(ex.explain_text(text, "excerpt.txt", Options()))


# ------------------------------------------------------------------------------------------ not known is null
@pytest.mark.parametrize("word", ["N/A", "[N/A]", "Not Supported", "[Not Supported]", "Unknown", "n/a"])
def test_a_not_known_word_is_null_in_nvidia_smi_q(word):
    text = (f"Driver Version : {word}\nGPU 00000000:18:00.0\n    Product Name : {word}\n    Retired Pages\n"
            f"        Pending Page Blacklist : {word}\n    Remapped Rows\n        Pending : {word}\n"
            f"        Remapping Failure Occurred : {word}\n    Fabric\n        State : In Progress\n"
            f"        Status : {word}\n        CliqueId : {word}\n        ClusterUUID : {word}\n        Health\n"
            f"            Summary : {word}\n            Bandwidth : {word}\n            Incorrect Configuration : {word}\n")
    facts = smi.parse(text)
    dev = facts["devices"][0]
    assert facts["driver"] is None and "name" not in dev and "retired_pages_pending" not in dev and "row_remap" not in dev
    assert dev["fabric"] == {"state": "in_progress", "clique_id": None, "status": None, "cluster_uuid": None,
                             "health": None}
    # a GPU that has a fabric state sits behind NVSwitches; stuck registering it is the host's
    assert dev["nvswitch"] is True and explained(text) == ("fail", "NVLINK_DOWN", "host")


def test_the_fabric_state_n_a_keeps_facts_md_word_and_is_no_fabric_fault():
    """FACTS.md: `not_supported` is nvidia-smi's `N/A` State (an A100 of p4d.24xlarge, awslabs/amazon-eks-ami's
    report quoted in tests/data/real-world/p4d-a100-fabric-state-na-fabric-manager-running)."""
    text = "GPU 00000000:10:1C.0\n    Fabric\n        State : N/A\n        Status : N/A\n"
    dev = smi.parse(text)["devices"][0]
    assert dev["fabric"]["state"] == "not_supported" and "nvswitch" not in dev
    assert explained(text)[1] != "NVLINK_DOWN"


def test_a_health_word_facts_md_does_not_declare_is_null_not_invalid():
    text = "GPU 00000000:18:00.0\n    Fabric\n        State : Completed\n        Status : Success\n        Health\n" \
           "            Summary : Limited Capacity\n"
    assert smi.parse(text)["devices"][0]["fabric"]["health"] is None
    assert explained(text)[1] != "FACTS_INVALID"


def test_ibstat_not_known_is_null_but_efa_link_layer_unknown_stays():
    text = ("CA 'efa_0'\n\tCA type: N/A\n\tNumber of ports: 1\n\tPort 1:\n\t\tState: Active\n\t\tRate: N/A\n"
            "\t\tLink layer: Unknown\n")
    adapter = ib.parse(text)["adapters"][0]
    assert adapter["hca_type"] is None
    assert (adapter["ports"][0]["rate_gbps"], adapter["ports"][0]["link_layer"]) == (None, "Unknown")


def test_facts_verify_s_own_parser_made_invalid_name_no_owner(monkeypatch):
    def broken(text):
        return {"devices": [{"fabric": {"health": {"summary": "n/a"}}}]}
    monkeypatch.setattr(ex, "KINDS", (ex.Kind("nvidia-smi -q", "gpu", lambda text: True, broken),))
    r = ex.explain_text("GPU 00000000:18:00.0\n    Fabric\n        Health : N/A\n", "q.txt", Options())
    assert (r.status, r.code, r.owner) == ("fail", "FACTS_INVALID", None)
    assert "verify bug" in r.summary and "q.txt" in r.summary
    # a fault the rest of the text shows (the fabric never registered) is still judged, the bad value named
    def beside(text):
        return {"devices": [{"fabric": {"state": "in_progress", "health": {"summary": "n/a"}}}]}
    monkeypatch.setattr(ex, "KINDS", (ex.Kind("nvidia-smi -q", "gpu", lambda text: True, beside),))
    r = ex.explain_text("GPU 00000000:18:00.0\n    Fabric\n        State : In Progress\n", "q.txt", Options())
    assert (r.status, r.code, r.owner) == ("fail", "NVLINK_DOWN", "host")
    assert any("judged without 1 implausible figure" in d and "health.summary" in d for d in r.details)


# ------------------------------------------------------------------------------------------ memlock
def test_memlock_low_beside_more_evidence_still_fails():
    """Evidence only adds: 64 KiB fails alone, and beside the verbs device it was read next to."""
    alone = fabric.judge({"memlock": 65536}, Options())
    beside = fabric.judge({"memlock": 65536, "verbs_devices": ["mlx5_0"]}, Options())
    assert verdict(alone) == verdict(beside) == ("fail", "FABRIC_MEMLOCK_LOW", "host")
    assert fabric.judge({"memlock": "unlimited", "verbs_devices": ["mlx5_0"]}, Options()).status == "skip"


def test_ucx_and_libibverbs_memlock_messages():
    # openucx/ucx#8684
    ucx = ("ib_log.c:246  UCX  ERROR mlx5_0: ibv_create_cq() failed: Cannot allocate memory. Please set max locked "
           "memory (ulimit -l) to 'unlimited' (current: 64 kbytes)")
    assert ulimit.parse(ucx) == {"memlock": 65536, "verbs_devices": ["mlx5_0"], "memlock_error": ucx.strip()[:300]}
    assert explained(ucx) == ("fail", "FABRIC_MEMLOCK_LOW", "host")
    # libibverbs/init.c's warning when the limit is tiny
    verbs = "libibverbs: Warning: RLIMIT_MEMLOCK is 65536 bytes.\n    This will severely limit memory registrations."
    assert ulimit.parse(verbs) == {"memlock": 65536}
    assert explained(verbs) == ("fail", "FABRIC_MEMLOCK_LOW", "host")


def test_a_ucx_error_that_is_not_memlock_blames_no_host():
    """openucx/ucx#4742: UCX finds no transport to its peer (the job's transports), nothing about the node's limit."""
    text = ("[1581060992.288391] [daishan:9817 :0]         select.c:438  UCX  ERROR no active messages transport to "
            "<no debug data>: posix/memory - Destination is unreachable, sysv/memory - Destination is unreachable, "
            "self/memory - Destination is unreachable, sockcm/sockaddr - no am bcopy, rdmacm/sockaddr - no am bcopy, "
            "cma/memory - no am bcopy")
    assert not ulimit.detect(text) and explained(text)[2] != "host"


# ------------------------------------------------------------------------------------------ CUDA errors
@pytest.mark.parametrize("line", [
    "test: Test CUDA failure common.cu:941 'system not yet initialized'",             # NVIDIA/nccl-tests
    "  what():  Error (gpu_burn-drv.cpp:298): system not yet initialized",             # wilicc/gpu-burn
    "cuInit failed: CUDA_ERROR_SYSTEM_NOT_READY",
    "CUDA call returned cudaErrorSystemNotReady",
    "CUDA driver initialisation failed: error 802",
])
def test_cuda_802_in_any_wording_is_the_host_s(line):
    assert cuda_errors.decode(line) is not None and explained(line) == ("fail", "DRIVER_ERROR", "host")


def test_a_bare_error_number_outside_cuda_is_not_read_as_cuda():
    assert cuda_errors.named("upstream answered with error 802") is None
    assert explained("upstream answered with error 802\n")[0] == "skip"


def test_a_job_s_cuda_error_is_never_the_host_s():
    """evo-design/evo#136: a kernel's illegal access is the job's code, no refusal of the node."""
    text = ("RuntimeError: CUDA error: an illegal memory access was encountered\nCUDA kernel errors might be "
            "asynchronously reported at some other API call, so the stacktrace below might be incorrect.\n"
            "For debugging consider passing CUDA_LAUNCH_BLOCKING=1\n")
    decoded = cuda_errors.named(text)
    assert decoded is not None and (decoded.owner, decoded.refusal) == ("job", False) and explained(text)[2] != "host"


# ------------------------------------------------------------------------------------------ NCCL
def test_socket_channels_without_a_network_line_on_an_ipoib_node_fall_back():
    """NVIDIA/nccl#952: no IB device, the bootstrap over IPoIB, inter-node connections via NET/Socket."""
    text = ("NCCL INFO NET/IB : No device found\nh:925:925 [6] NCCL INFO Bootstrap : Using ibp12s0:10.149.0.32<0>\n"
            "h:926:1151 [7] NCCL INFO Channel 03/0 : 15[7] -> 6[6] [send] via NET/Socket/3\n")
    log = ncclog.parse(text)
    assert IPOIB.match(log["interface"]) and log["net_channels"]["Socket"]["connections"] == 1
    assert explained(text) == ("fail", "NCCL_NET_FALLBACK", "job")


def test_no_ib_device_on_an_ethernet_node_is_no_fault():
    """NVIDIA/nccl#226: AWS nodes without InfiniBand; NCCL finds no IB device and uses sockets, as it should."""
    text = ("ip-172-31-12-21:45361:45361 [0] NCCL INFO NET/IB : No device found.\n"
            "ip-172-31-12-210:45305:45305 [0] NCCL INFO NET/Socket : Using [0]ens3:172.31.12.210<0>\n"
            "ip-172-31-5-233:45319:45319 [0] NCCL INFO NET/IB : No device found.\n"
            "ip-172-31-5-237:45266:45266 [0] NCCL INFO NET/Socket : Using [0]ens3:172.31.5.237<0>\n"
            "ip-172-31-8-153:45343:45343 [0] NCCL INFO NET/Plugin : No plugin found (libnccl-net.so).\n"
            "c6:117277:117384 [0] NCCL INFO Ring 00 : 15 -> 0 [receive] via NET/Socket/0\n"
            "c6:117277:117384 [0] NCCL INFO Channel 00/0 : 15[0] -> 0[0] [receive] via NET/Socket/0\n")
    assert not IPOIB.match(ncclog.parse(text)["interface"])
    assert explained(text)[0] != "fail"


def test_ipoib_alone_never_blames_the_host():
    """Sockets over IPoIB with no reason in the excerpt: the excerpt may leave the reason out; no host verdict."""
    log = ncclog.parse("h:1:1 [0] NCCL INFO NET/Socket : Using [0]ib0:192.168.1.15<0>\nh:1:1 [0] NCCL INFO Using "
                       "network Socket\n")
    r = nccl.judge({"backend": "nccl", "nodes": 2, "sizes": None, "error": None, "nccl_log": log},  # type: ignore[typeddict-item]
                   Options())
    assert r.owner != "host" and r.status != "fail"


def test_a_warn_of_a_failing_socket_call_is_the_failure_and_a_benign_warn_is_not():
    """NVIDIA/nccl-tests#188: the job disabled IB and the socket handshake failed; the WARN line, without NCCL's
    host:pid:tid prefix, is the failure, owned by the cause the log shows."""
    text = ("user:852750:852802 [0] NCCL INFO NCCL_IB_DISABLE set by environment to 1.\n"
            "user:852750:852802 [0] NCCL INFO NET/Socket : Using [0]ibs85f0:192.168.1.14<0> [1]ib0:192.168.1.15<0>\n"
            "user:852750:852802 [0] NCCL INFO Using network Socket\n"
            "misc/socket.cc:441 NCCL WARN socketFinalizeAccept: wrong type 4 != 3\n")
    assert explained(text) == ("fail", "NCCL_FAILED", "job")
    benign = ("x0:26431:26431 [0] misc/ibvwrap.cc:63 NCCL WARN Failed to open libibverbs.so[.1]\n"
              "x0:26431:26431 [0] NCCL INFO NET/Socket : Using [0]eth0:10.0.0.1<0>\nx0:26431:26431 [0] NCCL INFO "
              "Using network Socket\n")
    assert ex.nccl.parse(benign)["error"] is None


def test_nccl_lines_under_two_launcher_prefixes():
    """vLLM under Ray: `(EngineCore_DP0 pid=..) (RayWorkerWrapper pid=.., ip=..)` before NCCL's own prefix."""
    pre = "(EngineCore_DP0 pid=1088) (RayWorkerWrapper pid=285, ip=192.168.177.12) spark2:285:285 [0] NCCL INFO "
    setup = pre + "comm 0x1095e9d0 rank 1 nRanks 2 nNodes 2 localRanks 1 localRank 0 MNNVL 0\n"
    facts = ex.nccl.parse(setup)
    assert (facts["world_size"], facts["nodes"]) == (2, 2)
    assert explained(setup) == ("skip", "FACTS_INCOMPLETE", None)        # nothing decisive: not judged, no owner
    log = ncclog.parse(setup + pre + "Using network IB\n" + pre + "NET/IB : Using [0]mlx5_0:1/IB ; OOB eth0:1.2.3.4<0>\n")
    assert log["networks"] == ["IB"] and log["rank_networks"] == {"spark2:285": "IB"} and log["hcas"] == ["mlx5_0:1/IB"]


EXTRA = {
    "verbs_devices": ["mlx5_0"],
    "adapters": [{"name": "mlx5_0", "driver": "mlx5_core", "hca_type": None, "ports": [{"port": 1, "state": None}]}],
    "uverbs": ["uverbs0"],
    "libraries": {"libibverbs.so.1": "loaded"},
    "peermem": True,
    "kernel": "5.15.0",
    "net_plugins": [],
    "nccl_env": {},
}


@pytest.mark.parametrize("extra", sorted(EXTRA))
def test_evidence_only_adds_to_a_memlock_fault(extra):
    """Any one more field beside a 64 KiB limit may decide whose it is, never that it is no fault."""
    r = fabric.judge({"memlock": 65536, extra: EXTRA[extra]}, Options())  # type: ignore[misc]
    assert r.status == "fail" and any(f["code"] == "FABRIC_MEMLOCK_LOW" for f in r.data["findings"]), (extra, verdict(r))


def test_a_cuda_refusal_under_nccl_lines_is_the_refusal():
    """NCCL lines that decide nothing do not hide a CUDA 802 the same log shows (the NCCL kind that says "nothing
    to judge" is tried after the CUDA refusal)."""
    pre = "(RayWorkerWrapper pid=285, ip=192.168.177.12) spark2:285:285 [0] NCCL INFO "
    text = (pre + "cudaDriverVersion 12080\n" + pre + "NCCL version 2.21.5+cuda12.4\n"
            "RuntimeError: CUDA error: system not yet initialized\n")
    assert explained(text) == ("fail", "DRIVER_ERROR", "host")


@pytest.mark.parametrize("text, line", [
    ("x\n[rank0]:[E ProcessGroupNCCL.cpp:607] [Rank 0] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=1, "
     "OpType=ALLREDUCE) ran for 600000 milliseconds before timing out.\ny",
     "[rank0]:[E ProcessGroupNCCL.cpp:607] [Rank 0] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=1, "
     "OpType=ALLREDUCE) ran for 600000 milliseconds before timing out."),
    ("a\nWatchdog caught collective operation timeout: Work(SeqNum=5) ran for 1800000 ms\n",
     "Watchdog caught collective operation timeout: Work(SeqNum=5) ran for 1800000 ms"),
    ("connect timed out after 30s (NCCL bootstrap)\n", "connect timed out after 30s (NCCL bootstrap)"),
    ("the collective timed out\n", None),                  # "collective" before the words, not after
    ("timeout waiting for data\nNCCL INFO ok\n", None),   # NCCL on another line
])
def test_a_collective_timeout_is_the_line_that_says_so(text, line):
    """torch's watchdog from its words on, or a whole line saying it timed out of NCCL or a collective, found from the
    words themselves (a pattern starting `.*` rescanned each line of a 30 MB log from every position: 16 s)."""
    from verify.explain import nccl as explain_nccl
    assert explain_nccl._timeout(text) == line


# ------------------------------------------------------------------------------ mentioned, not said (no false drain)
@pytest.mark.parametrize("text", [
    "If you see `RuntimeError: CUDA error: uncorrectable ECC error encountered`, contact your admin.\n",
    "Q: What does `cudaErrorECCUncorrectable` mean?\n",
    "commit 1234\n    Fix CUDA error: an illegal memory access in the attention kernel\n"
    "    Handle cudaErrorECCUncorrectable gracefully\n",
    'def check(err):\n    if err == "cudaErrorECCUncorrectable":\n'
    '        raise RuntimeError("CUDA error: uncorrectable ECC error encountered")\n',
    "**Describe the bug**\n<!-- e.g. RuntimeError: CUDA error: uncorrectable ECC error encountered -->\n",
    'How to fix "Failed to initialize NVML: Driver/library version mismatch": reboot after a driver upgrade.\n',
    "Error: the command NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver is in the FAQ\n",
])
def test_a_message_a_text_merely_mentions_blames_no_host(text):
    """A README, a commit, a program's source or an issue template that quotes a CUDA or NVML error is no program's
    error: it was read as one and failed the host (ECC_UNCORRECTABLE, DRIVER_ERROR)."""
    status, _, owner = explained(text)
    assert owner != "host", (status, text)


@pytest.mark.parametrize("line", [
    "[rank0]: RuntimeError: CUDA error: uncorrectable ECC error encountered",
    'CUDA error at foo.cu:12 code=214(cudaErrorECCUncorrectable) "cudaDeviceSynchronize()"',
    '{"msg": "RuntimeError: CUDA error: uncorrectable ECC error encountered"}',
    "ERROR 05-01 12:00:00 worker.py:1] CUDA error: uncorrectable ECC error encountered",
    "2024-05-01 12:00:00,123 - ERROR - CUDA error: uncorrectable ECC error encountered",
    "E external/xla/cuda_driver.cc:1] failed to synchronize the stop event: CUDA_ERROR_ECC_UNCORRECTABLE: uncorrectable "
    "ECC error encountered",
    "  what():  transform: failed to synchronize: cudaErrorECCUncorrectable: uncorrectable ECC error encountered",
    "cudaDeviceSynchronize returned cudaErrorECCUncorrectable (214)",
])
def test_a_program_s_own_cuda_error_line_is_still_read(line):
    assert explained(line + "\n") == ("fail", "ECC_UNCORRECTABLE", "host")


def test_nvml_s_refusal_as_tools_print_it_is_still_read():
    for line in ("Failed to initialize NVML: Driver/library version mismatch",
                 "nvidia-container-cli: initialization error: nvml error: driver/library version mismatch: unknown"):
        assert explained(line + "\nNVRM version: NVIDIA UNIX x86_64 Kernel Module  535.104.05\n")[2] == "host", line


def test_an_error_number_is_decoded_as_before_from_one_pass_over_the_line():
    """decode() finds every rule's number in one pass (a rule at a time was seconds on a long line)."""
    assert cuda_errors.decode("cudaGetDeviceCount returned 802") is cuda_errors.decode("Error 802: x") is not None
    assert cuda_errors.decode("error=0802") is None and cuda_errors.decode("error 8020") is None
    assert cuda_errors.decode("Error 2: x") is None        # errno's ENOENT as often: never read by number
