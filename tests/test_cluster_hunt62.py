"""Round 62 of the cluster hunt (issue 36): the return to service of a drain for a hung preflight."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.prolog_fakes import _gpu, _report, _undrain, _verify_runs, drained, install_fake
from verify.prolog import cli, history, settings

pytestmark = pytest.mark.unit


UNDRAIN_ENV = {"SLURMD_NODENAME": "n1"}
PASSING = json.dumps(_report(_gpu())).encode()


@pytest.fixture(autouse=True)
def _stamped_now() -> None:
    """The report stamped when each test runs: made at import, it was stale evidence by the time the suite got here."""
    global PASSING
    PASSING = json.dumps(_report(_gpu())).encode()


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch) -> Any:
    return install_fake(monkeypatch)


def test_nvsentinel_a_hung_preflight_drain_returns_only_after_passes_in_a_row(tmp_path: Path, fake: Any,
                                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """PREFLIGHT_HUNG drains after --hang-runs hangs in a row: a degrading GPU that stalls its checker on most runs
    (NVSentinel's users: through dozens of kills), not on all. One passing preflight is one draw of a fault that
    comes and goes; NVSentinel returns a node once its check stays healthy, so make undrain needs the passes in a
    row (--return-passes), as for SDC. Before: one pass resumed it."""
    state = drained(tmp_path, fake, "PREFLIGHT_HUNG", "preflight")
    runs = _verify_runs(monkeypatch, [PASSING])
    assert cli.main(_undrain(state), UNDRAIN_ENV) == 0 and fake.nodes["n1"] == ("idle", "none")
    assert len(runs) == 3
    assert history.read(state, "n1").events[-1]["detail"].endswith("(3 passes in a row)")


@pytest.mark.parametrize("line", ['TORCHIMAGES_BREAKER="0.5"  # half', "export\tTORCHIMAGES_BREAKER=0.5",
                                  "TORCHIMAGES_BREAKER='0.5'\t# half", "  export   TORCHIMAGES_BREAKER=0.5 # half"])
def test_a_settings_line_the_shell_reads_is_read_as_the_shell_reads_it(tmp_path: Path, line: str) -> None:
    """/etc/default-style shell lines: a quoted value with a comment after it, `export` and a tab. Refused, the
    whole settings file was a CONFIG_ERROR: every prolog of the fleet ran ungated on a line the shell reads fine."""
    folder = tmp_path / "state"
    folder.mkdir(mode=0o755)
    (folder / "settings").write_text(line + "\n")
    (folder / "settings").chmod(0o644)
    assert settings.read(str(folder)) == ({"TORCHIMAGES_BREAKER": "0.5"}, [])


def test_a_hash_inside_a_word_is_the_words_as_in_the_shell(tmp_path: Path) -> None:
    folder = tmp_path / "state"
    folder.mkdir(mode=0o755)
    (folder / "settings").write_text("TORCHIMAGES_METRICS_DIR=/srv/node#1\n")
    (folder / "settings").chmod(0o644)
    assert settings.read(str(folder))[0] == {"TORCHIMAGES_METRICS_DIR": "/srv/node#1"}
