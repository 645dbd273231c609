"""make test's two pytest-xdist workers and their lanes (tests/helpers.py: worker_group, dispatch_order)."""
from __future__ import annotations

import pytest

from tests.helpers import ENGINE_LANE, SLURM_LANE, dispatch_order, worker_group

pytestmark = pytest.mark.unit


def test_the_lanes_hold_every_shared_image_test_and_every_slurm_test():
    """The engine lane holds the modules that build the multi-GB images or share the default one; every real Slurm
    shares the other; an engine module with small images of its own, and any other module, is a group of its own."""
    assert worker_group("tests/integration/test_images.py::test_cuda[a]") == ENGINE_LANE
    assert worker_group("tests/integration/test_release.py::test_push") == ENGINE_LANE
    assert worker_group("tests/integration/test_a_new_module.py::test_x") == ENGINE_LANE     # unknown: the safe lane
    assert worker_group("tests/integration/test_arm64.py::test_x") == ENGINE_LANE
    assert worker_group("tests/integration/test_access.py::test_x") == "tests/integration/test_access.py"
    assert worker_group("tests/integration/test_slurm_launchers.py::test_docker") == SLURM_LANE
    assert worker_group("tests/test_slurm_isolate.py::test_four") == SLURM_LANE
    assert worker_group("tests/test_gpu_rules.py::test_rule[x::y]") == "tests/test_gpu_rules.py"


def test_the_longest_groups_go_out_first_then_the_fewest_tests():
    sizes = {"tests/test_gpu_rules.py": 900, "tests/test_verify_preflight.py": 15, SLURM_LANE: 40, ENGINE_LANE: 60,
             "tests/integration/test_access.py": 18, "tests/test_verify_host.py": 8, "tests/test_docs.py": 30}
    assert dispatch_order(sizes) == [ENGINE_LANE, SLURM_LANE, "tests/integration/test_access.py",
                                     "tests/test_verify_host.py", "tests/test_verify_preflight.py",
                                     "tests/test_docs.py", "tests/test_gpu_rules.py"]
