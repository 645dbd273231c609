"""What each pushed image costs a node: the registry's compressed layers beside the engine's unpacked ones, and what
images pushed together share by blob digest. The engine stands in as recorded Docker API data (tests/test_layers.py)."""
from __future__ import annotations

from types import SimpleNamespace

import pytest

from scripts.publish.layercost import LayerCost, cost_table, layer_costs

pytestmark = pytest.mark.unit

D = [f"sha256:{c * 64}" for c in "0123456789"]


class _Engine:
    """One local image as the Docker API gives it: its diff ids and its history, newest first."""

    def __init__(self, diff_ids, history):
        image = SimpleNamespace(attrs={"RootFS": {"Layers": diff_ids}},
                                history=lambda: [{"CreatedBy": c, "Size": n} for c, n in reversed(history)])
        self.images = SimpleNamespace(get=lambda ref: image)


def _pair():
    return _Engine([f"sha256:{c * 64}" for c in "abcd"],
                   [("", 100), ("RUN apt-get install python3", 50), ("ENV PATH=/opt/venv/bin", 0),
                    ("RUN ... uv pip install --target /opt/venv/cuda -r /tmp/uv/cuda.txt", 3000),
                    ("RUN ... /tmp/uv/torch.txt", 2000), ("LABEL x=y", 0)])


def test_pushed_layers_take_the_engines_steps_and_sizes_by_position():
    costs = layer_costs(_pair(), "t:a", [(D[0], 40), (D[1], 20), (D[2], 1500), (D[3], 900)])
    assert [(x.step, x.compressed, x.unpacked) for x in costs] == \
        [("base", 40, 100), ("system", 20, 50), ("cuda", 1500, 3000), ("torch", 900, 2000)]


def test_a_manifest_that_does_not_line_up_with_the_engine_claims_no_unpacked_size():
    costs = layer_costs(_pair(), "t:a", [(D[0], 40), (D[1], 20)])
    assert all(x.unpacked is None and x.step == "?" for x in costs)
    assert "?" in cost_table({"t:a": costs})


def test_the_table_says_what_a_node_holding_the_others_still_downloads():
    a = [LayerCost(D[0], 40_000_000, 100, "base"), LayerCost(D[2], 1_500_000_000, 3000, "cuda"),
         LayerCost(D[3], 900_000_000, 2000, "torch")]
    b = [LayerCost(D[1], 60_000_000, 100, "base"), LayerCost(D[2], 1_500_000_000, 3000, "cuda"),
         LayerCost(D[4], 950_000_000, 2000, "torch")]
    table = cost_table({"x:debian": a, "x:ubuntu": b})
    cuda_rows = [line for line in table.splitlines() if line.strip().startswith("cuda")]
    assert len(cuda_rows) == 2 and cuda_rows[0].endswith("x:ubuntu") and cuda_rows[1].endswith("x:debian")
    assert "downloads 0.940 GB of it (38.5%)" in table          # debian after ubuntu: its base and torch
    assert "downloads 1.010 GB of it (40.2%)" in table
    alone = cost_table({"x:debian": a})
    assert "total 2.440 GB compressed in 3 layers" in alone and "downloads" not in alone
