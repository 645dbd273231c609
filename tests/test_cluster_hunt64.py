"""Round 64 of issue 36's hunt: a job's environment against the prolog's wrapper and its files.

Slurm's prolog semantics: Prolog= runs as SlurmdUser with an environment slurmd makes (SLURM_SCRIPT_CONTEXT=
prolog_slurmd, no PATH, no SLURM_STEP_ID); a job's first step, or a batch script that runs the prolog, runs with the
job's (PATH, SLURM_SCRIPT_CONTEXT, LD_PRELOAD, exported shell functions, its umask: a .bashrc or module file sets
them). verify.prolog tells a step by SLURM_STEP_ID whatever SLURM_SCRIPT_CONTEXT says; the wrapper read the context
first, so a step that exported SLURM_SCRIPT_CONTEXT=prolog_slurmd ran the job's python3 (a conda torch judged
against the node's driver), and in every step the wrapper's own readlink, dirname and timeout were the job's.
Class 1: a setting of ours, or the job's, is never the node's fault.
"""
from __future__ import annotations

import json
import os
import shutil
import socket
import stat
import subprocess
from pathlib import Path
from typing import Any, cast

import pytest

from tests.helpers import ROOT
from tests.prolog_fakes import (
    LOST_GPU_SH,
    SINFO_SH,
    STEP_ENV,
    _gpu,
    _report,
    history_events,
    install_fake,
    slurm_prefix,
)
from verify.prolog import cli
from verify.prolog.verifyrun import SYSTEM_PATH

WRAPPER = ROOT / "verify" / "bin" / "torchimages-prolog"
# a step that exported the context slurmd gives Prolog= (a job can export anything), and a plain one
SPOOFED_STEP = {"SLURM_STEP_ID": "0", "SLURM_JOB_ID": "7", "SLURM_SCRIPT_CONTEXT": "prolog_slurmd"}


def _script(path: Path, body: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"#!/bin/sh\n{body}\n")
    path.chmod(0o755)


def _host_install(tmp_path: Path) -> Path:
    """A host install: opt/verify holding the package (verify/ linked), no venv beside it."""
    top = tmp_path / "opt" / "verify"
    (top / "verify" / "bin").mkdir(parents=True)
    for entry in (ROOT / "verify").iterdir():
        if entry.name != "bin":
            (top / "verify" / entry.name).symlink_to(entry)
    shutil.copy2(WRAPPER, top / "verify" / "bin" / "torchimages-prolog")
    return top / "verify" / "bin" / "torchimages-prolog"


def _job_bin(tmp_path: Path, marker: Path) -> Path:
    """A job's PATH folder whose python3, readlink, dirname and timeout each leave a mark when run."""
    folder = tmp_path / "job-bin"
    for tool in ("python3", "readlink", "dirname", "timeout", "logger"):
        real = shutil.which(tool, path="/usr/bin:/bin") or "/bin/false"
        _script(folder / tool, f'echo {tool} >> {marker}; exec {real} "$@"')
    return folder


@pytest.mark.host
@pytest.mark.parametrize("env", [SPOOFED_STEP, {"SLURM_STEP_ID": "0"}, {"SLURM_JOB_ID": "7"}],
                         ids=["step-spoofing-prolog-context", "first-step", "batch-script"])
def test_slurm_step_semantics_the_wrapper_never_runs_a_job_s_python3_or_tools(tmp_path, env):
    """A job's first step that exported SLURM_SCRIPT_CONTEXT=prolog_slurmd (verify.prolog: still a step, by
    SLURM_STEP_ID) ran the conda python3 on the job's PATH (its torch judged against the node's driver:
    DRIVER_TOO_OLD drains a healthy node); and every step ran the job's readlink and dirname (which name the package
    folder whose verify.prolog runs) and timeout. In a job's environment all of them are the system's."""
    marker = tmp_path / "job-ran"
    wrapper = _host_install(tmp_path)
    job_path = f"{_job_bin(tmp_path, marker)}:/usr/bin:/bin"
    proc = subprocess.run([str(wrapper), "--help"], capture_output=True, text=True, timeout=120, check=False,
                          env={"PATH": job_path, **env})
    assert not marker.exists(), f"the job's {marker.read_text().split()} ran"
    if any(os.access(Path(d, "python3"), os.X_OK) for d in SYSTEM_PATH):
        assert proc.returncode == 0 and "usage: torchimages-prolog" in proc.stdout, proc.stderr


