"""Bad knobs, bad compat.yaml, engine-free faults: one line, exit 2, nothing written (issue 10)."""
from __future__ import annotations

import dataclasses
import json
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from scripts.cli import COMMANDS
from scripts.errors import UserError
from scripts.plan.compat import load_compat
from scripts.run_verify import VerifyOutcome, check_report, report_schemas, retire_reports
from scripts.settings import KNOB_ROWS, KNOBS, PATH_VARIABLES, Settings, key_dir
from scripts.tables import verify_summary
from tests.helpers import ROOT, TEST_COMPAT, TEST_MATRIX, assert_clean_failure, run_cli


@pytest.mark.unit
@pytest.mark.parametrize(("knob", "value", "needle"), [
    ("SHM_SIZE", "foo", "SHM_SIZE='foo' is not a size"),
    ("SHM_SIZE", "-1", "SHM_SIZE='-1' is not a size"),
    ("SHM_SIZE", "", "SHM_SIZE is empty"),
    ("VERIFY_TIMEOUT", "0", "VERIFY_TIMEOUT='0'"),
    ("VERIFY_TIMEOUT", "-1", "VERIFY_TIMEOUT='-1'"),
    ("VERIFY_TIMEOUT", "nan", "VERIFY_TIMEOUT='nan'"),
    ("VERIFY_TIMEOUT", "inf", "VERIFY_TIMEOUT='inf'"),
    ("VERIFY_TIMEOUT", "abc", "VERIFY_TIMEOUT='abc'"),
    ("VERIFY_ARGS", "--checks 'gpu", "VERIFY_ARGS="),
    ("WHEELS", "/nonexistent", "WHEELS: /nonexistent is not a folder"),
    ("REGISTRY", "Bad Registry/", "REGISTRY='Bad Registry/'"),
    ("KEEP_GOING", "maybe", "KEEP_GOING='maybe'"),
    ("NODES", "", "NODES is empty"),
    ("GPUS", "-1", "GPUS='-1': must be a whole number, 0 or more"),
    ("BENCH_ROUNDS", "0", "BENCH_ROUNDS='0'"),
    ("BENCH_ROUNDS", "²", "BENCH_ROUNDS='²': must be a whole number"),
    ("BENCH_RUNS", "٣", "BENCH_RUNS='٣': must be a whole number"),
    ("BENCH_RUNS", "", "BENCH_RUNS is empty"),
])
def test_a_bad_knob_is_one_line_naming_the_variable(knob, value, needle):
    knobs = (knob,)
    with pytest.raises(UserError) as info:
        Settings.load({knob: value}, {}, knobs)
    assert needle in str(info.value) and "\n" not in str(info.value)


@pytest.mark.unit
def test_knobs_are_parsed_only_for_the_commands_that_use_them():
    settings = Settings.load({"VERIFY_TIMEOUT": "abc", "KEEP_GOING": "false"}, {}, ("KEEP_GOING",))
    assert settings.keep_going is False and settings.verify_timeout == 900.0
    assert Settings.load({"KEEP_GOING": "1"}, {}, ("KEEP_GOING",)).keep_going is True
    assert Settings.load({"CA_CERT": "", "REGISTRY": ""}, {}, ("CA_CERT", "REGISTRY")).registry == ""


@pytest.mark.unit
def test_every_knob_row_sets_a_settings_field_and_every_command_knob_has_a_row():
    fields = {f.name for f in dataclasses.fields(Settings)}
    assert {row.field for row in KNOB_ROWS} <= fields and set(PATH_VARIABLES.values()) <= fields
    assert len(KNOBS) == len(KNOB_ROWS) and len({row.flag for row in KNOB_ROWS}) == len(KNOB_ROWS)
    assert {knob for command in COMMANDS for knob in command.knobs} <= set(KNOBS)


@pytest.mark.unit
@pytest.mark.parametrize("row", [row for row in KNOB_ROWS if row.empty_is_error], ids=lambda row: row.variable)
def test_an_empty_knob_with_a_default_is_refused_with_its_help(row):
    with pytest.raises(UserError) as info:
        Settings.load({row.variable: " "}, {}, (row.variable,))
    assert str(info.value) == f"{row.variable} is empty: unset it for the default, or give a value ({row.help})"


@pytest.mark.unit
def test_the_default_paths_are_the_settings_defaults():
    settings = Settings.load({}, {}, ())
    assert settings.build_dir == ROOT / "build" and settings.reports == ROOT / "reports"
    assert Settings.load({"HOME": "/h"}, {}, ()).key_dir == key_dir({"HOME": "/h"}) == Path("/h/.config/torchimages")
    assert Settings.load({"XDG_CONFIG_HOME": "/cfg"}, {}, ()).signing_key == Path("/cfg/torchimages/signing-key.pem")


