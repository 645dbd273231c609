"""Hunt 91: false drains and bad input against `verify explain`'s newest readers (Azure NHC, iblinkinfo, ibqueryerrors /
ibcheckerrors, ibdiagnet) and rules (issue 35, batches 252 to 267).

Each finding, its rating, repro and fix:

1. (medium, a link's fault filed to the job) An IB completion 13 (RNR retry counter exceeded) under a job's
   NCCL_IB_RETRY_CNT or NCCL_IB_TIMEOUT below NCCL's defaults was NCCL_FAILED owner job. NCCL sets every QP's
   rnr_retry to 7, infinite (net_ib ncclIbRtsQp), whatever those variables: they bound transport retries (12), never
   RNR ones, so the job's setting cannot have run a 13 out. And NCCL_IB_TIMEOUT=0 is the IB spec's infinite ACK timeout
   (the timer off): a budget raised, not cut, yet it read as a cut one. checks/nccl/settings.retry_budget_cut: 12 only,
   and 0 is no cut.
2. (high, a lost GPU withheld as "a verify bug") One paste of two programs, a container's start refused by the toolkit
   (`nvidia-container-cli: device error: 1: unknown device`, `driver rpc error: timed out`, `nvml error: driver not
   loaded`) and nvidia-smi on the host (`Unable to determine the device handle for GPU 0000:3B:00.0: GPU is lost`):
   FACTS_INVALID, no owner, "verify's parser ... a verify bug", the lost GPU never judged. The judge's contradiction
   (NVML did not initialise, yet a device was read through it) counted the lost GPU's bus id, which is the error's own
   words, as a reading. checks/gpu/contradictions.impossible: a lost device is no reading; GPU_LOST, host.
3. (medium, the checker's failure filed to the node) Azure NHC's bandwidth checks compare their figure as a string
   (azure_nccl_allreduce.nhc: `[[ $avg_bus_bw < $EXP ]]`), so a test program that did not launch or crashed (mpirun
   unable to launch, an HPC-X not sourced) dies `NCCL allreduce, BUS BW (expected >=460.0 GB/s, but measured  GB/s)`:
   read as the node's unmeasured bandwidth, HEALTH_NOT_ASSESSED owner host; since 2024 `bc` answers nothing for the
   empty figure and the check passes it (`test passed,  GB/s`), alike. explain/aznhc._NO_FIGURE: a verdict with no
   figure where the measurement goes is the check's own trouble (not assessed, no owner); a figure, 0 included, stays
   the node's.
4. (medium, false warn host / a CA's fault withheld) ibcheckerrors' `# Checked Switch|Ca: nodeguid ... with failure`
   line set the kind of every node whose `Error check` lines came since the last such line, not only the node it
   closes: in a paste where one node's own `# Checked` line is missing (cut, or a release that prints none for it),
   a switch's LinkDowned before a CA's `# Checked Ca:` was read as the host's own cable (HEALTH_NOT_ASSESSED, owner
   host, the switch named as the host), and a CA's SymbolErrors before a switch's `# Checked Switch:` as a switch's
   (nothing to judge). explain/ibcounters._ibcheck: the line closes the last node checked; the others keep no kind and
   their description's form decides.
5. (high, false drain) iblinkinfo and ibqueryerrors list the whole fabric; the folder's host was the first CA that
   shows a fault. `[root@n01 ~]# iblinkinfo` on a healthy n01 whose listing shows n05's port Down/Polling: fail
   FABRIC_PORT_DOWN owner host, its line `mlx5_0:1 DOWN/Polling` naming no host: n01, which ran it, drained for n05's
   cable (ibqueryerrors alike: n05's SymbolErrors a warn on n01). explain/iblinkinfo.local (hosts.ran_on): where the
   paste's shell prompts (or `ssh host cmd`) name one host and it is listed, that host is judged; the other's fault is
   said, judged in its own folder. No prompt, or one naming an unlisted host: as before. ibdiagnet alike: its `-W-
   Port n05/P1 ... can not join due to rate` under `[root@n01 ~]# ibdiagnet` is n05's link, said, never n01's warn.
6. (medium, a traceback in the judge; facts out of contract) Azure NHC's `GPU id N`, `Warning: GPU N throttled` and
   its ECC counts were read with unbounded digits: `Warning: GPU 99999999999999999999 throttled, reason=0x8` gave
   index 1e20 (FACTS_INVALID, "a verify bug"), 400 digits an integer the judge's figure check could not compare
   (figures.Figure.problem: math.isfinite raised OverflowError, a traceback in `judge`, which explain swallowed as
   "not recognised"). figures: an integer past a float's range is a problem named in one line (never a raise);
   aznhc: an index of at most 3 digits, a count of at most 18 (else the line is said, not read).
"""
from __future__ import annotations

import pytest

