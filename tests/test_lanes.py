"""make test's two pytest-xdist workers and their lanes (tests/helpers.py: worker_group)."""
from __future__ import annotations

import pytest

from tests.helpers import ENGINE_LANE, SLURM_LANE, worker_group

pytestmark = pytest.mark.unit


def test_the_two_lanes_hold_every_engine_and_every_slurm_test():
    """make test's workers (tests/helpers.py): engine tests share one lane, so multi-GB images never coexist and
    builds never overlap; every real Slurm shares the other; any other module is a group of its own."""
    assert worker_group("tests/integration/test_arm64.py::test_x") == ENGINE_LANE
    assert worker_group("tests/integration/test_images.py::test_cuda[a]") == ENGINE_LANE
    assert worker_group("tests/integration/test_slurm_launchers.py::test_docker") == SLURM_LANE
    assert worker_group("tests/test_slurm_isolate.py::test_four") == SLURM_LANE
    assert worker_group("tests/test_gpu_rules.py::test_rule[x::y]") == "tests/test_gpu_rules.py"