@pytest.mark.host
@pytest.mark.parametrize(("command", "env", "needle"), [
    ("render", {"VERIFY_TIMEOUT": "abc", "NODES": ""}, None),
    ("verify", {"VERIFY_TIMEOUT": "nan"}, "VERIFY_TIMEOUT='nan'"),
    ("verify", {"IMAGE": ","}, "names no image"),
    ("build", {"IMAGE": ","}, "names no image"),
    ("slurm", {"IMAGE": ","}, "names no image"),
    ("build", {"WHEELS": "/nonexistent"}, "WHEELS: /nonexistent is not a folder"),
])
def test_the_cli_with_bad_knobs(tmp_path, rendered, scratch_env, command, env, needle):
    base = {**scratch_env, "IMAGES_DIR": str(rendered), "MATRIX": str(TEST_MATRIX), "COMPAT": str(TEST_COMPAT),
            "DOCKER_HOST": "tcp://127.0.0.1:9"}
    if command == "render":
        images = tmp_path / "fresh"
        proc = run_cli(command, env={**base, "IMAGES_DIR": str(images), **env})
        assert proc.returncode == 0, proc.stderr
        return
    proc = run_cli(command, env={**base, **env}, timeout=120)
    assert_clean_failure(proc, needle, code=2)
    assert len(proc.stderr.strip().splitlines()) == 1


def _compat_with(tmp_path: Path, old: str, new: str) -> Path:
    text = TEST_COMPAT.read_text()
    assert old in text
    path = tmp_path / "compat.yaml"
    path.write_text(text.replace(old, new, 1))
    return path


@pytest.mark.unit
@pytest.mark.parametrize(("old", "new", "needle"), [
    ('cudnn: "9.26.0.51"', "cudnn: null", "torch.2.15.0.builds.13.2.cudnn: None is not of type 'string'"),
    ('toolkit: "13.2.2"', "toolkit: 13.2", 'write it quoted, "13.2"'),
    ("index: cu126,", "index: cu999,", "unknown index 'cu999'"),
    ('devel_image: "nvidia/cuda:13.2.1-cudnn-devel-{distro}"', 'devel_image: "nvidia/cuda:13.2.1-{distr}"', "devel_image"),
    ("  debian13:", '  "../evil":', "'../evil'"),
])
def test_compat_yaml_is_validated_with_lines(tmp_path, old, new, needle):
    with pytest.raises(UserError) as info:
        load_compat(_compat_with(tmp_path, old, new))
    assert needle in str(info.value) and "compat.yaml:" in str(info.value)


@pytest.mark.unit
def test_reports_are_checked_against_the_schema_before_they_are_accepted():
    schemas = report_schemas(ROOT / "verify")
    assert schemas, "verify/report.schema*.json"
    for data, needle in ((b'{"checks": [', "not JSON"), (b"[1]", "not a JSON object"),
                         (b'{"hello": 1}', "does not match its schema")):
        with pytest.raises(UserError, match=needle):
            check_report(data, schemas)


@pytest.mark.unit
def test_a_previous_report_never_survives_a_new_run(tmp_path):
    for suffix in (".json", ".xml"):
        (tmp_path / f"t{suffix}").write_text("stale pass")
    (tmp_path / "other.json").write_text("kept")
    retire_reports(tmp_path, "t")        # a run without a whole report: the old one is set aside, never current
    assert sorted(p.name for p in tmp_path.iterdir()) == ["other.json", "t.previous.json", "t.previous.xml"]


@pytest.mark.unit
def test_the_summary_columns_come_from_the_reports():
    outcomes = [VerifyOutcome("a", 0, 1.0, {"gpu": "skip", "vision": "pass"}),
                VerifyOutcome("b", None, 0.0, problem="the Docker Engine failed while verifying b: 500 Server Error")]
    table = verify_summary(outcomes)
    header = table.splitlines()[0].split()
    assert header[2:4] == ["gpu", "vision"] and "NOT RUN" in table
    assert "b: the Docker Engine failed" in table


@pytest.mark.host
def test_two_renders_at_once_and_a_killed_one_leave_a_whole_images_folder(tmp_path, scratch_env, test_specs):
    images = tmp_path / "images"
    env = {**scratch_env, "IMAGES_DIR": str(images), "MATRIX": str(TEST_MATRIX), "COMPAT": str(TEST_COMPAT)}
    (images / "junk").mkdir(parents=True)
    (images / "junk.txt").write_text("x")
    procs = [subprocess.Popen([sys.executable, "-m", "scripts", "render"], cwd=ROOT, env={**__import__("os").environ, **env},
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for _ in range(3)]
    results = [p.communicate(timeout=120) for p in procs]
    assert [p.returncode for p in procs] == [0, 0, 0], results
    expected = sorted(s.tag for s in test_specs)
    assert sorted(p.name for p in images.iterdir()) == expected
    for _ in range(3):    # kill -9 and Ctrl-C at random moments: the folder is always the old or the new set
        proc = subprocess.Popen([sys.executable, "-m", "scripts", "render"], cwd=ROOT,
                                env={**__import__("os").environ, **env}, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        time.sleep(0.4)
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=60)
        assert b"Traceback" not in err
        assert sorted(p.name for p in images.iterdir()) == expected
        proc = subprocess.Popen([sys.executable, "-m", "scripts", "render"], cwd=ROOT,
                                env={**__import__("os").environ, **env}, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(0.5)
        proc.kill()
        proc.wait()
        assert sorted(p.name for p in images.iterdir()) == expected
    assert run_cli("render", env=env).returncode == 0
    assert not list(tmp_path.glob(".render-*")) and not list((tmp_path / "build").glob(".render-images-*"))
    assert json.loads((images / expected[0] / "spec.json").read_text())["tag"] == expected[0]
    shutil.rmtree(images)
