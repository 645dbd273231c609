"""Defaults that pass (issue 37, item 4): the GPU count from the image, no job naming an image no registry holds,
a typo's closest tag, the locks a render made stale, a lock never called stale once written, the previous report
kept until a whole new one lands and an interrupted run's partial one brought back, one line per build step, and
WHEELS= named before a build that has no torch to install. Pure logic; the engine is a recorded stand-in."""
from __future__ import annotations

import json
from types import SimpleNamespace

import pytest

from scripts.builder.lock.read import LockIssue, LockProblem
from scripts.builder.lock.resolve import refreshed_line
from scripts.builder.progress import StepLines, torch_source_problem
from scripts.cli import main
from scripts.errors import UserError
from scripts.fleet.cluster import default_gpus, local_name_refusal, unpushed_refusal
from scripts.render import select, unknown_image
from scripts.run_verify import partial_name, retire_reports, salvage_partial
from scripts.settings import Settings
from tests.helpers import TEST_COMPAT, TEST_MATRIX

pytestmark = pytest.mark.unit


def test_the_gpu_count_comes_from_the_image_unless_given(test_specs):
    cpu = next(s for s in test_specs if not s.cuda)
    cuda = next(s for s in test_specs if s.cuda)
    assert (default_gpus(cpu, None), default_gpus(cuda, None)) == (0, 1)
    assert (default_gpus(cpu, 0), default_gpus(cuda, 0), default_gpus(cuda, 8)) == (0, 0, 8)
    with pytest.raises(UserError, match="a CPU image"):        # GPUs its torch cannot use: tests/test_launch_inputs.py
        default_gpus(cpu, 2, test_specs)


def test_gpus_unset_or_empty_means_from_the_image_and_a_bad_count_names_the_knob():
    assert Settings.load({}, {}, ["GPUS"]).gpus is None
    assert Settings.load({"GPUS": ""}, {}, ["GPUS"]).gpus is None       # the Makefile exports GPUS= empty
    assert Settings.load({"GPUS": "0"}, {}, ["GPUS"]).gpus == 0
    with pytest.raises(UserError, match="GPUS='x'"):
        Settings.load({"GPUS": "x"}, {}, ["GPUS"])


def test_a_job_naming_an_image_no_registry_holds_is_refused_in_one_line_naming_the_knobs():
    line = local_name_refusal("torchimages:2.13.0-cpu-debian12", "", False, "pyxis")
    assert "no registry holds torchimages:2.13.0-cpu-debian12" in line and "REGISTRY=" in line
    assert "LOCAL_IMAGE=1" in line and "\n" not in line
    assert local_name_refusal("x:t", "", False, "kubernetes") and local_name_refusal("x:t", "", False, "docker")
    assert local_name_refusal("ghcr.io/acme/x:t", "ghcr.io/acme", False, "pyxis") == ""
    assert local_name_refusal("x:t", "", True, "pyxis") == ""
    assert local_name_refusal("x:t", "", False, "none") == "" and local_name_refusal("x:t", "", False, "oci") == ""


def test_a_registry_tag_make_push_did_not_record_is_refused_in_one_line_naming_make_push():
    args = ("2.13.0-cpu-debian12", "127.0.0.1:5000/torchimages:2.13.0-cpu-debian12", "127.0.0.1:5000")
    line = unpushed_refusal(*args, None, "reports/push/pushed.json", False, "pyxis")
    assert line.startswith("2.13.0-cpu-debian12 was not pushed to REGISTRY=127.0.0.1:5000 (reports/push/pushed.json "
                           "records no digest of it): run `make push IMAGE=2.13.0-cpu-debian12 REGISTRY=127.0.0.1:5000`")
    assert "UNPINNED=1" in line and "\n" not in line
    elsewhere = unpushed_refusal(*args, "ghcr.io/acme/torchimages@sha256:ab", "pushed.json", False, "kubernetes")
    assert "pushed.json has it pushed as ghcr.io/acme/torchimages@sha256:ab" in elsewhere
    assert unpushed_refusal(*args, None, "pushed.json", True, "pyxis") == ""          # asked for: UNPINNED=1
    assert unpushed_refusal(*args, None, "pushed.json", False, "none") == ""          # a venv: no image pulled
    assert unpushed_refusal(args[0], args[0], "", None, "pushed.json", False, "docker") == ""   # no REGISTRY: not this rule


