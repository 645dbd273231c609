"""Property tests for issue 21's host-side rules (hypothesis): generated sizes, timeouts, counts and yes/no words
are refused with one line or accepted as exactly what the engine will do; generated lock mutations are always
caught; the access launchers' numbers are refused or within range. Profiles as in tests/test_properties.py."""
from __future__ import annotations

import contextlib
import io
import math
import re

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from scripts.builder.lock import LockIssue, lock_content_problem, lock_lines, requirements
from scripts.errors import UserError
from scripts.plan.platforms import NATIVE_NAME
from scripts.plan.spec import Target
from scripts.render import load_rendered
from scripts.settings import (
    COUNT_MAX,
    FALSE,
    SECONDS_MAX,
    SECONDS_MIN,
    SHM_MAX,
    SHM_MIN,
    TRUE,
    engine_bytes,
    parse_bool,
    parse_count,
    parse_seconds,
    parse_size,
)
from tests.helpers import ROOT, load_launcher

pytestmark = pytest.mark.unit

NUMBERS = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True).map(repr),
    st.floats(allow_nan=True, allow_infinity=True).map(str),
    st.integers(-(10 ** 30), 10 ** 30).map(str),
    st.sampled_from(["nan", "inf", "-inf", "NaN", "1e10", "1e400", "-0", "0.5", "0x10", "1_000", "²", "٣", "",
                     "9" * 5000, " ", "1 2", "+5", ".5", "5.", "1e-300"]),
)
SUFFIXES = st.sampled_from(["", "b", "B", "k", "K", "m", "M", "g", "G", "t", "T", "kb", "mb", "gb", "GiB", "MiB", "ib",
                            "p", " g", "g ", "bb", "\n", "x"])
SIZES = st.one_of(st.tuples(NUMBERS, SUFFIXES).map("".join), st.text(max_size=12))


def _one_line(exc: UserError, name: str) -> None:
    text = exc.shown()
    assert "\n" not in text and name in text


@given(SIZES)
def test_a_size_is_refused_or_exactly_what_docker_py_sends(text):
    try:
        accepted = parse_size(text, "SHM_SIZE")
    except UserError as exc:
        _one_line(exc, "SHM_SIZE")
        return
    from docker.utils import parse_bytes
    sent = parse_bytes(accepted)         # what docker-py puts in HostConfig.ShmSize
    assert isinstance(sent, int) and sent == engine_bytes(accepted) and SHM_MIN <= sent <= SHM_MAX
    assert sent != 0                     # never Docker's silent 64 MB default
    assert accepted.isascii() and "_" not in accepted      # ASCII digits only (int() reads '١' and '1_0' too)


@given(NUMBERS)
def test_a_timeout_is_refused_or_a_finite_bounded_number_of_seconds(text):
    try:
        value = parse_seconds(text, "VERIFY_TIMEOUT")
    except UserError as exc:
        _one_line(exc, "VERIFY_TIMEOUT")
        return
    assert math.isfinite(value) and SECONDS_MIN <= value <= SECONDS_MAX and value == float(text)


@given(st.one_of(NUMBERS, st.text(max_size=8)), st.sampled_from(sorted(COUNT_MAX)))
def test_a_count_is_refused_or_a_bounded_whole_number(text, name):
    try:
        value = parse_count(text, name)
    except UserError as exc:
        _one_line(exc, name)
        return
    assert isinstance(value, int) and 1 <= value <= COUNT_MAX[name] and value == int(text.strip())
    assert re.fullmatch(r"[0-9]+", text.strip())


@given(st.one_of(st.text(max_size=8), st.sampled_from(sorted(TRUE | FALSE) + ["maybe", "Y", "ja", "2", "TRUE ", "oui"])))
def test_a_yes_no_word_is_from_the_closed_set_or_refused(text):
    try:
        value = parse_bool(text, "REGISTRY_INSECURE")
    except UserError as exc:
        _one_line(exc, "REGISTRY_INSECURE")
        assert text.strip().lower() not in TRUE | FALSE | {""}
        return
    word = text.strip().lower()
    assert word in TRUE | FALSE | {""} and value is (word in TRUE)


# ---- generated lock mutations are always caught ----

SPEC = next(s for s in load_rendered(ROOT / "images") if s.tag == "2.13.0-cpu-debian12")
TARGET = Target(SPEC, NATIVE_NAME)
LOCK = TARGET.lock_path(ROOT / "images").read_text(encoding="utf-8")
REQUIRED = [r.split("==")[0] for r in requirements(SPEC)]
PINS = [line.text.split("==")[0] for line in lock_lines(LOCK)]
HASH = "    --hash=sha256:" + "c" * 64
VERSIONS = st.from_regex(r"[0-9]{1,3}(\.[0-9]{1,3}){0,2}(\+[a-z]{1,4}[0-9]?)?", fullmatch=True)
NAMES = st.from_regex(r"[a-z][a-z0-9]{1,8}", fullmatch=True)
FALSE_MARKERS = st.sampled_from(['python_version < "3"', 'sys_platform == "win32"', 'platform_machine == "ppc64le"',
                                 'os_name == "nt"', 'python_version >= "4.0"', 'platform_system == "Darwin"'])