@pytest.mark.host
def test_slurm_prolog_semantics_prolog_still_uses_its_own_path(tmp_path):
    """Prolog= (slurmd's environment, no SLURM_STEP_ID): a PATH there is the operator's (a site's wrapper script set
    it), kept as before."""
    marker = tmp_path / "ran"
    wrapper = _host_install(tmp_path)
    subprocess.run([str(wrapper), "--help"], capture_output=True, text=True, timeout=120, check=False,
                   env={"PATH": f"{_job_bin(tmp_path, marker)}:/usr/bin:/bin", "SLURM_SCRIPT_CONTEXT": "prolog_slurmd",
                        "SLURM_JOB_ID": "7"})
    assert "python3" in marker.read_text().split()


@pytest.mark.host
def test_slurm_step_semantics_a_job_s_exported_shell_function_never_replaces_the_wrapper_s_tools(tmp_path):
    """Where /bin/sh is bash (RHEL), bash imports the functions a job exported (BASH_FUNC_readlink%%): a job's
    readlink named the package folder. The wrapper's `#!/bin/sh -p` (privileged: no function imported) closes it."""
    bash = shutil.which("bash")
    if bash is None:
        pytest.skip("no bash on this host")
    shebang = WRAPPER.read_text().splitlines()[0].split()
    assert shebang[0] == "#!/bin/sh" and shebang[1:] == ["-p"]
    marker = tmp_path / "function-ran"
    proc = subprocess.run([bash, *shebang[1:], str(WRAPPER), "--help"], capture_output=True, text=True, timeout=120,
                          check=False, env={"PATH": "/usr/bin:/bin", "SLURM_STEP_ID": "0",
                                            "BASH_FUNC_readlink%%": f"() {{ echo x >> {marker}; echo /nonexistent; }}",
                                            "BASH_FUNC_dirname%%": f"() {{ echo x >> {marker}; echo /nonexistent; }}"})
    assert not marker.exists() and "usage: torchimages-prolog" in proc.stdout, proc.stderr


@pytest.mark.host
def test_slurm_step_semantics_a_job_s_ld_preload_never_runs_in_the_prolog_s_python(tmp_path):
    """The loader runs LD_PRELOAD in every process: verify.prolog drops the job's for verify, but the wrapper exec'd
    the prolog's own Python (and its tools) with it. A library that cannot be loaded shows each process it was tried
    in (ld.so says so): the wrapper's own shell alone, which the kernel starts before any line of it runs."""
    env = {"PATH": "/usr/bin:/bin", "LD_PRELOAD": str(tmp_path / "libjob.so"), "SLURM_STEP_ID": "0"}
    proc = subprocess.run([str(WRAPPER), "--help"], capture_output=True, text=True, timeout=120, check=False, env=env)
    assert proc.stderr.count("libjob.so") == 1 and proc.returncode == 0, proc.stderr
    prolog = subprocess.run([str(WRAPPER), "--help"], capture_output=True, text=True, timeout=120, check=False,
                            env={**env, "SLURM_STEP_ID": "", "SLURM_SCRIPT_CONTEXT": "prolog_slurmd"})
    assert prolog.returncode == 0 and prolog.stderr.count("libjob.so") > 1     # slurmd's own environment: as given


