"""Issue 36's lows left by the hunts (tests/test_cluster_hunt79*.py, hunt80, tests/test_hunt79_inputs.py): each
reproduced through the public interface first (`python -m scripts` as make runs it, `verify.prolog`'s main).

1. One knob, one parser (the practice: a setting has one grammar wherever it is read). TORCHIMAGES_CLOCK_SKEW=0 was
   accepted by the prolog (verify/shared/clockskew.py) and refused by make isolate and make fleet-report
   (scripts/fleet/isolate_facts.skew and settings.parse_skew read it as a positive duration): real. 0 is a tolerance
   (clocks kept to the second; a smaller tolerance only believes less, never passes more), so it is one everywhere:
   CLOCK_SKEW and TORCHIMAGES_CLOCK_SKEW on the host side are read by one parser (scripts/durations.parse_skew) with the
   grammar and range of the prolog's, held to one answer below (the host side never imports verify). make
   fleet-report's `skew or default` read a CLOCK_SKEW of 0 as not given: fixed with it.
2. A plausible range for the duration knob (the practice: a value outside a knob's range is a setting of ours, one
   line naming the knob, the value, the unit and the range). TORCHIMAGES_CLOCK_SKEW=300000 (5 minutes meant in ms) was
   taken as 83 hours in silence, by every reader (anything up to a year): real. The range is now 0 to 1d (above it no
   clocks differ: a unit was lost), said in docs/cluster-safety.md, docs/prolog.md, verify/FACTS.md and make's help.
   Outside it: make isolate, make fleet-report, make report/gate and `verify --from-facts` end in that one line and
   exit 2; the prolog under Prolog= says it, traces it in every history event and the metrics
   (setting_problems) and exits 0 on a healthy node, its default 5m holding: the rule every bad knob of the prolog
   follows since tests/test_cluster_hunt71.py (a bad knob never drains and never ungates: a lost GPU still drains),
   kept rather than a "not assessed" that would run the node ungated.
3. A pasted GPU index of 4096 or more (`verify explain` of `nvidia-smi -L`) says FACTS_INVALID: not real. NVML
   numbers a node's GPUs 0 to count - 1 and the driver serves at most NV_MAX_DEVICES = 32 of them
   (NVIDIA/open-gpu-kernel-modules src/common/sdk/nvidia/inc/nvlimits.h); no reader takes a minor number or a bus id
   as an index (procinfo.py and slurmgres.py leave the /dev/nvidiaN minor null; bus ids are hex with colons, which no
   `GPU <digits>:` pattern reads). An excerpt that prints 4096 was made, not copied: the contract's ceiling (4095) refusing
   it is right. Held below, beside the driver's last index (31), which is read.
4. Every input not read is listed (the practice: the fleet report never skips what it could not read). A `.log` or
   `.txt` under DIR with no report block at all (kubectl logs of a pod that died before printing one, make isolate's
   pair log of a step that wrote no report) was skipped in silence and the fleet passed: real. Now listed invalid,
   "no verify report in it ... not assessed", and the fleet does not pass; a log beside its own `.json` (isolate's
   pair log next to the pair's report, read in its own right) is that report's output, not listed.
5. The step's temp folders SIGKILL left (`/tmp/torchimages-step.*`): made by the node script every launcher runs
   (scripts/fleet/slurm.py; make slurm, make isolate's steps, CI's tests of both), removed by its EXIT trap, which
   SIGKILL never runs: real. The practice: a lock the kernel drops when its holder dies marks a folder in use (a PID
   check misreads a step of another PID namespace). Each step holds flock(2) on its folder's `.lock` while it or any
   child lives; at its start it removes the folders whose lock is free: its own user's only, never a link nor through
   one, a `.lock` over a minute old (scripts/fleet/stepscratch.py). Tested with a real step killed by SIGKILL, a live
   one beside it, a folder without a lock and a planted link.
"""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from scripts.durations import SKEW_MAX_S, parse_skew
from scripts.errors import UserError
from tests.helpers import ROOT
from tests.prolog_fakes import PROLOG_ENV, _gpu, _report, _verify_writes, install_fake
from verify.prolog import cli, history
from verify.shared import clockskew