def _pin_line(text: str, name: str) -> str:
    line = next(raw for raw in text.splitlines() if raw.startswith(f"{name}=="))
    return line


@given(st.sampled_from(REQUIRED), VERSIONS)
def test_a_required_pin_at_another_version_is_caught(name, version):
    line = _pin_line(LOCK, name)
    wanted = line.split("==")[1].split()[0]
    from packaging.version import Version
    assume(Version(version) != Version(wanted))     # "02.13.0+cpu" is 2.13.0+cpu (PEP 440): the same pin, not wrong
    problem = lock_content_problem(TARGET, LOCK.replace(line, f"{name}=={version} \\", 1))
    assert problem is not None and problem.kind in (LockIssue.WRONG_PIN, LockIssue.MALFORMED)


@given(NAMES, VERSIONS, st.booleans())
def test_an_extra_top_level_pin_is_caught(name, version, claims_requirements_file):
    assume(name not in PINS)
    via = "    # via -r requirements.in\n" if claims_requirements_file else ""
    problem = lock_content_problem(TARGET, LOCK + f"{name}=={version} \\\n{HASH}\n{via}")
    assert problem is not None and problem.kind is LockIssue.EXTRA_PIN


@given(st.sampled_from(PINS), st.sampled_from(["end", "start"]))
def test_a_duplicate_pin_is_caught(name, where):
    line = _pin_line(LOCK, name)
    bare = line.rstrip(" \\")
    extra = f"{bare} \\\n{HASH}\n"
    text = LOCK + extra if where == "end" else LOCK.replace(line, extra + line, 1)
    problem = lock_content_problem(TARGET, text)
    assert problem is not None and problem.kind is LockIssue.DUPLICATE


@given(st.sampled_from(REQUIRED), FALSE_MARKERS)
def test_a_marker_that_skips_a_required_pin_is_caught(name, marker):
    line = _pin_line(LOCK, name)
    problem = lock_content_problem(TARGET, LOCK.replace(line, line.replace(" \\", f" ; {marker} \\"), 1))
    assert problem is not None and problem.kind is LockIssue.MARKER_EXCLUDES


@given(st.sampled_from(PINS))
def test_a_pin_without_its_hashes_is_caught(name):
    lines = LOCK.splitlines()
    i = next(n for n, raw in enumerate(lines) if raw.startswith(f"{name}=="))
    j = i + 1
    while j < len(lines) and lines[j].lstrip().startswith("--hash"):
        j += 1
    text = "\n".join([*lines[:i], f"{name}=={lines[i].split('==')[1].split()[0]}", *lines[j:]]) + "\n"
    problem = lock_content_problem(TARGET, text)
    assert problem is not None and problem.kind is LockIssue.NO_HASH


@given(st.sampled_from(REQUIRED))
def test_a_missing_required_pin_is_caught(name):
    line = _pin_line(LOCK, name)
    problem = lock_content_problem(TARGET, LOCK.replace(line, "renamed-" + line, 1))
    assert problem is not None and problem.kind in (LockIssue.MISSING_PIN, LockIssue.EXTRA_PIN)


@given(st.integers(0, 200), st.text(alphabet=st.characters(exclude_categories=["Cs"]), min_size=1, max_size=30))
def test_any_inserted_line_is_caught_or_harmless(position, junk):
    """A line spliced into the lock is either a named problem or a comment/blank pip ignores: never a crash."""
    lines = LOCK.splitlines()
    position = min(position, len(lines))
    text = "\n".join([*lines[:position], junk, *lines[position:]]) + "\n"
    try:
        problem = lock_content_problem(TARGET, text)
    except Exception as exc:   # noqa: BLE001 - the property: no exception escapes
        pytest.fail(f"{type(exc).__name__}: {exc}")
    if problem is None:         # then pip reads the same requirements: the line was blank or a comment
        assert [line.text for line in lock_lines(text)] == [line.text for line in lock_lines(LOCK)], junk


# ---- the access launchers' numbers ----

JS = load_launcher("jupyter-start")


def _refused_or(parse, text: str, variable: str):
    """The parsed value, or None when the launcher refused it with exit 2 and one line."""
    with contextlib.redirect_stderr(io.StringIO()) as err:
        try:
            return parse(text, variable)
        except SystemExit as exc:
            assert exc.code == 2 and err.getvalue().count("\n") == 1
            return None


@given(NUMBERS)
def test_the_jupyter_port_is_refused_or_a_port(text):
    port = _refused_or(JS.port_of, text, "JUPYTER_PORT")
    assert port is None or (0 < port < 65536 and port == int(text))


@given(NUMBERS)
def test_the_jupyter_start_timeout_is_refused_or_finite_and_bounded(text):
    seconds = _refused_or(JS.seconds_of, text, "JUPYTER_START_TIMEOUT")
    assert seconds is None or (math.isfinite(seconds) and 1 <= seconds <= 3600)
