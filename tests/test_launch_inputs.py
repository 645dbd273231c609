"""Issue 36, classes 1 ("a setting of ours is never the node's fault") and 10 (launchers), as classes.

Every launcher (`make k8s-verify`, `make slurm`, `make isolate`) reads SHM_SIZE through the one size parser and GPUS
against the image, and `make slurm` refuses a SQSH path pyxis would split: a bad value is one line and exit 2 before
anything is written, never a job that fails (or drains) on the nodes. The launchers are rendered in-process
(`scripts.cli.main`), no docker, no Slurm, no cluster; the pyxis guard alone runs in bash. The fleet report's side of
the same classes: tests/test_fleet_codes.py.
"""
from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
import yaml

from scripts.cli import main
from scripts.fleet.cluster import k8s_quantity
from scripts.fleet.slurm import Job, pyxis_path_guard, slurm_script

pytestmark = pytest.mark.unit

CPU, CUDA = "2.13.0-cpu-debian12", "2.15.0-cuda13.2-cudnn9-runtime-debian12"
LAUNCHERS = ("k8s-verify", "slurm", "isolate")


def _env(rendered: Path, tmp_path: Path, **more: str) -> dict[str, str]:
    return {"IMAGES_DIR": str(rendered), "BUILD_DIR": str(tmp_path / "b"), "REPORTS_DIR": str(tmp_path / "r"),
            "LOCAL_IMAGE": "1", "NODES": "2", "IMAGE": CPU, **more}


def _refused(command: str, env: dict[str, str], capsys: pytest.CaptureFixture[str], tmp_path: Path) -> str:
    """The one error line of a refused launcher; nothing written."""
    assert main([command], env) == 2, command
    captured = capsys.readouterr()
    assert captured.err.startswith("error: ") and captured.err.count("\n") == 1, captured.err
    assert "Traceback" not in captured.err
    assert not (tmp_path / "b").exists() or not [p for p in (tmp_path / "b").rglob("*") if p.is_file()], command
    return captured.err


# ---- SHM_SIZE: one parser, every launcher ----

@pytest.mark.parametrize("command", LAUNCHERS)
@pytest.mark.parametrize("bad", ["0", "-1g", "99999999t", "2g;rm -rf /", "", "1e400", "64"])
def test_every_launcher_refuses_a_bad_shm_size_in_one_line_before_writing(command, bad, rendered, tmp_path, capsys):
    """Docker's --shm-size syntax (docker-py's parse_bytes), bounded 1 MiB to 16 TiB, read once by the parser make
    verify uses: `make slurm SHM_SIZE=0` and `make k8s-verify SHM_SIZE='2g;rm -rf /'` took any text silently."""
    line = _refused(command, _env(rendered, tmp_path, SHM_SIZE=bad), capsys, tmp_path)
    assert line.startswith("error: SHM_SIZE") and ("e.g. 2g" in line or "unset it" in line), line


@pytest.mark.parametrize(("given", "limit"), [(None, "2Gi"), ("8g", "8Gi"), ("1536m", "1536Mi"), ("3G", "3Gi"),
                                              ("1073741825", "1073741825")])
def test_k8s_verify_sizes_the_pods_shm_emptydir_by_shm_size(given, limit, rendered, tmp_path, capsys):
    """Kubernetes emptyDir `medium: Memory` with `sizeLimit` (a quantity, binary suffixes exact): the pod's /dev/shm
    is SHM_SIZE, as make verify's container's is; it was a fixed 16Gi whatever SHM_SIZE said."""
    env = _env(rendered, tmp_path, **({"SHM_SIZE": given} if given else {}))
    assert main(["k8s-verify"], env) == 0, capsys.readouterr().err
    docs = list(yaml.safe_load_all(next((tmp_path / "b" / "k8s").glob("*.yaml")).read_text()))
    volumes = {v["name"]: v for v in docs[-1]["spec"]["template"]["spec"]["volumes"]}
    assert volumes["dshm"]["emptyDir"] == {"medium": "Memory", "sizeLimit": limit}


def test_a_size_is_an_exact_kubernetes_quantity():
    """Kubernetes' resource.Quantity: binary suffixes Ki..Pi where they divide exactly, else plain bytes."""
    assert [k8s_quantity(n) for n in (1 << 20, 2 << 30, 1536 << 20, 16 << 40, 1 << 50, (1 << 20) + 1)] == \
        ["1Mi", "2Gi", "1536Mi", "16Ti", "1Pi", "1048577"]


@pytest.mark.parametrize("command", ["slurm", "isolate"])
def test_slurm_says_a_given_shm_size_sizes_no_dev_shm_there(command, rendered, tmp_path, capsys):
    """Slurm's launchers run with the node's /dev/shm (pyxis: enroot's tmpfs; docker: --ipc host): a SHM_SIZE other
    than the default is checked and said not to apply, never taken in silence."""
    assert main([command], _env(rendered, tmp_path, SHM_SIZE="8g")) == 0
    assert "note: SHM_SIZE=8g sizes no /dev/shm under Slurm" in capsys.readouterr().out
    assert main([command], _env(rendered, tmp_path)) == 0
    assert "SHM_SIZE" not in capsys.readouterr().out


# ---- GPUS: a whole number, and never of a CPU image ----

