"""`python -m verify` on this (CPU-only) host, as a user would run it, plus fault injection."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import jsonschema
import pytest

from tests.helpers import ROOT, run_cli

pytestmark = pytest.mark.host

SCHEMA = json.loads((ROOT / "verify" / "report.schema.json").read_text())


@pytest.fixture(scope="module")
def full_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("verify")
    proc = run_cli("--json", str(out / "r.json"), "--junit", str(out / "r.xml"), "--save-facts", str(out / "facts"),
                   module="verify", timeout=600)
    return proc, json.loads((out / "r.json").read_text()), ET.parse(out / "r.xml").getroot(), out


def test_cpu_host_passes_shm_hdf5_arrow_and_skips_gpu_nccl_with_reasons(full_run):
    proc, report, _, _ = full_run
    status = {c["name"]: c for c in report["checks"]}
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert {n: status[n]["status"] for n in status} == {"gpu": "skip", "nccl": "skip", "shm": "pass", "hdf5": "pass", "arrow": "pass",
                                                        "vision": "skip", "dataloader": "pass", "fabric": "skip", "train": "pass"}
    assert (status["fabric"]["code"], status["fabric"]["owner"]) == ("FABRIC_NONE", "host")     # no RDMA here
    assert (status["gpu"]["code"], status["gpu"]["owner"]) == ("GPU_NOT_VISIBLE", "image") and status["gpu"]["remedy"]
    assert status["nccl"]["code"] == "NCCL_NOT_EXERCISED"
    assert "all-reduce verified over gloo, world size 2" in status["nccl"]["summary"]
    assert status["nccl"]["metrics"]["wrong"]["value"] == 0 and status["nccl"]["data"]["sizes"]
    assert status["arrow"]["metrics"]["ratio"]["unit"] == "x"
    assert "verdict: PASS" in proc.stdout and "[6/9] arrow" in proc.stderr
    assert (status["gpu"]["code"], status["gpu"]["owner"]) == ("GPU_NOT_VISIBLE", "image")
    assert (status["nccl"]["code"], status["nccl"]["owner"]) == ("NCCL_NOT_EXERCISED", "job")
    assert all(c["code"] is None for c in report["checks"] if c["status"] == "pass")


def test_train_runs_ddp_over_gloo_across_2_processes_and_the_replicas_agree_at_every_step(full_run):
    """The real check on this CPU host: 2 gloo ranks, every step's checksum and global loss the same on both."""
    _, report, _, out = full_run
    train = next(c for c in report["checks"] if c["name"] == "train")
    assert train["status"] == "pass" and train["code"] is None, train
    assert "no GPU" in train["summary"] and "over gloo, world size 2" in train["summary"] and "not judged" in train["summary"]
    facts = json.loads((out / "facts" / "train.json").read_text())["facts"]
    ranks = facts["ranks"]
    assert [r["rank"] for r in ranks] == [0, 1] and facts["failures"] == [] and facts["backend"] == "gloo"
    steps = [[(s["step"], s["loss"], s["checksum"]) for s in r["steps"]] for r in ranks]
    assert steps[0] == steps[1] and len(steps[0]) >= facts["config"]["min_steps"]
    checksums = [c for _, _, c in steps[0]]
    assert len(set(checksums)) == len(checksums)          # the parameters change at every step
    losses = [loss for _, loss, _ in steps[0]]
    assert losses[-1] < 0.7 * losses[0] and train["metrics"]["loss_last"]["value"] < 0.7 * train["metrics"]["loss_first"]["value"]
    assert train["metrics"]["tokens_per_s"]["value"] > 0 and all(r["loader"]["zero_copy"] for r in ranks)
    assert ranks[0]["loader"]["setting"]["num_workers"] in [row["num_workers"] for row in ranks[0]["loader"]["sweep"]]
    assert report["environment"]["phases"]["first_step"] == ranks[0]["first_step_s"] > 0


def test_save_facts_then_from_facts_reproduces_the_verdicts_on_this_host(full_run, tmp_path):
    _, report, _, out = full_run
    facts = out / "facts"
    assert sorted(p.name for p in facts.iterdir()) == ["arrow.json", "dataloader.json", "fabric.json", "gpu.json", "hdf5.json", "host.json", "nccl.json", "shm.json",
                                                         "train.json", "vision.json"]
    proc = run_cli("--from-facts", str(facts), "--json", str(tmp_path / "replay.json"), module="verify", timeout=120)
    replay = json.loads((tmp_path / "replay.json").read_text())
    jsonschema.validate(replay, SCHEMA)
    assert proc.returncode == 0 and replay["replay"]["host"] == json.loads((facts / "host.json").read_text())["hostname"]
    def verdict(r: dict) -> list:
        return [(c["name"], c["status"], c["code"], c["owner"], c["summary"]) for c in r["checks"]]
    assert verdict(replay) == verdict(report)
    assert "REPLAY of facts recorded on" in proc.stdout and "[1/8]" not in proc.stderr


