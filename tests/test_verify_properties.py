"""Property tests of verify's command line: generated arguments and environment end in exit 0, 1 or 2,
never a traceback; exit 2 is one line on stderr and writes nothing.

The in-process property replaces the check runner with a stub (this tests argument and environment handling,
not the checks); the subprocess property runs the real `python -m verify` on inputs that must be refused
before any check runs. `-m slow` runs thousands of examples.
"""
from __future__ import annotations

import io
import os
import subprocess
import sys
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path
from unittest import mock

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.helpers import ROOT, examples
from verify import cli
from verify.result import CheckResult

pytestmark = pytest.mark.unit

EXAMPLES = examples(150)

VALUES = ["0", "1", "-1", "2", "1e3", "nan", "inf", "-inf", "", " ", "abc", "1g", "64m", "0.5", "infg", "1p", "2t",
          "9" * 30, "1k", "16m", "\x00", "é", "1gib", "0x10", "--", "-", "gpu", "gpu,shm", ",", "gpux"]
FLAGS = ["--checks", "--expect-gpus", "--shm-min", "--arrow-size", "--arrow-min-ratio", "--nccl-min-size",
         "--nccl-max-size", "--nccl-timeout", "--timeout"]
SWITCHES = ["--list", "--no-perf", "--bogus", "-h"]
ENV_VALUES = st.sampled_from(["0", "1", "2", "7", "abc", "", "-1", " 1", "99999999999999999999", "1.5"])

argv_strategy = st.lists(st.one_of(
    st.tuples(st.sampled_from(FLAGS), st.one_of(st.sampled_from(VALUES), st.text(max_size=6))).map(list),
    st.sampled_from(SWITCHES).map(lambda s: [s])), max_size=5).map(lambda parts: [a for p in parts for a in p])
env_strategy = st.dictionaries(st.sampled_from(["RANK", "WORLD_SIZE", "LOCAL_RANK", "MASTER_ADDR"]), ENV_VALUES, max_size=4)


def _stub_run_all(names, options, timeout=None, progress=None, facts_out=None):
    assert options.shm_min_bytes > 0 and options.nccl_min_bytes <= options.nccl_max_bytes
    assert timeout is None or timeout > 0
    return [CheckResult(n, "pass", "stub") for n in names]


@pytest.fixture(scope="module")
def outdir(tmp_path_factory):
    return tmp_path_factory.mktemp("props")


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(argv=argv_strategy, env=env_strategy, report=st.booleans())
def test_generated_arguments_and_environment_never_crash(argv, env, report, outdir):
    json_path = str(Path(outdir) / "r.json")
    if report:
        argv = [*argv, "--json", json_path]
    clean = {k: v for k, v in os.environ.items() if k not in ("RANK", "WORLD_SIZE", "LOCAL_RANK", "MASTER_ADDR")}
    out, err = io.StringIO(), io.StringIO()
    with mock.patch.dict(os.environ, {**clean, **env}, clear=True), \
            mock.patch.object(cli, "run_all", _stub_run_all), \
            mock.patch.object(cli, "collect_environment", lambda: {"python": "3"}), \
            redirect_stdout(out), redirect_stderr(err):
        if os.path.exists(json_path):
            os.unlink(json_path)
        try:
            rc: int | str | None = cli.main(argv)
        except SystemExit as exc:          # --help / -h exits through argparse with 0
            rc = exc.code
    assert rc in (0, 1, 2), (argv, env, rc)
    assert "Traceback" not in err.getvalue()
    if rc == 2:
        lines = err.getvalue().strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("verify: "), (argv, env, err.getvalue())
        assert not os.path.exists(json_path), "a refused run wrote a report"


BAD = st.one_of(
    st.tuples(st.sampled_from(["--shm-min", "--arrow-size", "--nccl-min-size", "--nccl-max-size"]),
              st.sampled_from(["0", "-1", "infg", "nan", "abc", "", "1x", "-5m"])).map(list),
    st.tuples(st.sampled_from(["--timeout", "--nccl-timeout"]), st.sampled_from(["0", "-1", "nan", "inf", "x", ""])).map(list),
    st.tuples(st.just("--expect-gpus"), st.sampled_from(["-1", "1.5", "x", ""])).map(list),
    st.tuples(st.just("--checks"), st.sampled_from([",", "gpux", "gpu,nope", " "])).map(list))


@pytest.mark.host
@settings(max_examples=max(10, EXAMPLES // 10), deadline=None)
@given(bad=BAD, good=st.lists(st.sampled_from([["--no-perf"], ["--expect-gpus", "0"], ["--shm-min", "16m"]]), max_size=2))
def test_real_cli_refuses_bad_arguments_in_one_line(bad, good):
    argv = [a for p in good for a in p] + bad
    proc = subprocess.run([sys.executable, "-m", "verify", *argv], cwd=ROOT, capture_output=True, text=True, timeout=60,
                          check=False)
    assert proc.returncode == 2, (argv, proc.stdout, proc.stderr)
    assert "Traceback" not in proc.stderr and len(proc.stderr.strip().splitlines()) == 1, proc.stderr
    assert proc.stdout == ""