@pytest.mark.parametrize("command", LAUNCHERS)
@pytest.mark.parametrize("image", [CPU, f"{CPU}-jupyter-ssh", "all"])
def test_gpus_of_a_cpu_image_are_refused_naming_a_cuda_tag(command, image, rendered, tmp_path, capsys):
    """Slurm's --gres=gpu:N and Kubernetes' nvidia.com/gpu request GPUs for a program that can use them: a CPU image's
    torch cannot, so its job held 8 GPUs for nothing and its verdict blamed the nodes (GPU_NOT_VISIBLE) for a setting
    of ours. Refused before any file is written (IMAGE=all: the CUDA images' jobs neither)."""
    line = _refused(command, _env(rendered, tmp_path, IMAGE=image, GPUS="8"), capsys, tmp_path)
    assert "GPUS=8 asks GPUs of 2.13.0-cpu-debian12" in line and "a CPU image" in line, line
    assert "GPUS=0" in line and f"IMAGE={CUDA}" in line, line


@pytest.mark.parametrize("command", LAUNCHERS)
@pytest.mark.parametrize("bad", ["-1", "1.5", "8 GPUs", "abc", "\u0663", "1e3", "+2", "65", "0x8"])
def test_gpus_not_a_whole_number_from_0_is_refused(command, bad, rendered, tmp_path, capsys):
    """GPUS is a count (Slurm's gres count, Kubernetes' integer resource): anything else is one line naming GPUS."""
    line = _refused(command, _env(rendered, tmp_path, IMAGE=CUDA, GPUS=bad), capsys, tmp_path)
    assert line.startswith(f"error: GPUS={bad!r}: must be a whole number, 0 or more"), line


@pytest.mark.parametrize("command", LAUNCHERS)
def test_a_cpu_image_on_cpu_nodes_and_a_cuda_image_on_gpus_are_written(command, rendered, tmp_path, capsys):
    assert main([command], _env(rendered, tmp_path, GPUS="0")) == 0, capsys.readouterr().err
    assert main([command], _env(rendered, tmp_path, IMAGE=CUDA, GPUS="8")) == 0, capsys.readouterr().err


# ---- SQSH: what pyxis splits on ----

@pytest.mark.parametrize(("path", "named"), [("/shared/a,b/t.sqsh", "a comma (',')"),
                                             ("/shared/v1:2/t.sqsh", "a colon (':')"),
                                             ("/shared/t,old.sqsh", "a comma (',')")])
def test_a_sqsh_path_pyxis_would_split_is_refused_naming_the_character(path, named, rendered, tmp_path, capsys):
    """pyxis' argument syntax: --container-mounts=SRC:DST[:FLAGS][,...] splits on ',' and ':', and a squashfs path
    holding one reached enroot cut in two; make slurm said "sidecar not found" instead. Refused up front, naming the
    character and the fix (rename or move the file), before the sidecar is looked for."""
    line = _refused("slurm", _env(rendered, tmp_path, SQSH=path, LAUNCHER="pyxis"), capsys, tmp_path)
    assert f"SQSH={path!r} holds {named}" in line and "rename or move" in line and "not found" not in line, line


def test_the_pyxis_step_refuses_a_reports_folder_or_squashfs_pyxis_would_split(test_specs):
    """The paths only the submission knows ($PWD, TORCHIMAGES_REPORTS=, TORCHIMAGES_IMAGE=/x.sqsh) are checked in the
    script against pyxis' argument syntax, before the guard step; the other launchers take no pyxis arguments."""
    spec = next(s for s in test_specs if s.tag == CPU)
    text = slurm_script(Job(spec, "ghcr.io/acme/x:t", 2, 0, "pyxis"))
    guard = "\n".join(pyxis_path_guard())
    assert guard in text and text.index(guard) < text.index("srun --ntasks-per-node=1 --kill-on-bad-exit=1 bash -c")
    assert guard not in slurm_script(Job(spec, "x:t", 2, 0, "docker"))


@pytest.mark.host
@pytest.mark.parametrize(("reports", "image", "refused"), [
    ("/work/run,1/reports-7", "ghcr.io#acme/x:t", "the reports folder /work/run,1/reports-7 holds ','"),
    ("/work/a:b/reports-7", "ghcr.io#acme/x:t", "the reports folder /work/a:b/reports-7 holds ':'"),
    ("/work/reports-7", "/shared/x,y.sqsh", "the squashfs path /shared/x,y.sqsh holds ','"),
    ("/work/reports-7", "127.0.0.1:5000#acme/x:t", None),          # a registry reference's ':' is pyxis' own
])
def test_the_pyxis_guard_runs(reports, image, refused):
    script = "\n".join(["set -u", f"TORCHIMAGES_REPORTS='{reports}'", f"TORCHIMAGES_IMAGE='{image}'",
                        *pyxis_path_guard(), "echo passed"])
    proc = subprocess.run(["bash", "-c", script], capture_output=True, text=True, timeout=30, check=False)
    if refused is None:
        assert proc.returncode == 0 and proc.stdout.strip() == "passed", proc.stderr
    else:
        assert proc.returncode == 2 and refused in proc.stderr and proc.stderr.count("\n") == 1, proc.stderr