def test_report_validates_and_junit_parses(full_run):
    _, report, junit, _ = full_run
    jsonschema.validate(report, SCHEMA)
    assert report["environment"]["torch"] and report["environment"]["pyarrow"]
    assert junit.get("tests") == "9" and junit.get("failures") == "0" and junit.get("skipped") == "4"


def test_expect_gpus_turns_the_missing_gpu_into_a_failure_with_diagnosis():
    proc = run_cli("--checks", "gpu", "--expect-gpus", "1", module="verify")
    assert proc.returncode == 1 and "FAIL" in proc.stdout and "no GPU visible" in proc.stdout
    assert "remedy:" in proc.stdout and "code: GPU_NOT_VISIBLE (owner: image)" in proc.stdout
    assert "CPU build of torch" in proc.stdout


def test_list_and_unknown_check():
    assert "arrow" in run_cli("--list", module="verify").stdout
    proc = run_cli("--checks", "gpux", module="verify")
    assert proc.returncode == 2 and "unknown check gpux" in proc.stderr and "Traceback" not in proc.stderr


def test_a_hanging_check_is_cut_off_while_the_others_report(tmp_path):
    """The one real hang of this module, natively: killed at its timeout and not run again. The timeout is every
    check's, so the check after it is fabric, which needs well under it (a check that imports torch would need more);
    the decision to run a timed-out check again, and when not, is tests/test_emulated_limits.py's."""
    proc = run_cli("--checks", "shm,fabric", "--timeout", "4", "--json", str(tmp_path / "r.json"),
                   env={"VERIFY_TEST_HANG": "shm", "VERIFY_TEST_HANG_ONCE": str(tmp_path / "hung")}, module="verify")
    checks = {c["name"]: c for c in json.loads((tmp_path / "r.json").read_text())["checks"]}
    assert proc.returncode == 1
    assert checks["shm"]["status"] == "fail" and "timed out after 4 s" in checks["shm"]["summary"]
    assert (checks["shm"]["code"], checks["shm"]["owner"]) == ("CHECK_TIMEOUT", "host")
    assert "first_attempt" not in checks["shm"]["data"]      # natively no second attempt (it would have passed)
    assert "test hook: shm hangs" in checks["shm"]["output"]
    # before the kill, the group printed where it hung (faulthandler on SIGUSR1): the hook's sleep in run_one
    assert "(most recent call first)" in checks["shm"]["output"] and "in run_one" in checks["shm"]["output"]
    assert any("stacks of its 1 stuck thread(s)" in d for d in checks["shm"]["details"]), checks["shm"]["details"]
    assert (checks["fabric"]["status"], checks["fabric"]["code"]) == ("skip", "FABRIC_NONE")     # its own verdict


def test_a_crashing_check_is_a_failure_with_its_signal(tmp_path):
    proc = run_cli("--checks", "arrow,shm", "--shm-min", "16m", "--json", str(tmp_path / "r.json"),
                   env={"VERIFY_TEST_CRASH": "arrow"}, module="verify")
    checks = {c["name"]: c for c in json.loads((tmp_path / "r.json").read_text())["checks"]}
    assert proc.returncode == 1 and checks["arrow"]["summary"] == "crashed with SIGSEGV"
    assert checks["arrow"]["code"] == "CHECK_CRASHED"
    assert checks["shm"]["status"] == "pass"


def _can_unshare() -> bool:
    return os.geteuid() == 0 and shutil.which("unshare") is not None and \
        subprocess.run(["unshare", "--mount", "true"], capture_output=True).returncode == 0


@pytest.mark.skipif(not _can_unshare(), reason="needs root and unshare for a private /dev/shm")
def test_small_dev_shm_fails_with_the_remedy(tmp_path):
    """A 64 MB /dev/shm in a private mount namespace, as Docker gives by default."""
    script = (f"mount -t tmpfs -o size=64m tmpfs /dev/shm && exec {sys.executable} -m verify --checks shm "
              f"--json {tmp_path / 'r.json'}")
    proc = subprocess.run(["unshare", "--mount", "--propagation", "private", "sh", "-c", script], cwd=ROOT,
                          capture_output=True, text=True, timeout=300)
    shm = json.loads((tmp_path / "r.json").read_text())["checks"][0]
    assert proc.returncode == 1 and (shm["status"], shm["code"], shm["owner"]) == ("fail", "SHM_TOO_SMALL", "job")
    assert "64 MiB" in shm["summary"] and "--shm-size" in shm["remedy"] and "--ipc=host" in shm["remedy"]
    # The page-by-page touch is tried first and is what the summary names: on a tmpfs, a page past its size is SIGBUS.
    # (torch's own attempt, the other detail, says ENOSPC or SIGBUS depending on the torch release: not asserted.)
    assert "killed by SIGBUS" in shm["summary"], shm


