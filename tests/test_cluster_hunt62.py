"""Round 62 of the cluster hunt (issue 36): the return to service of a drain for a hung preflight."""
from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.prolog_fakes import install_fake
from tests.test_cluster_hunt60 import PASSING, UNDRAIN_ENV, _drained, _undrain, _verify_runs
from verify.prolog import cli, history

pytestmark = pytest.mark.unit


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch) -> Any:
    return install_fake(monkeypatch)


def test_nvsentinel_a_hung_preflight_drain_returns_only_after_passes_in_a_row(tmp_path: Path, fake: Any,
                                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """PREFLIGHT_HUNG drains after --hang-runs hangs in a row: a degrading GPU that stalls its checker on most runs
    (NVSentinel's users: through dozens of kills), not on all. One passing preflight is one draw of a fault that
    comes and goes; NVSentinel returns a node once its check stays healthy, so make undrain needs the passes in a
    row (--return-passes), as for SDC. Before: one pass resumed it."""
    state = _drained(tmp_path, fake, "PREFLIGHT_HUNG", "preflight")
    runs = _verify_runs(monkeypatch, [PASSING])
    assert cli.main(_undrain(state), UNDRAIN_ENV) == 0 and fake.nodes["n1"] == ("idle", "none")
    assert len(runs) == 3
    assert history.read(state, "n1").events[-1]["detail"].endswith("(3 passes in a row)")