@pytest.mark.unit
def test_the_wrapper_s_folders_are_the_prolog_s():
    """Every list of the system's folders in the wrapper (its PATH in a job's environment, where python3 is looked
    up) is verify.prolog's SYSTEM_PATH: one list, never two that drift."""
    lines = [ln.strip() for ln in WRAPPER.read_text().splitlines() if ln.strip().startswith("for d in ")]
    assert len(lines) == 2 and all(ln.startswith(f"for d in {' '.join(SYSTEM_PATH)}; do") for ln in lines), lines


@pytest.mark.unit
def test_slurm_step_semantics_a_job_s_umask_never_makes_the_state_folder_writable_by_others(tmp_path, monkeypatch):
    """A job's step runs with the job's umask (000 in a careless .bashrc): the history folder the prolog made was
    0777, where any other user's job could put a history of its own making for this node (forged hangs that drain,
    a clean record that hides a drain). The prolog's own files are never group- or other-writable."""
    install_fake(monkeypatch)

    def verify_runs(cmd: list[str], limit: float) -> tuple[int | None, str]:
        Path(cmd[cmd.index("--json") + 1]).write_text(json.dumps(_report(_gpu())))
        return 0, ""
    monkeypatch.setattr(cli, "_run_verify", verify_runs)
    before = os.umask(0)
    try:
        assert cli.main(["--state-dir", str(tmp_path / "state"), "--no-kernel-log",
                         "--metrics-dir", str(tmp_path / "metrics")], STEP_ENV) == 0
        assert os.umask(0) == 0                    # the caller's umask is back once the run ends
    finally:
        os.umask(before)
    assert history_events(tmp_path)[-1][0] == "pass"
    for path in [*tmp_path.joinpath("state").rglob("*"), tmp_path / "state", *tmp_path.joinpath("metrics").rglob("*")]:
        assert not path.lstat().st_mode & (stat.S_IWGRP | stat.S_IWOTH), (path, oct(path.lstat().st_mode))


@pytest.mark.host
@pytest.mark.parametrize("host_name", ["{host}", "{HOST}.cluster.example"], ids=["same", "upper-case-fqdn"])
def test_slurm_step_semantics_a_real_step_still_drains_its_own_node_on_a_lost_gpu(tmp_path, host_name):
    """The reverse: a real first step (srun: SLURM_STEP_ID, SLURM_JOB_ID, slurmd's SLURMD_NODENAME, Slurm under a
    root-owned prefix beside SLURM_CONF, a job's PATH and SLURM_SCRIPT_CONTEXT left as a job has them) run through
    the wrapper drains its node on a lost GPU, where Slurm's NodeName is not the host name and its NodeHostName is
    this host as slurm.conf may spell it (another case, a domain)."""
    host = socket.gethostname().split(".")[0]
    shown = host_name.format(host=host, HOST=host.upper())
    scontrol = f"""#!/bin/sh
[ "$1 $2" = "show node" ] && {{ printf 'NodeName=%s NodeHostName=%s\\n' "$4" "{shown}"; exit 0; }}
[ "$1" = update ] || exit 0
case "$3" in state=drain) printf 'drained|%s' "${{4#reason=}}" > "$FAKE_DIR/nodes/${{2#nodename=}}" ;; esac
"""
    env = slurm_prefix(tmp_path, {"sinfo": SINFO_SH, "scontrol": scontrol})
    (tmp_path / "nodes").mkdir()
    for node in ("gpu-a", "gpu-b"):
        (tmp_path / "nodes" / node).write_text("idle|none")
    _script(tmp_path / "verify" / "verify", LOST_GPU_SH.removeprefix("#!/bin/sh\n"))
    marker = tmp_path / "job-ran"
    env.update({"FAKE_DIR": str(tmp_path), "SLURMD_NODENAME": "gpu-a", "SLURM_STEP_ID": "0", "SLURM_JOB_ID": "9",
                "PATH": f"{_job_bin(tmp_path, marker)}:/usr/bin:/bin"})
    proc = subprocess.run([str(WRAPPER), "--python", str(tmp_path / "verify" / "verify"), "--no-kernel-log",
                           "--state-dir", str(tmp_path / "state"), "--breaker", "0.5"],
                          capture_output=True, text=True, timeout=120, check=False, env=env)
    assert proc.returncode == 1 and "Traceback" not in proc.stderr, proc.stderr
    assert (tmp_path / "nodes" / "gpu-a").read_text().startswith("drained|torchimages:GPU_LOST #"), proc.stderr
    assert (tmp_path / "nodes" / "gpu-b").read_text() == "idle|none"
    assert history_events(tmp_path, "gpu-a")[-1] == ("drain", "GPU_LOST")
    assert not marker.exists()