def test_h5py_without_its_native_library_is_diagnosed_by_name(tmp_path):
    """A throwaway copy of h5py with its bundled libhdf5 removed shadows the real one."""
    import importlib.util
    spec = importlib.util.find_spec("h5py")
    assert spec is not None and spec.origin is not None
    origin = Path(spec.origin).parent
    shutil.copytree(origin, tmp_path / "h5py")
    libs = origin.parent / "h5py.libs"
    shutil.copytree(libs, tmp_path / "h5py.libs")
    removed = [p.name for p in (tmp_path / "h5py.libs").glob("libhdf5-*")]
    assert removed, "expected h5py's wheel to bundle libhdf5"
    for name in removed:
        (tmp_path / "h5py.libs" / name).unlink()
    # copies of h5py's dist-info, so that the package version is still known
    proc = run_cli("--checks", "hdf5", "--json", str(tmp_path / "r.json"), module="verify",
                   env={"PYTHONPATH": f"{tmp_path}:{ROOT}"})
    check = json.loads((tmp_path / "r.json").read_text())["checks"][0]
    assert proc.returncode == 1 and check["status"] == "fail"
    assert "cannot load libhdf5" in check["summary"] and "HDF5 shared library is missing" in check["summary"]
    assert "--force-reinstall" in check["remedy"]


@pytest.mark.skipif(not _can_unshare(), reason="needs root and unshare for a private, tiny TMPDIR")
def test_a_full_scratch_disk_is_disk_full_for_the_host_not_a_crash_of_the_image(tmp_path):
    """A 2 MiB tmpfs as TMPDIR: arrow's write gets ENOSPC, and libhdf5 segfaults on it; both say DISK_FULL."""
    tiny = tmp_path / "tiny"
    tiny.mkdir()
    script = (f"mount -t tmpfs -o size=2m tmpfs {tiny} && TMPDIR={tiny} exec {sys.executable} -m verify "
              f"--checks arrow,hdf5,shm --shm-min 16m --json {tmp_path / 'r.json'}")
    proc = subprocess.run(["unshare", "--mount", "--propagation", "private", "sh", "-c", script], cwd=ROOT,
                          capture_output=True, text=True, timeout=300)
    checks = {c["name"]: c for c in json.loads((tmp_path / "r.json").read_text())["checks"]}
    assert proc.returncode == 1, proc.stdout + proc.stderr
    for name in ("arrow", "hdf5"):
        assert (checks[name]["status"], checks[name]["code"], checks[name]["owner"]) == ("fail", "DISK_FULL", "host")
        assert "-v /scratch:/tmp" in checks[name]["remedy"]
    assert "no space left on device writing" in checks["arrow"]["summary"]
    assert checks["shm"]["status"] == "pass"            # the next check still runs: /dev/shm is another filesystem
    assert "Traceback" not in proc.stderr


def test_under_emulation_a_timed_out_check_runs_once_more_and_keeps_the_first_attempt(tmp_path):
    """TORCHIMAGES_HOST_ARCH=aarch64 on this x86_64 host is emulation evidence; the hook hangs the first attempt only,
    and the second is the real check (fabric: well within the timeout of both attempts)."""
    proc = run_cli("--checks", "fabric", "--timeout", "4", "--json", str(tmp_path / "r.json"),
                   env={"VERIFY_TEST_HANG": "fabric", "VERIFY_TEST_HANG_ONCE": str(tmp_path / "hung"),
                        "TORCHIMAGES_HOST_ARCH": "aarch64"}, module="verify")
    fabric = json.loads((tmp_path / "r.json").read_text())["checks"][0]
    assert proc.returncode == 0 and (fabric["status"], fabric["code"]) == ("skip", "FABRIC_NONE"), proc.stdout
    assert any(d.startswith("first attempt timed out after 4 s and was killed under CPU emulation") for d in fabric["details"])
    assert "test hook: fabric hangs" in fabric["data"]["first_attempt"]["output"]