from tests.judging import contract, explained, nccl_verdict, verdict
from verify import explain as ex
from verify.checks import CHECKS
from verify.explain import aznhc
from verify.judging import judge
from verify.options import Options

pytestmark = pytest.mark.unit

_WC = "NET/IB : Got completion with error {status}, opcode 0, len 0, vendor err 129"


def _completion(status: int, env: dict[str, str]) -> tuple[str, str | None, str | None]:
    error = _WC.format(status=status)
    return nccl_verdict(error=error, nccl_env=env, nccl_log={"proof": [f"NCCL WARN {error}"], "ib_error": error})


@pytest.mark.parametrize("env", [{"NCCL_IB_RETRY_CNT": "2"}, {"NCCL_IB_TIMEOUT": "5"},
                                 {"NCCL_IB_TIMEOUT": "1", "NCCL_IB_RETRY_CNT": "0"}])
def test_an_rnr_retry_exceeded_is_never_the_jobs_cut_transport_budget(env):
    assert _completion(13, env) == ("fail", "NCCL_FAILED", "host")
    assert _completion(12, env) == ("fail", "NCCL_FAILED", "job")        # the transport retries those bound


def test_an_ib_timeout_of_zero_is_the_timer_off_not_a_budget_cut():
    assert _completion(12, {"NCCL_IB_TIMEOUT": "0"}) == ("fail", "NCCL_FAILED", "host")
    assert _completion(12, {"NCCL_IB_TIMEOUT": "0", "NCCL_IB_RETRY_CNT": "3"}) == ("fail", "NCCL_FAILED", "job")


_SMI_LOST = "Unable to determine the device handle for GPU 0000:3B:00.0: {}\n"


@pytest.mark.parametrize("refusal", [
    "nvidia-container-cli: device error: 1: unknown device",
    "nvidia-container-cli: initialization error: driver rpc error: timed out: unknown.",
    "nvidia-container-cli: initialization error: nvml error: driver not loaded: unknown.",
])
@pytest.mark.parametrize("answer", ["GPU is lost.  Reboot the system to recover this GPU", "Unknown Error"])
def test_a_toolkits_refusal_beside_nvidia_smis_lost_gpu_is_the_lost_gpu(refusal, answer):
    r = explained(f"$ docker run --rm --gpus all img nvidia-smi\n{refusal}\n$ nvidia-smi\n{_SMI_LOST.format(answer)}")
    assert verdict(r) == ("fail", "GPU_LOST", "host")
    assert "3B:00.0" in r.summary


_NHC = "ERROR:  nhc:  Health check failed:  "


@pytest.mark.parametrize("line", [
    _NHC + "check_nccl_allreduce: NCCL allreduce, BUS BW (expected >=460.0 GB/s, but measured  GB/s)",
    "node7 | ERROR: nhc: Health check failed: check_nccl_allreduce_ib_loopback: NCCL allreduce IB loopback, BUS BW "
    "(expected > 40.0 GB/s, but measured  GB/s",
    _NHC + "check_ib_bw_gdr: IB write bandwidth test IB_WRITE_BW, IB=mlx5_ib0, IB BW (expected > 380 Gbps, but "
    "measured  Gbps)",
    "node7 | ERROR: nhc: Health check failed: Bandwidth is low on device 1. Reported bandwidth is  GB/s.",
    # since 2024 `bc` answers nothing for an empty figure, and the check passes it
    "SUCCESS:  nhc:  Health check passed:  check_nccl_allreduce: NCCL all reduce bandwidth test passed,  GB/s",
    "SUCCESS:  nhc:  Health check passed:  check_ib_bw_gdr: IB write bandwidth test IB_WRITE_BW passed for "
    "IB=mlx5_ib0, IB BW= Gbps",
])
def test_a_bandwidth_check_that_measured_nothing_is_its_own_trouble(line):
    r = explained(line + "\n", "health.log")
    assert (r.status, r.owner) == ("skip", None)
    assert "the tool's own trouble" in r.summary


def test_a_bandwidth_check_with_a_figure_stays_the_nodes():
    line = _NHC + "check_nccl_allreduce: NCCL allreduce, BUS BW (expected >=460.0 GB/s, but measured {} GB/s)\n"
    for figure in ("15.2", "0"):
        assert verdict(explained(line.format(figure), "health.log"))[2] == "host"


_SWITCH = "#warn: counter LinkDowned = 255 \t(threshold 10) lid 1 port 14\nError check on lid 1 (MF0;sw:SB7700/U1) port 14:  FAILED \n"
_CA = "#warn: counter {} = 36905 \t(threshold 10) lid 8 port 1\nError check on lid 8 (n01 mlx5_0) port 1:  FAILED \n"


