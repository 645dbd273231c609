"""make bench-start's pure parts: the probe's line read into phases, the rows into the two ratios (the registry,
dockerd, containerd and skopeo runs are real and measured by `make bench-start`, never asserted on speed)."""
from __future__ import annotations

import json

import pytest

from scripts.builder.coldstart import Start, _probe, pull_request
from scripts.builder.startbench import _ratios, _row
from scripts.errors import UserError

pytestmark = pytest.mark.unit


def test_the_probe_line_splits_the_run_into_start_and_what_ran_inside():
    out = "noise\n" + json.dumps({"import_torch": 1.5, "cuda_init": 0.5, "first_batch": None}) + "\n"
    start = _probe(4.0, out, pull=30.0, what="x")
    assert (start.pull, start.import_torch, start.cuda_init, start.first_batch) == (30.0, 1.5, 0.5, None)
    assert start.start == pytest.approx(2.0) and start.cold == pytest.approx(33.5)   # cold: pull + start + import


def test_a_run_without_a_probe_line_is_an_error_not_a_figure():
    for out in ("", "Traceback ...\n", json.dumps({"cuda_init": 1}) + "\n"):
        with pytest.raises(UserError, match="printed no probe result"):
            _probe(1.0, out, pull=1.0, what="docker run x")


def test_the_ratios_are_project_over_plain_per_runtime():
    def row(runtime: str, image: str, pull: float) -> dict[str, object]:
        return _row(runtime, image, Start(pull, 1.0, 1.0), [100, 200])
    rows = [row("docker", "plain (gzip)", 98.0), row("docker", "project (gzip)", 48.0),
            row("containerd", "plain (gzip)", 78.0), row("containerd", "project (zstd)", 18.0)]
    assert _ratios(rows) == {"docker_gzip": pytest.approx(0.5), "containerd_zstd": pytest.approx(0.25)}
    assert rows[0]["compressed_bytes"] == 300 and rows[0]["layers"] == 2


def test_the_ram_ratio_is_there_only_where_containerd_ran_in_ram():
    def row(runtime: str, image: str, pull: float) -> dict[str, object]:
        return _row(runtime, image, Start(pull, 1.0, 1.0), [100])
    disk = [row("docker", "plain (gzip)", 98.0), row("docker", "project (gzip)", 48.0),
            row("containerd", "plain (gzip)", 78.0), row("containerd", "project (zstd)", 58.0)]
    assert "containerd_zstd_ram" not in _ratios(disk)
    ram = [row("containerd-ram", "plain (gzip)", 58.0), row("containerd-ram", "project (zstd)", 18.0)]
    assert _ratios(disk + ram)["containerd_zstd_ram"] == pytest.approx(1 / 3)
    assert _ratios(disk + ram)["containerd_zstd"] == pytest.approx(0.75)


def test_the_cri_pull_request_nests_the_reference_in_two_length_delimited_fields():
    assert pull_request("r/a:1") == b"\x0a\x07\x0a\x05r/a:1"
    ref = "127.0.0.1:5000/" + "x" * 200 + ":tag"           # lengths over 127 take a two-byte varint
    request = pull_request(ref)
    inner_len = len(ref) + 3                                  # key, two-byte length, the reference
    assert request[:3] == bytes([0x0A, inner_len & 0x7F | 0x80, inner_len >> 7])
    assert request[3:6] == bytes([0x0A, len(ref) & 0x7F | 0x80, len(ref) >> 7]) and request[6:] == ref.encode()