def test_make_slurm_with_a_registry_pins_the_pushed_digest_or_refuses(rendered, tmp_path, capsys):
    tag, digest = "2.13.0-cpu-debian12", "sha256:" + "cd" * 32
    base = {"IMAGES_DIR": str(rendered), "BUILD_DIR": str(tmp_path / "b"), "REPORTS_DIR": str(tmp_path / "r"),
            "IMAGE": tag, "REGISTRY": "127.0.0.1:5000"}
    for command in ("slurm", "isolate", "k8s-verify"):
        assert main([command], {**base, "NODES": "2"}) == 2, command
        error = capsys.readouterr().err
        assert "was not pushed to REGISTRY=127.0.0.1:5000" in error and f"make push IMAGE={tag} REGISTRY=127.0.0.1:5000" in error
        assert error.count("\n") == 1 and "Traceback" not in error
    assert not (tmp_path / "b").exists() or not list((tmp_path / "b").rglob("*.sbatch"))
    record = tmp_path / "r" / "push" / "pushed.json"
    record.parent.mkdir(parents=True)
    record.write_text(json.dumps({tag: {"reference": f"127.0.0.1:5000/testimages@{digest}", "digest": digest}}))
    assert main(["slurm"], base) == 0
    assert "the digest make push recorded" in capsys.readouterr().out
    assert f"127.0.0.1:5000#testimages@{digest}" in next((tmp_path / "b" / "slurm").glob("*.sbatch")).read_text()
    assert main(["slurm"], {**base, "REGISTRY": "ghcr.io/acme"}) == 2          # pushed, but elsewhere
    assert f"has it pushed as 127.0.0.1:5000/testimages@{digest}" in capsys.readouterr().err
    assert main(["slurm"], {**base, "REGISTRY": "ghcr.io/acme", "UNPINNED": "1"}) == 0
    assert "UNPINNED=1: the tag, no digest" in capsys.readouterr().out


def test_make_slurm_and_k8s_defaults_write_a_job_that_can_pass(rendered, tmp_path, capsys):
    base = {"IMAGES_DIR": str(rendered), "BUILD_DIR": str(tmp_path / "b"), "REPORTS_DIR": str(tmp_path / "r"),
            "IMAGE": "2.13.0-cpu-debian12"}
    assert main(["slurm"], base) == 2
    assert "REGISTRY=" in capsys.readouterr().err
    assert main(["slurm"], {**base, "REGISTRY": "127.0.0.1:5000", "UNPINNED": "1"}) == 0
    script = next((tmp_path / "b" / "slurm").glob("*.sbatch")).read_text()
    assert "--expect-gpus 0" in script and "--gres=gpu" not in script
    assert main(["k8s-verify"], {**base, "LOCAL_IMAGE": "1", "NODES": "2"}) == 0
    manifest = next((tmp_path / "b" / "k8s").glob("*.yaml")).read_text()
    assert "nvidia.com/gpu" not in manifest and "image: testimages:2.13.0-cpu-debian12" in manifest
    cuda = {**base, "IMAGE": "2.15.0-cuda13.2-cudnn9-runtime-debian12"}
    assert main(["slurm"], {**cuda, "REGISTRY": "127.0.0.1:5000", "GPUS": "2", "UNPINNED": "1"}) == 0
    assert "--expect-gpus 2" in next((tmp_path / "b" / "slurm").glob("verify-2-15*.sbatch")).read_text()


def test_a_typo_in_image_gets_the_closest_tag(test_specs):
    with pytest.raises(UserError) as typo:
        select(test_specs, "2.13.0-cpu-debain12")
    assert str(typo.value).startswith("unknown image 2.13.0-cpu-debain12; did you mean IMAGE=2.13.0-cpu-debian12?")
    assert "did you mean" not in unknown_image(["zzz"], ["2.13.0-cpu-debian12"])
    assert "one of: 2.13.0-cpu-debian12" in unknown_image(["zzz"], ["2.13.0-cpu-debian12"])


def test_render_names_the_locks_it_made_stale(tmp_path, capsys):
    env = {"MATRIX": str(TEST_MATRIX), "COMPAT": str(TEST_COMPAT), "IMAGES_DIR": str(tmp_path / "images"),
           "BUILD_DIR": str(tmp_path / "build")}
    assert main(["render"], env) == 0
    out = capsys.readouterr().out
    assert "lock(s) no longer match matrix.yaml" in out and "run `make lock IMAGE=" in out
    assert "images/2.13.0-cpu-debian12/requirements.lock (missing" in out


def test_a_lock_just_written_is_never_called_stale():
    for problem in (None, LockProblem(LockIssue.STALE, "stale (inputs changed)"),
                    LockProblem(LockIssue.MISSING, "missing"), LockProblem(LockIssue.NO_HASH, "no hash")):
        line = refreshed_line(12, problem)
        assert line.startswith("12 pins, written and current") and "stale" not in line