def test_ibcheckerrors_checked_line_closes_only_the_last_node():
    closed_ca = _SWITCH + _CA.format("PortXmitWait") + "# Checked Ca: nodeguid 0x0002c902004871c8 with failure\n"
    r = explained(closed_ca, "ibcheckerrors.txt")
    assert r.owner is None and r.status != "pass"            # the switch's link-downs name no host
    closed_switch = _CA.format("SymbolErrors") + _SWITCH + "# Checked Switch: nodeguid 0x0002c9 with failure\n"
    r = explained(closed_switch, "ibcheckerrors.txt")
    assert verdict(r) == ("warn", "HEALTH_NOT_ASSESSED", "host") and "n01 mlx5_0" in r.summary


_FABRIC = """CA: n05 mlx5_0:
      0xe41d2d0300309261      0    1[  ] ==(              Down/ Polling)==>             [  ] "" ( )
CA: n01 mlx5_0:
      0xe41d2d0300309251      8    1[  ] ==( 4X      25.78125 Gbps Active/  LinkUp)==>      22    1[  ] "MF0;sw:U1" ( )
"""
_COUNTERS = """Errors for "n05 mlx5_0"
   GUID 0xe41d2d0300309261 port 1: [SymbolErrorCounter == 100]
Errors for "n01 mlx5_0"
   GUID 0xe41d2d0300309251 port 1: [PortXmitWait == 100]
"""


@pytest.mark.parametrize("prompt", ["[root@n01 ~]# iblinkinfo", "root@n01.cluster.local:~# iblinkinfo",
                                    "n01:~$ iblinkinfo", "$ ssh n01 iblinkinfo"])
def test_a_fabric_listing_run_on_a_healthy_host_never_drains_it_for_anothers_port(prompt):
    r = explained(f"{prompt}\n{_FABRIC}", "iblinkinfo.txt")
    assert verdict(r) == ("pass", None, None)
    assert any("n05 mlx5_0" in d and "own folder" in d for d in r.details)


def test_a_fabric_listing_judges_the_prompts_host_or_else_the_first_with_a_fault():
    for text in ("[root@n05 ~]# iblinkinfo\n" + _FABRIC, _FABRIC, "[root@mgmt1 ~]# iblinkinfo\n" + _FABRIC):
        assert verdict(explained(text, "iblinkinfo.txt")) == ("fail", "FABRIC_PORT_DOWN", "host")


def test_the_fabrics_counters_run_on_a_healthy_host_never_warn_it_for_anothers_link():
    assert explained("[root@n01 ~]# ibqueryerrors\n" + _COUNTERS, "q.txt").owner is None
    assert verdict(explained("[root@n05 ~]# ibqueryerrors\n" + _COUNTERS, "q.txt")) == (
        "warn", "HEALTH_NOT_ASSESSED", "host")


_DIAG = """-I- Using port 1 as the local port
-W- Port n05/P1 lid=0x00e2 guid=0x001e0bffff4ced75 dev=25218 can not join
    due to rate:2.5Gbps < group:10Gbps
-I- Stages Status Report:
    STAGE                                    Errors Warnings
    IPoIB Subnets Check                      0      1
"""


def test_ibdiagnets_slow_port_of_another_host_is_said_not_the_prompts_hosts():
    r = explained("[root@n01 ~]# ibdiagnet\n" + _DIAG, "ibdiagnet.txt")
    assert r.owner is None and any("n05/P1" in d and "own folder" in d for d in r.details)
    for text in (_DIAG, "[root@n05 ~]# ibdiagnet\n" + _DIAG):
        assert verdict(explained(text, "ibdiagnet.txt")) == ("warn", "HEALTH_NOT_ASSESSED", "host")


@pytest.mark.parametrize("line", [
    "Warning: GPU 99999999999999999999 throttled, reason=0x8",
    "Warning: GPU " + "9" * 400 + " throttled, reason=0x8",
    _NHC + "check_gpu_ecc: GPU id " + "9" * 400 + ": Row remap pending",
    _NHC + "check_gpu_ecc: GPU id 3: SRAM Uncorrectable ECC error count detected, (" + "9" * 400 + ",1)",
    _NHC + "check_gpu_ecc: GPU id 3: High DRAM Uncorrectable/correctable ECC error count detected, (" + "9" * 30
    + ",1,2,3)",
])
def test_azure_nhcs_runaway_digits_are_no_reading(line):
    kind = next(k for k in ex.KINDS if k.parse is aznhc.parse_gpu)
    assert contract(kind, aznhc.parse_gpu(line + "\n")) == []
    r = explained(line + "\n", "health.log")
    assert r.code != "FACTS_INVALID" and r.status != "pass"


def test_an_integer_past_a_floats_range_is_a_problem_never_a_raise():
    r = judge(CHECKS["gpu"], {"devices": [{"index": 0, "temperature_c": 10 ** 400}], "nvml_error": "none"}, Options())
    assert r.status != "pass" and "401 digits" in r.summary