pytestmark = pytest.mark.unit

CUDA_TAG = "2.13.0-cuda13.0-cudnn9-runtime-debian12"


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch) -> Any:
    return install_fake(monkeypatch)


def _cli(tmp_path: Path, target: str, **env: str) -> tuple[int, str]:
    """`make <target>` as the Makefile runs it (python -m scripts, knobs in its environment), its files under tmp_path."""
    base = {k: v for k, v in os.environ.items() if k in ("PATH", "HOME", "LANG")}
    proc = subprocess.run([sys.executable, "-m", "scripts", target], cwd=ROOT, capture_output=True, text=True,
                          env={**base, "BUILD_DIR": str(tmp_path / "build"), **env}, timeout=120, check=False)
    return proc.returncode, proc.stdout + proc.stderr


# ---- 1 and 2: one parser of the clock tolerance, 0 to a day

SKEWS = ["0", "0s", "90", "5m", " 5M ", "1.5h", "1d", "86400", "24h", "1440m", "0.000000001", "000000000005m",
         "86401", "300000", "2d", "1w", "53w", "100000000000w", "9" * 13, "soon", "-1", "5 min", "1e3", "inf", "nan",
         "\u0665m", "2y", ""]


def _host(text: str) -> float | str:
    try:
        return parse_skew(text, clockskew.ENV) if text.strip() else clockskew.DEFAULT_S
    except UserError as exc:
        return str(exc)


def _prolog(text: str) -> float | str:
    try:
        return clockskew.allowance({clockskew.ENV: text})
    except ValueError as exc:
        return str(exc)


@pytest.mark.parametrize("text", SKEWS)
def test_one_knob_one_parser_the_host_reads_the_clock_tolerance_as_the_prolog_does(text):
    assert _host(text) == _prolog(text)
    assert SKEW_MAX_S == clockskew.MAX_S == 86400.0


def test_zero_is_a_clock_tolerance_everywhere():
    from scripts.fleet.isolate_facts import skew
    assert skew({clockskew.ENV: "0"}) == 0.0 == parse_skew("0", "CLOCK_SKEW") == _prolog("0")


@pytest.mark.parametrize(("text", "unit"), [("300000", "seconds (no unit given)"), ("5000m", "minutes"),
                                            ("2d", "days"), ("1w", "weeks")])
def test_a_tolerance_past_a_day_is_one_line_naming_knob_value_unit_and_range(text, unit):
    said = _host(text)
    assert isinstance(said, str) and "\n" not in said and said == _prolog(text)
    assert said.startswith(f"{clockskew.ENV}={text!r} is ") and f"read in {unit}" in said and "0 to 1d" in said, said


@pytest.mark.host
@pytest.mark.parametrize("knob", ["CLOCK_SKEW", "TORCHIMAGES_CLOCK_SKEW"])
def test_make_isolate_takes_a_tolerance_of_0_under_either_name_and_writes_it_into_its_job(tmp_path, knob):
    status, said = _cli(tmp_path, "isolate", NODES="4", LOCAL_IMAGE="1", IMAGE=CUDA_TAG, GPUS="8", **{knob: "0"})
    assert status == 0, said
    script = next((tmp_path / "build" / "slurm").glob("*.sbatch")).read_text()
    assert "export TORCHIMAGES_CLOCK_SKEW=${TORCHIMAGES_CLOCK_SKEW:-0}" in script


@pytest.mark.host
@pytest.mark.parametrize(("target", "knob"), [("isolate", "CLOCK_SKEW"), ("isolate", "TORCHIMAGES_CLOCK_SKEW"),
                                              ("fleet-report", "CLOCK_SKEW"), ("fleet-report", "TORCHIMAGES_CLOCK_SKEW")])
def test_make_refuses_a_clock_tolerance_past_a_day_in_one_line(tmp_path, target, knob):
    (tmp_path / "job").mkdir()
    status, said = _cli(tmp_path, target, NODES="4", LOCAL_IMAGE="1", IMAGE=CUDA_TAG, GPUS="8",
                        DIR=str(tmp_path / "job"), **{knob: "300000"})
    lines = said.strip().splitlines()
    assert status == 2 and lines[-1].startswith(f"error: {knob}='300000' is 83.33 h, read in seconds"), said
    assert "0 to 1d" in lines[-1] and "Traceback" not in said
    assert not (tmp_path / "build" / "slurm").exists()