@pytest.mark.unit
@pytest.mark.parametrize(("visible", "owner"), [("", "job"), ("-1", "job"), ("NoDevFiles", "job"), ("unset", "host"),
                                                ("0,1", "host"), ("8", "host")])
def test_slurm_step_semantics_a_job_s_cuda_visible_devices_naming_no_device_is_never_the_host_s(visible, owner):
    """A job's `export CUDA_VISIBLE_DEVICES=` (a CPU-only step's idiom) before it ran the prolog: torch answers 'No
    CUDA GPUs are available' (cudaErrorNoDevice, which the catalog gives the job in CUDA's own words), NVML lists the
    node's 8 GPUs, and verify failed the host (GPU_NOT_VISIBLE): a healthy node drained. A value that can name no
    device is the process's; unset, or an index the node lacks (a GPU fallen off the bus), stays the host's."""
    from tests.verify_handmade import gpu_facts
    from verify.checks import gpu
    from verify.options import Options
    facts = gpu_facts(8)
    facts.update(cuda_available=False, cuda_init_error="RuntimeError: No CUDA GPUs are available", torch_devices=0,
                 cuda_visible_devices=visible, capabilities=[], kernels=[], perf=None, sdc=None, torch_map=[])
    r = gpu.judge(cast(Any, facts), Options())
    assert (r.status, r.code, r.owner) == ("fail", "GPU_NOT_VISIBLE", owner), r.summary


@pytest.mark.unit
def test_slurm_prolog_semantics_gpus_slurm_allocated_and_not_visible_still_drain_under_prolog(tmp_path, monkeypatch):
    """The reverse, as before: verify's job-owned GPU_NOT_VISIBLE in a job's step drains nothing (exit 0, not the
    node's: the step fails, the job's to fix), and under Prolog= with GPUs Slurm allocated (its own CUDA_VISIBLE_DEVICES) it is the host's: drained."""
    fake = install_fake(monkeypatch)
    hidden = json.dumps(_report(_gpu("fail", code="GPU_NOT_VISIBLE", owner="job", summary="names no device")))

    def verify_runs(cmd: list[str], limit: float) -> tuple[int | None, str]:
        Path(cmd[cmd.index("--json") + 1]).write_text(hidden)
        return 0, ""
    monkeypatch.setattr(cli, "_run_verify", verify_runs)
    args = ["--state-dir", str(tmp_path / "state"), "--no-kernel-log", "--breaker", "0.5"]
    cli.main(args, {**STEP_ENV, "CUDA_VISIBLE_DEVICES": ""})
    assert fake.nodes["n1"][0] == "idle" and not any(v.startswith("update") for v in fake.verbs())
    assert "drain" not in [event for event, _ in history_events(tmp_path)]
    prolog = {"SLURM_SCRIPT_CONTEXT": "prolog_slurmd", "SLURMD_NODENAME": "n1", "SLURM_JOB_ID": "7",
              "SLURM_GPUS_ON_NODE": "2", "SLURM_JOB_GPUS": "0,1", "CUDA_VISIBLE_DEVICES": "0,1"}
    assert cli.main(args, prolog) == 1 and fake.nodes["n1"][0] == "drained"
