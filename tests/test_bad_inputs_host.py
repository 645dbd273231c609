"""Issue 21, the host side: locks checked against the spec, settings that mean what the engine will do, Makefile
variables that never reach a shell as code, `make clean` that removes only generated folders, a FIFO as --matrix,
the access launchers' strict numbers and files, no /wheels left in images, the small dataloader sweep under
emulation. Every bad input is one line and a non-zero exit, never a traceback."""
from __future__ import annotations

import dataclasses
import hashlib
import os
import shutil
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

from scripts.builder.lock import (
    DIGEST_LINE,
    LockIssue,
    check_locks,
    input_digest,
    lock_content_problem,
    lock_problem,
    requirements,
    stage_for_build,
    stage_locked_wheels,
)
from scripts.cli import main
from scripts.errors import UserError, one_line
from scripts.plan.platforms import NATIVE_NAME
from scripts.plan.spec import Target
from scripts.render import LOCK_NAME, load_rendered, render_dockerfile
from scripts.settings import SHM_MAX, SHM_MIN, Settings, engine_bytes, parse_count, parse_seconds, parse_size
from tests.helpers import ROOT, assert_clean_failure, load_launcher, run_cli

BIN = ROOT / "rootfs" / "access" / "usr" / "local" / "bin"
SHIPPED = {s.tag: s for s in load_rendered(ROOT / "images")}
CPU_TAG = "2.13.0-cpu-debian12"
H = "    --hash=sha256:" + "a" * 64


# ---- locks checked against the spec (item 4) ----

def _cpu_lock() -> str:
    return Target(SHIPPED[CPU_TAG], NATIVE_NAME).lock_path(ROOT / "images").read_text(encoding="utf-8")


def _mutations(text: str) -> dict[str, tuple[str, LockIssue]]:
    return {
        "torch pinned at another release": (text.replace("torch==2.13.0+cpu", "torch==2.14.1+cpu"), LockIssue.WRONG_PIN),
        "torch without its local version": (text.replace("torch==2.13.0+cpu", "torch==2.13.0"), LockIssue.WRONG_PIN),
        "an extra top-level package": (text + f"six==1.17.0 \\\n{H}\n", LockIssue.EXTRA_PIN),
        "an extra package claiming -r": (text + f"six==1.17.0 \\\n{H}\n    # via -r requirements.in\n", LockIssue.EXTRA_PIN),
        "no numpy pin": (text.replace("numpy==2.4.6 \\", "numpyx==2.4.6 \\"), LockIssue.MISSING_PIN),
        "a duplicate pin": (text + f"numpy==2.4.6 \\\n{H}\n", LockIssue.DUPLICATE),
        "a marker that skips torch": (text.replace("torch==2.13.0+cpu \\", 'torch==2.13.0+cpu ; python_version < "3" \\'),
                                      LockIssue.MARKER_EXCLUDES),
        "a pin without hashes": (text + "zzz==1.0\n", LockIssue.NO_HASH),
        "a hash that is no sha256": (text.replace("--hash=sha256:", "--hash=md5:", 1), LockIssue.NO_HASH),
        "a range instead of a pin": (text.replace("numpy==2.4.6", "numpy>=2.4.6"), LockIssue.NOT_EXACT),
        "an index option": ("--index-url http://elsewhere/simple\n" + text, LockIssue.MALFORMED),
        "a line that is no requirement": (text + "%%% not a requirement\n", LockIssue.MALFORMED),
    }


@pytest.mark.unit
def test_the_shipped_locks_are_what_their_specs_ask_for():
    for spec in SHIPPED.values():
        for platform in spec.platforms:
            assert lock_problem(Target(spec, platform), ROOT / "images") is None, (spec.tag, platform)


@pytest.mark.unit
@pytest.mark.parametrize("case", list(_mutations("")))
def test_each_lock_mutation_is_caught_with_its_kind_and_line(case):
    spec = SHIPPED[CPU_TAG]
    text, kind = _mutations(_cpu_lock())[case]
    problem = lock_content_problem(Target(spec, NATIVE_NAME), text)
    assert problem is not None and problem.kind is kind, (case, problem)
    assert "\n" not in problem.detail and problem.detail.startswith("not what the spec asks for: ")


