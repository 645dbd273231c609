"""make isolate on a real Slurm (tests/slurm.py) of four nodes on this host, one of them really degraded: its slurmd,
and so every step it starts, held to a tight CPU quota by a cgroup. The pairs all-reduce over gloo (CPU) from this
checkout's venv (LAUNCHER=none); the answer must name that node and no other."""
from __future__ import annotations

import json
import os

import pytest

from tests import slurm

pytestmark = [pytest.mark.host, pytest.mark.slow]
DEGRADED = "n3"


@pytest.fixture(scope="module")
def four_nodes():
    try:
        with slurm.cluster(nodes=4) as cluster:
            yield cluster
    except slurm.Unavailable as exc:
        if os.environ.get("REQUIRE_DOCKER") == "1":
            pytest.fail(f"REQUIRE_DOCKER=1 (CI) but no Slurm: {exc}")
        pytest.skip(str(exc))


def test_isolation_names_the_one_degraded_node_of_four(four_nodes, tmp_path):
    script = slurm.write_job(tmp_path, "none", 4, command="isolate")
    slurmd = four_nodes.procs[f"slurmd-{DEGRADED}"].pid
    try:
        with slurm.cpu_quota(slurmd, 3):        # n3's steps get at most 3 % of one CPU
            # a pair with n3 never ends within the step's limit (its torch import alone needs minutes at 3 %), so
            # each round lasts that limit: 60 s leaves a healthy pair 4x its time on this busy 2-core host
            job = four_nodes.sbatch(script, cwd=tmp_path, env={"TORCHIMAGES_ISOLATE_TIMEOUT": "60",
                                                              "TORCHIMAGES_JOIN_TIMEOUT": "55"})
            fields = four_nodes.wait(job, 600)
    except slurm.Unavailable as exc:
        if os.environ.get("REQUIRE_DOCKER") == "1":
            pytest.fail(f"REQUIRE_DOCKER=1 (CI) but no node can be degraded: {exc}")
        pytest.skip(str(exc))
    out = slurm.output(tmp_path, script, job)
    answer = json.loads((tmp_path / f"reports-{job}" / "isolate.json").read_text())
    assert [n["node"] for n in answer["named"]] == [DEGRADED], out
    assert answer["undetermined"] == [] and answer["rounds"] <= 3, out
    assert {n["node"]: n["verdict"] for n in answer["nodes"]} == {"n1": "ok", "n2": "ok", "n3": answer["named"][0]["verdict"],
                                                                  "n4": "ok"}, out
    assert answer["named"][0]["verdict"] in ("failing", "slow") and answer["named"][0]["evidence"], answer
    assert fields["JobState"] == "FAILED" and fields["ExitCode"] == "1:0", out       # exit 1: a node named
    assert f"isolate: at fault: {DEGRADED} (" in out and "every other node passed" in out, out
    print(out)          # the figures, for the record (pytest -s)
