"""What each image costs a node: the layers of images in the engine, by step, and what the family shares by diff id.
The engine stands in as recorded data (its image attrs and history, as the Docker API gives them)."""
from __future__ import annotations

from types import SimpleNamespace

import pytest

from scripts.builder.layers import family, family_table, image_layers

pytestmark = pytest.mark.unit

CUDA = ("RUN |4 TORCH_INDEX_URL= /bin/bash -o pipefail -c ... awk ... >/tmp/uv/cuda.txt && uv pip install "
        "--target /opt/venv/cuda")


def _image(tags, layers, history):
    """history oldest first as (CreatedBy, Size); the API returns it newest first."""
    entries = [{"CreatedBy": c, "Size": s} for c, s in reversed(history)]
    return SimpleNamespace(tags=tags, attrs={"RootFS": {"Layers": layers}}, history=lambda: entries)


class _Engine:
    def __init__(self, images):
        self._images = images
        self.images = self

    def get(self, ref):
        return next(i for i in self._images if ref in i.tags)

    def list(self, name):
        return [i for i in self._images if any(t.startswith(name + ":") for t in i.tags)]


def _pair():
    common = [("", 100), ("RUN apt-get install python3", 50), ("ENV PATH=/opt/venv/bin", 0)]
    a = _image(["t:a"], ["sha256:" + "1" * 64, "sha256:" + "2" * 64, "sha256:" + "c" * 64, "sha256:" + "a" * 64],
               [*common, (CUDA, 3000), ("RUN ... /tmp/uv/torch.txt", 2000), ("LABEL x=y", 0)])
    b = _image(["t:b"], ["sha256:" + "1" * 64, "sha256:" + "3" * 64, "sha256:" + "c" * 64, "sha256:" + "b" * 64],
               [*common, (CUDA, 3000), ("RUN ... /tmp/uv/torch.txt", 2000)])
    return _Engine([a, b])


def test_layers_are_named_by_their_step_and_metadata_steps_make_none():
    steps = [(x.step, x.size) for x in image_layers(_pair(), "t:a") or []]
    assert steps == [("base", 100), ("system", 50), ("cuda", 3000), ("torch", 2000)]


def test_the_family_shares_the_cuda_layer_by_diff_id_and_says_what_is_left_to_pull():
    engine = _pair()
    assert family(engine, ["t:b"], "t") == ["t:b", "t:a"]
    table = family_table(engine, ["t:a", "t:b"])
    cuda = [line for line in table.splitlines() if line.strip().startswith("cuda")]
    assert len(cuda) == 2 and all(line.endswith("t:b") or line.endswith("t:a") for line in cuda)
    torch = [line for line in table.splitlines() if line.strip().startswith("torch")]
    assert all(line.endswith("-") for line in torch)               # different torch layers: nothing shared
    assert "it downloads 0.00 GB" in table and "holds 60% of its layers" in table


def test_a_history_that_does_not_line_up_claims_no_size():
    engine = _Engine([_image(["t:x"], ["sha256:" + "1" * 64], [("", 1), ("RUN x", 2)])])
    assert image_layers(engine, "t:x") is None
    assert "does not line up" in family_table(engine, ["t:x"])


def test_a_crossed_build_names_each_copied_part_not_access():
    # An arm64 image built on x86 COPYs each natively installed part from /parts/<name>/ (the engine's history of
    # the 2.13.0 CUDA image for linux/arm64, 2026-11-29); the jupyter image's own COPY stays "access".
    history = [("", 139), ("RUN apt-get install python3", 60),
               *((f"COPY --from=builder-native /parts/{n}/ / # buildkit", 1) for n in
                 ("venv", "cusparselt", "cuda", "nccl", "cudnn", "torch", "rest")),
               ("COPY rootfs/access/ / # buildkit", 1)]
    image = _image(["t:x"], [f"sha256:{i:064x}" for i in range(len(history))], history)
    steps = [x.step for x in image_layers(_Engine([image]), "t:x") or []]
    assert steps == ["base", "system", "venv", "cusparselt", "cuda", "nccl", "cudnn", "torch", "rest", "access"]


def test_the_family_lists_an_image_once_not_again_by_its_registry_tag():
    # after make push the image also carries 127.0.0.1:5000/torchimages:<tag>: the same layers, no second image
    engine = _pair()
    engine._images[0].tags.append("127.0.0.1:5000/t:a")
    assert family(engine, ["t:b"], "t") == ["t:b", "t:a"]