def test_slurm_prolog_semantics_a_tolerance_past_a_day_is_said_traced_and_never_drains(tmp_path, fake, monkeypatch,
                                                                                      capsys):
    """Under Prolog= the out-of-range knob is a setting of ours: one line, traced in the history's events and the
    metrics, exit 0 on a healthy node with the default 5m holding (tests/test_cluster_hunt71.py's rule)."""
    _verify_writes(monkeypatch, json.dumps(_report(_gpu())).encode())
    prom = tmp_path / "prom"
    status = cli.main(["--state-dir", str(tmp_path / "state"), "--no-kernel-log", "--metrics-dir", str(prom)],
                      {**PROLOG_ENV, clockskew.ENV: "300000"})
    err = capsys.readouterr().err
    assert status == 0 and fake.nodes["n1"][0] == "idle", err
    assert sum("TORCHIMAGES_CLOCK_SKEW='300000' is 83.33 h, read in seconds" in ln for ln in err.splitlines()) == 1, err
    events = history.read(str(tmp_path / "state"), "n1").events
    assert events and all(e.get("setting_problems") == 1 and "0 to 1d" in e.get("settings", "") for e in events)
    assert 'torchimages_prolog_setting_problems{node="n1"} 1.0' in (prom / "torchimages_n1.prom").read_text()
    cfg = cli.config(cli._parser().parse_args(["--no-kernel-log", "--state-dir", str(tmp_path / "s")]),
                     {**PROLOG_ENV, clockskew.ENV: "0"})
    assert cfg.clock_skew_s == 0.0 and not cfg.setting_problems


# ---- 5. the step's temp folders that SIGKILL left

def _step_shell(tmp: Path, body: str) -> subprocess.Popen[str]:
    """The node script's scratch lines (as every launcher's node script runs them), then `body`, in bash."""
    from scripts.fleet.stepscratch import SCRATCH_LINES
    script = "\n".join(["set -uo pipefail", *SCRATCH_LINES, body])
    return subprocess.Popen(["bash", "-c", script], env={"PATH": os.environ["PATH"], "TMPDIR": str(tmp)},
                            stdout=subprocess.PIPE, text=True, start_new_session=True)


def _aged(folder: Path) -> Path:
    os.utime(folder / ".lock", (1, 1))          # its lock past stepscratch.STALE_MIN
    return folder


@pytest.mark.host
def test_a_step_killed_by_sigkill_leaves_a_folder_the_next_step_removes_and_a_live_one_is_kept(tmp_path):
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    # a step whose child outlives nothing: bash and its sleep are killed by SIGKILL (no EXIT trap runs)
    killed = _step_shell(tmp, 'echo "$TMPDIR"; sleep 300')
    assert killed.stdout is not None
    left = Path(killed.stdout.readline().strip())
    os.killpg(killed.pid, signal.SIGKILL)
    killed.wait(timeout=30)
    assert left.is_dir() and left.parent == tmp            # what CI found: the folder stays
    # a step still running (its child holds the lock) beside it
    alive = _step_shell(tmp, 'echo "$TMPDIR"; sleep 300')
    assert alive.stdout is not None
    running = _aged(Path(alive.stdout.readline().strip()))
    _aged(left)
    mine_no_lock = tmp / "torchimages-step.abcdef"        # an older step's folder, no lock: not known to be left
    mine_no_lock.mkdir()
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "keep").write_text("x")
    link = tmp / "torchimages-step.linkxx"                # a link by that name is never followed
    link.symlink_to(outside)
    try:
        nxt = _step_shell(tmp, 'echo "$TMPDIR"')
        out, _ = nxt.communicate(timeout=60)
        assert nxt.returncode == 0
        assert not left.exists(), "the killed step's folder is removed at the next start"
        assert running.is_dir() and mine_no_lock.is_dir() and (outside / "keep").is_file() and link.is_symlink()
        assert not Path(out.strip()).exists()             # the next step's own: removed by its EXIT trap
    finally:
        os.killpg(alive.pid, signal.SIGKILL)
        alive.wait(timeout=30)