@pytest.mark.host
def test_check_render_says_it_checked_the_locks_too(tmp_path):
    """A newcomer read `images/ matches a fresh render` and could not tell the locks were checked (they are)."""
    proc = run_cli("render", "--check", env={"BUILD_DIR": str(tmp_path / "build")}, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert "images/ matches a fresh render and every requirements.lock its image's inputs" in proc.stdout


@pytest.mark.host
def test_check_render_names_the_first_difference_and_stage_wheels_refuses(tmp_path):
    images = tmp_path / "images"
    shutil.copytree(ROOT / "images", images)
    lock = images / CPU_TAG / LOCK_NAME
    lock.write_text(lock.read_text().replace("torch==2.13.0+cpu", "torch==2.14.1+cpu"))
    env = {"IMAGES_DIR": str(images), "BUILD_DIR": str(tmp_path / "build")}
    proc = run_cli("render", "--check", env=env, timeout=300)
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    assert f"{CPU_TAG}/requirements.lock (not what the spec asks for: wrong pin, line" in proc.stderr
    assert "torch is pinned 2.14.1+cpu; the spec asks for torch==2.13.0+cpu" in proc.stderr
    with pytest.raises(UserError, match="wrong pin"):
        stage_for_build(Target(SHIPPED[CPU_TAG], NATIVE_NAME), images, [], tmp_path / "stage", tmp_path / "uv")


@pytest.mark.unit
def test_make_lock_does_not_call_a_tampered_lock_current(tmp_path):
    spec = SHIPPED[CPU_TAG]
    (tmp_path / spec.tag).mkdir()
    (tmp_path / spec.tag / LOCK_NAME).write_text(_cpu_lock() + f"six==1.17.0 \\\n{H}\n")
    problems = check_locks([spec], tmp_path, print)
    assert len(problems) == 1 and "extra pin" in problems[0] and "six" in problems[0]


@pytest.mark.unit
def test_stage_wheels_says_when_a_local_wheels_hash_differs_from_the_lock(tmp_path):
    spec = SHIPPED[CPU_TAG]
    src = tmp_path / "src"
    src.mkdir()
    wheel = src / "numpy-2.4.6-cp311-cp311-manylinux_2_28_x86_64.whl"
    wheel.write_bytes(b"a rebuilt numpy")
    lock = f"numpy==2.4.6 \\\n    --hash=sha256:{'0' * 64}\n"
    said: list[str] = []
    staged, covered = stage_locked_wheels(Target(spec, NATIVE_NAME), lock, [src], tmp_path / "out", warn=said.append, label="the test lock")
    assert staged == [] and not covered
    assert len(said) == 1 and str(wheel) in said[0] and "not one of the hashes the test lock pins" in said[0]
    assert hashlib.sha256(b"a rebuilt numpy").hexdigest()[:16] in said[0] and "\n" not in said[0]
    good = f"numpy==2.4.6 \\\n    --hash=sha256:{hashlib.sha256(b'a rebuilt numpy').hexdigest()}\n"
    said.clear()
    assert stage_locked_wheels(Target(spec, NATIVE_NAME), good, [src], tmp_path / "out2", warn=said.append)[0] == [wheel.name] and not said


@pytest.mark.unit
def test_a_lock_that_is_no_regular_text_is_a_kind(tmp_path):
    spec = SHIPPED[CPU_TAG]
    (tmp_path / spec.tag).mkdir()
    path = tmp_path / spec.tag / LOCK_NAME
    path.write_bytes(b"\xff\xfe")
    assert getattr(lock_problem(Target(spec, NATIVE_NAME), tmp_path), "kind", None) is LockIssue.NOT_UTF8
    path.write_text(f"{DIGEST_LINE}{input_digest(Target(spec, NATIVE_NAME))}\n")
    assert getattr(lock_problem(Target(spec, NATIVE_NAME), tmp_path), "kind", None) is LockIssue.MISSING_PIN
    path.write_text(f"{DIGEST_LINE}{input_digest(Target(dataclasses.replace(spec, python='3.12'), NATIVE_NAME))}\n")
    assert getattr(lock_problem(Target(spec, NATIVE_NAME), tmp_path), "kind", None) is LockIssue.STALE
    assert requirements(spec)[0].startswith("torch==")


# ---- settings (item 5) ----

@pytest.mark.unit
@pytest.mark.parametrize(("value", "needle"), [
    ("0.5b", "0 B as Docker reads it"), ("0", "0 B as Docker reads it"), ("512k", "512 KiB as Docker reads it"),
    ("2GiB", "(write 2g)"), ("1t", "(write 1024g)"), ("1.5TB", "(write 1536g)"), ("20000g", "from 1m to 16384g"),
    ("nan", "is not a size Docker reads"), ("infg", "is not a size Docker reads"), ("nang", "is not a size Docker reads"),
    ("-1g", "is not a size Docker reads"), ("1e400", "is not a size Docker reads"), ("12q", "is not a size"), ("", "is not a size"),
    ("g", "is not a size"), ("²g", "is not a size"),
    # docker-py's int() reads other scripts' digits and underscores; a size is written in ASCII digits
    ("\u0661g", "ASCII digits"), ("\uff11g", "ASCII digits"), ("1_0g", "ASCII digits"), ("\u0662\u0660\u0664\u0668", "ASCII digits"),
])
def test_sizes_docker_py_refuses_or_that_mean_nothing_are_refused(value, needle):
    with pytest.raises(UserError) as info:
        parse_size(value, "SHM_SIZE")
    message = one_line(str(info.value))
    assert message.startswith(f"SHM_SIZE={value!r}") and needle in message


@pytest.mark.unit
@pytest.mark.parametrize(("value", "size"), [
    ("2g", 2 << 30), ("2G", 2 << 30), ("2gb", 2 << 30), ("512m", 512 << 20), ("1073741824", 1 << 30),
    (" 2g ", 2 << 30), ("1.5g", 3 << 29), ("1048576b", 1 << 20), ("1e9", 10 ** 9),
])
def test_accepted_sizes_are_what_docker_py_sends(value, size):
    accepted = parse_size(value, "SHM_SIZE")
    from docker.utils import parse_bytes
    assert parse_bytes(accepted) == engine_bytes(accepted) == size and SHM_MIN <= size <= SHM_MAX


@pytest.mark.unit
@pytest.mark.parametrize(("knob", "value", "needle"), [
    ("VERIFY_TIMEOUT", "1e10", "VERIFY_TIMEOUT='1e10' is not a number of seconds: give a number from 1 to 604800"),
    ("VERIFY_TIMEOUT", "\u0669\u0660\u0660", "is not a number of seconds"),       # Arabic-Indic digits: ASCII only
    ("VERIFY_TIMEOUT", "1_000", "is not a number of seconds"),
    ("VERIFY_TIMEOUT", "0.5", "VERIFY_TIMEOUT='0.5'"),
    ("NODES", "9" * 5000, "must be a whole number, 1 or more (at most 10000)"),
    ("GPUS", "65", "GPUS='65': must be a whole number, 0 or more (at most 64)"),
    ("REGISTRY_INSECURE", "maybe", "REGISTRY_INSECURE='maybe' is not a yes/no word"),
    ("KEEP_GOING", "maybe", "KEEP_GOING='maybe' is not a yes/no word"),
])
def test_bounded_knobs_are_one_line(knob, value, needle):
    with pytest.raises(UserError) as info:
        Settings.load({knob: value}, {}, (knob,))
    assert needle in str(info.value) and "\n" not in str(info.value)


@pytest.mark.unit
def test_registry_insecure_is_parsed_only_by_the_commands_that_talk_to_a_registry():
    assert Settings.load({"REGISTRY_INSECURE": "maybe"}, {}, ()).registry_insecure is False      # render: not read
    assert Settings.load({"REGISTRY_INSECURE": "yes"}, {}, ("REGISTRY_INSECURE",)).registry_insecure is True
    assert Settings.load({"REGISTRY_INSECURE": ""}, {}, ("REGISTRY_INSECURE",)).registry_insecure is False


@pytest.mark.unit
def test_seconds_and_counts_at_their_bounds():
    assert parse_seconds("604800", "T") == 604800.0 and parse_seconds("1", "T") == 1.0
    assert parse_count("10000", "NODES") == 10000 and parse_count(" 3 ", "GPUS") == 3


@pytest.mark.unit
def test_a_newline_in_a_variable_stays_one_line(tmp_path, capsys):
    code = main(["k8s-verify"], {"IMAGE": "no\nsuch\x1bimage", "BUILD_DIR": str(tmp_path)})
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and "no\\nsuch\\x1bimage" in err


@pytest.mark.unit
def test_a_multiline_user_error_keeps_its_lines_but_escapes_controls():
    assert UserError("a\nb\x1b", multiline=True).shown() == "a\nb\\x1b"
    assert UserError("a\nb").shown() == "a\\nb"


# ---- Makefile variables and make clean (item 5) ----

def _clean(env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["sh", str(ROOT / "scripts" / "clean.sh")], env={**os.environ, **env}, capture_output=True,
                          text=True, timeout=60, check=False, cwd=ROOT)


@pytest.mark.host
@pytest.mark.parametrize(("build_dir", "needle"), [
    ("build images", "holds a space or a control character"),
    ("images", "holds files the repository tracks"),
    (".", "is the checkout or a folder above it"),
    ("..", "is the checkout or a folder above it"),
    ("build\nimages", "holds a space or a control character"),
])
def test_make_clean_refuses_what_the_project_does_not_generate(build_dir, needle):
    proc = _clean({"BUILD_DIR": build_dir, "REPORTS_DIR": "reports"})
    assert proc.returncode == 2 and needle in proc.stderr and proc.stderr.count("\n") == 1, proc.stderr
    assert (ROOT / "images" / CPU_TAG / "Dockerfile").is_file()


@pytest.mark.host
def test_make_clean_outside_the_checkout_removes_only_generated_folders(tmp_path):
    ours, theirs = tmp_path / "ours", tmp_path / "theirs"
    (ours / "logs").mkdir(parents=True)
    (ours / "docker-bake.json").write_text("{}")
    (theirs / "logs").mkdir(parents=True)
    (theirs / "thesis.tex").write_text("years of work")
    proc = _clean({"BUILD_DIR": str(theirs), "REPORTS_DIR": str(tmp_path / "none")})
    assert proc.returncode == 2 and "holds thesis.tex" in proc.stderr and (theirs / "thesis.tex").exists()
    proc = _clean({"BUILD_DIR": str(ours), "REPORTS_DIR": str(tmp_path / "none")})
    assert proc.returncode == 0 and not ours.exists(), proc.stderr


@pytest.mark.host
def test_make_never_runs_a_variable_as_shell_code(tmp_path):
    if shutil.which("make") is None or not (ROOT / ".venv" / "bin" / "python").exists():
        pytest.skip("needs make and the project venv")
    marker = tmp_path / "ran"
    proc = subprocess.run(["make", "--no-print-directory", "ci-matrix", f"PER=x; touch {marker}"], cwd=ROOT,
                          capture_output=True, text=True, timeout=300, check=False)
    assert proc.returncode != 0 and not marker.exists(), proc.stdout + proc.stderr
    proc = subprocess.run(["make", "--no-print-directory", "-n", "bench", f"BENCH_SIZE=1g; touch {marker}"], cwd=ROOT,
                          capture_output=True, text=True, timeout=60, check=False)
    assert '--size "$BENCH_SIZE"' in proc.stdout and not marker.exists()


# ---- a FIFO as --matrix (item 4 of the list: render must not hang) ----

@pytest.mark.host
def test_a_fifo_as_the_matrix_is_one_line_not_a_hang(tmp_path):
    fifo = tmp_path / "matrix.yaml"
    os.mkfifo(fifo)
    env = {"IMAGES_DIR": str(tmp_path / "images"), "BUILD_DIR": str(tmp_path / "build")}
    proc = run_cli("--matrix", str(fifo), "render", env=env, timeout=120)
    assert_clean_failure(proc, "is a FIFO (named pipe), not a regular file", code=2)
    assert not (tmp_path / "images").exists()
    proc = run_cli("--matrix", "/dev/null", "render", env=env, timeout=120)
    assert_clean_failure(proc, "is a character device, not a regular file", code=2)


# ---- leftovers (item 5 of the list) ----

@pytest.mark.unit
def test_no_image_keeps_the_wheels_mount_point():
    for spec in SHIPPED.values():
        text = render_dockerfile(spec)
        image_stage = text.split(" AS image\n", 1)[1]
        assert "rmdir --ignore-fail-on-non-empty /wheels" in image_stage, spec.tag
        assert (ROOT / "images" / spec.tag / "Dockerfile").read_text() == text


# ---- the dataloader check under emulation (item 6 of the list) ----

@pytest.mark.unit
def test_the_dataloader_check_sweeps_small_under_emulation(monkeypatch):
    from verify import environment
    from verify.checks.dataloader import check
    from verify.shared import dataloader as dl
    assert check.sizes_for(False) is dl.QUICK and check.sizes_for(True) is dl.EMULATED
    small, quick = dl.EMULATED, dl.QUICK
    assert small.samples * small.epochs * small.image_size ** 2 < quick.samples * quick.epochs * quick.image_size ** 2 / 16
    assert not small.variants and small.max_workers is not None and small.max_workers <= 2
    seen: list[object] = []
    monkeypatch.setattr(environment, "emulation", lambda: {"emulated": True, "machine": "aarch64"})
    def probe(sizes):
        seen.append(sizes)
        return {"measurements": [], "backend": "numpy"}
    monkeypatch.setattr(dl, "probe", probe)
    monkeypatch.setattr(dl, "recommend", lambda facts: {})
    facts = check.probe(None)  # type: ignore[arg-type]
    assert seen == [dl.EMULATED] and facts["emulated"] is True


# ---- the access launchers (item 6 of the issue), run directly ----

def _jupyter_start() -> ModuleType:
    return load_launcher("jupyter-start")


def _fails(capsys, call, *needles: str) -> None:
    with pytest.raises(SystemExit) as info:
        call()
    err = capsys.readouterr().err
    assert info.value.code == 2 and err.count("\n") == 1 and "Traceback" not in err, err
    for needle in needles:
        assert needle in err, err


@pytest.mark.unit
@pytest.mark.parametrize("value", ["²", "abc", "0", "65536", "8888 ", "-1", "1" * 5000, "0x1f90"])
def test_jupyter_port_is_read_strictly(value, capsys):
    js = _jupyter_start()
    _fails(capsys, lambda: js.port_of(value, "JUPYTER_PORT"), "JUPYTER_PORT=", "is not a port number")


@pytest.mark.unit
@pytest.mark.parametrize("value", ["abc", "nan", "inf", "-5", "0", "1e9", "3601", "²", ""])
def test_jupyter_start_timeout_is_read_strictly(value, capsys):
    js = _jupyter_start()
    _fails(capsys, lambda: js.seconds_of(value, "JUPYTER_START_TIMEOUT"), "JUPYTER_START_TIMEOUT=", "from 1 to 3600")
    assert js.seconds_of("180", "X") == 180.0 and js.seconds_of(" 3600 ", "X") == 3600.0


@pytest.mark.unit
def test_the_token_file_is_bounded_regular_and_utf8(tmp_path, capsys):
    js = _jupyter_start()
    _fails(capsys, lambda: js.read_token_file("/dev/zero"), "/dev/zero is not a regular file")
    _fails(capsys, lambda: js.read_token_file(str(tmp_path)), "is not a regular file")
    big = tmp_path / "big"
    big.write_bytes(b"a" * 10_000_000)
    _fails(capsys, lambda: js.read_token_file(str(big)), "more than 4096 bytes")
    latin = tmp_path / "latin"
    latin.write_bytes(b"caf\xe9\n")
    _fails(capsys, lambda: js.read_token_file(str(latin)), "is not UTF-8 text")
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    _fails(capsys, lambda: js.read_token_file(str(fifo)), "is not a regular file")
    _fails(capsys, lambda: js.read_token_file(str(tmp_path / "absent")), "cannot read the token file")
    good = tmp_path / "good"
    good.write_text("s3cret-token\n")
    assert js.read_token_file(str(good)) == "s3cret-token"


@pytest.mark.unit
@pytest.mark.parametrize("arg", [
    "--PasswordIdentityProvider.hashed_password=argon2:xyz", "--ServerApp.token=", "--IdentityProvider.token=''",
    "--NotebookApp.password=", "--ServerApp.password", "--ServerApp.disable_check_xsrf=True",
    "--IdentityProvider.token", "--PasswordIdentityProvider.password_required=False", "--token=abc",
    "--ServerApp.allow_unauthenticated_access=True", "--ServerApp.identity_provider_class=x.Y",
    "--ServerApp.authorizer_class=x.AllowAll", "--ServerApp.cookie_secret=00", "--SERVERAPP.TOKEN=x",
    "--ServerApp.allow_origin=*", "--ZMQChannelsWebsocketConnection.some_token_thing=1", "---ServerApp.token=",
])
def test_auth_options_are_refused_by_trait_name(arg):
    assert _jupyter_start().auth_option(arg), arg


@pytest.mark.unit
@pytest.mark.parametrize("arg", ["--ServerApp.port_retries=0", "--LabApp.news_url=None", "--notebook-dir=/x",
                                 "--ServerApp.root_dir=/home/torch/tokens", "lab", "--debug"])
def test_ordinary_options_pass(arg):
    assert not _jupyter_start().auth_option(arg), arg


@pytest.mark.unit
def test_jupyter_start_refuses_an_auth_option_without_echoing_its_value(capsys, monkeypatch):
    js = _jupyter_start()
    monkeypatch.setattr(js.os, "getuid", lambda: 1000)
    _fails(capsys, lambda: js.main(["--PasswordIdentityProvider.hashed_password=argon2:SECRET"]),
           "refusing --PasswordIdentityProvider.hashed_password")
    monkeypatch.setenv("JUPYTER_START_TIMEOUT", "nan")
    monkeypatch.setenv("JUPYTER_TOKEN", "t0ken")
    _fails(capsys, lambda: js.main([]), "JUPYTER_START_TIMEOUT='nan'")


def _as_nobody(argv: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    if os.getuid() == 0:
        if shutil.which("setpriv") is None:
            pytest.skip("needs setpriv to drop root")
        argv = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", *argv]
    return subprocess.run(argv, env={"PATH": os.environ["PATH"], "HOME": env.get("HOME", "/nonexistent"), **env},
                          capture_output=True, text=True, timeout=60, check=False)


@pytest.mark.host
@pytest.mark.parametrize(("env_of", "needle"), [
    (lambda t: {"SSH_AUTHORIZED_KEYS_FILE": str(t)}, "is a folder, not a file"),
    (lambda t: {"SSH_AUTHORIZED_KEYS_FILE": "/dev/zero"}, "is not a regular file"),
    (lambda t: {"SSH_AUTHORIZED_KEYS_FILE": str(t / "absent")}, "does not exist"),
    (lambda t: {"SSH_PORT": "²"}, "is not a port number"),
    (lambda t: {"SSH_PORT": "9" * 5000}, "is not a port number"),
    (lambda t: {"SSH_PORT": "22"}, "needs a port in 1024-65535"),
])
def test_sshd_start_bad_inputs_are_one_line(env_of, needle):
    import tempfile
    top = Path(tempfile.mkdtemp(prefix="sshd-start-"))     # pytest's tmp_path is private to root: nobody needs in
    try:
        os.chmod(top, 0o755)
        run = top / "run"
        run.mkdir()
        os.chmod(run, 0o777)
        proc = _as_nobody(["sh", str(BIN / "sshd-start")], {"TORCHIMAGES_RUN_DIR": str(run), **env_of(top)})
        assert proc.returncode == 2 and needle in proc.stderr and proc.stderr.count("\n") == 1, proc.stderr
        assert "cat:" not in proc.stderr
    finally:
        shutil.rmtree(top, ignore_errors=True)


@pytest.mark.host
def test_the_healthcheck_reads_numbers_strictly(tmp_path):
    (tmp_path / "sshd.port").write_text("²\n")
    proc = subprocess.run([sys.executable, str(BIN / "torchimages-healthcheck")], capture_output=True, text=True,
                          env={**os.environ, "TORCHIMAGES_RUN_DIR": str(tmp_path)}, timeout=60, check=False)
    assert proc.returncode == 1 and "holds no port number" in proc.stdout and "Traceback" not in proc.stderr
    (tmp_path / "sshd.port").unlink()
    (tmp_path / "jupyter.url").write_bytes(b"\xff" * 10)
    proc = subprocess.run([sys.executable, str(BIN / "torchimages-healthcheck")], capture_output=True, text=True,
                          env={**os.environ, "TORCHIMAGES_RUN_DIR": str(tmp_path)}, timeout=60, check=False)
    assert proc.returncode == 0 and "Traceback" not in proc.stderr