def test_a_run_without_a_whole_report_sets_the_previous_one_aside(tmp_path):
    (tmp_path / "t.json").write_text('{"status": "pass"}')
    (tmp_path / "t.xml").write_text("<testsuite/>")
    (tmp_path / "other.json").write_text("{}")
    moved = retire_reports(tmp_path, "t")
    assert [p.name for p in moved] == ["t.previous.json", "t.previous.xml"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["other.json", "t.previous.json", "t.previous.xml"]
    assert (tmp_path / "t.previous.json").read_text() == '{"status": "pass"}'
    assert retire_reports(tmp_path, "t") == []


class RecordingContainer:
    """The engine's container, recorded: what was run in it; `cat` of the report answers `report`."""

    def __init__(self, report: bytes | None) -> None:
        self.report = report
        self.argv: list[list[str]] = []

    def exec_run(self, argv, **kwargs):
        self.argv.append(argv)
        if argv[0] == "cat":
            return SimpleNamespace(exit_code=0 if self.report else 1, output=self.report or b"")
        return SimpleNamespace(exit_code=0, output=b"")


def test_an_interrupted_run_brings_back_its_partial_report(tmp_path):
    report = json.dumps({"status": "fail", "checks": [{"name": "shm", "code": "INTERRUPTED"}]}).encode()
    container, said = RecordingContainer(report), list[str]()
    path = salvage_partial(container, tmp_path, "t", said.append)
    assert path is not None and path == tmp_path / partial_name("t") == tmp_path / "t.partial.json"
    assert path.read_bytes() == report and "partial report kept as" in said[0]
    assert container.argv[0][:2] == ["python3", "-c"] and "SIGTERM" in container.argv[0][2]
    compile(container.argv[0][2], "salvage", "exec")                    # the program sent is valid Python
    assert salvage_partial(RecordingContainer(None), tmp_path, "u", said.append) is None
    assert not (tmp_path / "u.partial.json").exists()


BUILDKIT = """\
#0 building with "default" instance using docker driver
#1 [internal] load build definition from Dockerfile
#1 transferring dockerfile: 4.2kB done
#1 DONE 0.0s
#5 [base 1/3] FROM docker.io/library/debian:12
#5 CACHED
#9 [builder 3/9] RUN --mount=type=cache,target=/root/.cache uv pip install -r /tmp/requirements.lock
#9 0.512 Resolved 40 packages in 12ms
#9 3.1 Installed 40 packages in 2.01s
#9 DONE 14.3s
#11 [builder 4/9] RUN pip check
#11 0.4 ERROR: torch 2.13.0 has requirement sympy, which is not installed.
#11 ERROR: process "/bin/sh -c pip check" did not complete successfully: exit code: 1
"""


def test_the_build_shows_one_line_per_step_not_every_run_line():
    steps = StepLines()
    shown = [line for line in map(steps.line, BUILDKIT.splitlines()) if line is not None]
    assert shown == [
        "[base 1/3] FROM docker.io/library/debian:12  cached",
        "[builder 3/9] RUN --mount=type=cache,target=/root/.cache uv pip install -r /tmp/requirements.lock  done 14.3s",
        '[builder 4/9] RUN pip check  ERROR: process "/bin/sh -c pip check" did not complete successfully: exit code: 1']


def test_no_torch_wheel_and_no_index_names_wheels_before_the_build():
    asked: list[str] = []

    def down(url: str) -> bool:
        asked.append(url)
        return False
    line = torch_source_problem("2.13.0-cpu-debian12", "torch==2.13.0+cpu", "https://download.pytorch.org/whl/cpu",
                                False, [], down)
    assert line and "WHEELS=" in line and "download.pytorch.org/whl/cpu does not answer" in line
    assert "no wheel folder given" in line and asked == ["https://download.pytorch.org/whl/cpu"]
    assert torch_source_problem("t", "torch==1", "https://x", True, ["/w"], down) is None       # a local wheel
    assert torch_source_problem("t", "torch==1", "https://x", False, [], lambda url: True) is None
    assert torch_source_problem("t", "torch==1", "", False, [], down) is None                   # PyPI's torch


def test_docs_codes_splice_keeps_the_text_around_the_table():
    from scripts.docs import BEGIN, END, splice
    text = f"head\n{BEGIN}\nold\n{END}\ntail\n"
    assert splice(text, "| code |\n") == f"head\n{BEGIN}\n| code |\n{END}\ntail\n"
    with pytest.raises(UserError, match="markers"):
        splice("no markers", "x")