# ---- 3. a pasted GPU index of 4096 or more: no system shows one (FACTS_INVALID stands)

def _explain(path: Path) -> tuple[int, str]:
    proc = subprocess.run([sys.executable, "-m", "verify", "explain", str(path)], cwd=ROOT, capture_output=True,
                          text=True, timeout=120, check=False)
    return proc.returncode, proc.stdout + proc.stderr


@pytest.mark.host
def test_no_system_lists_a_gpu_index_past_the_driver_s_32_so_4096_is_facts_invalid(tmp_path):
    """NVML numbers a node's GPUs 0 to count - 1, and the driver serves at most NV_MAX_DEVICES = 32 of them
    (open-gpu-kernel-modules, src/common/sdk/nvidia/inc/nvlimits.h): the facts contract's ceiling, 4095, is far above
    any index a real `nvidia-smi -L` prints, so an excerpt that prints 4096 was made, not copied: FACTS_INVALID."""
    from verify.figures import INDEX
    uuid = "GPU-6b3c0e8a-1111-2222-3333-4444555566{:02d}"
    listing = tmp_path / "smi.txt"
    listing.write_text(f"GPU 0: NVIDIA H100 80GB HBM3 (UUID: {uuid.format(0)})\n"
                       f"GPU 31: NVIDIA H100 80GB HBM3 (UUID: {uuid.format(31)})\n")
    status, said = _explain(listing)
    assert status == 0 and "FACTS_INVALID" not in said, said           # the driver's last index: read
    listing.write_text(listing.read_text().replace("GPU 31:", "GPU 4096:"))
    status, said = _explain(listing)
    assert status == 1 and "FACTS_INVALID" in said and "index is 4096" in said, said
    assert INDEX.hi >= 32


# ---- 4. a log with no report block is listed, never skipped

@pytest.fixture(scope="module")
def passing_report(tmp_path_factory: pytest.TempPathFactory) -> str:
    """A real passing report of this host (verify's shm check)."""
    out = tmp_path_factory.mktemp("shm") / "shm.json"
    proc = subprocess.run([sys.executable, "-m", "verify", "--checks", "shm", "--shm-min", "64m", "--json", str(out)],
                          cwd=ROOT, capture_output=True, text=True, timeout=300, check=False)
    assert out.is_file(), proc.stdout + proc.stderr
    return out.read_text()


@pytest.mark.host
def test_every_input_not_read_is_listed_a_pod_log_with_no_report_block_too(tmp_path, passing_report):
    job = tmp_path / "job"
    job.mkdir()
    (job / "n1.json").write_text(passing_report)
    (job / "n2.log").write_text('Error from server: container "verify" in pod "verify-n2" is waiting to start\n')
    (job / "n3.txt").write_text("")                                    # a pod that died before printing anything
    pair = json.loads(passing_report)
    pair["environment"]["hostname"] = "n4"
    (job / "round1-pair1.json").write_text(json.dumps(pair))           # make isolate's pair: its report...
    (job / "round1-pair1.log").write_text("[rank0] nccl: all_reduce ok\n")   # ...and its step's log beside it
    (job / "round1-pair2.log").write_text("srun: error: n4: task 0: Killed\n")  # a pair that wrote no report
    status, said = _cli(tmp_path, "fleet-report", DIR=str(job))
    assert status == 1 and "fleet: NOT PASSING" in said, said
    listed = [ln.split(":")[0].strip() for ln in said.splitlines() if "no verify report in it" in ln]
    assert listed == ["n2.log", "n3.txt", "round1-pair2.log"], said
    assert "not assessed" in next(ln for ln in said.splitlines() if "n2.log:" in ln)
    # a folder of reports and logs that hold theirs still passes
    for name in ("n2.log", "n3.txt", "round1-pair2.log"):
        (job / name).unlink()
    status, said = _cli(tmp_path, "fleet-report", DIR=str(job))
    assert status == 0 and "fleet: PASSING" in said, said
