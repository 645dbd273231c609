"""Issue 36, a sixth hunt (round 52) through the public interfaces: the leftovers of round 51 and classes 1 to 5.
Each test names the practice it holds the cluster tooling to (Slurm's prolog semantics, NVSentinel's breaker and
return-to-service rules, NVIDIA's Xid catalog)."""
from __future__ import annotations

import io
import json
import sys

import pytest

from tests.prolog_fakes import PROLOG_ENV, STEP_ENV, _args, _gpu, _report, _verify_writes, history_events, install_fake
from verify.prolog import cli


class _Unwritable(io.TextIOBase):
    """A stream a wrapper left unwritable: its reader gone (EPIPE) or its disk full (ENOSPC)."""

    def __init__(self, errno: int) -> None:
        self.errno = errno

    def write(self, s: str) -> int:
        raise (BrokenPipeError if self.errno == 32 else OSError)(self.errno, "cannot write")

    def flush(self) -> None:
        self.write("")


@pytest.mark.unit
@pytest.mark.parametrize("errno", [32, 28], ids=["reader-gone", "disk-full"])
@pytest.mark.parametrize("stream", ["stdout", "stderr"])
@pytest.mark.parametrize("env", [PROLOG_ENV, STEP_ENV], ids=["Prolog=", "first-step"])
def test_a_stream_that_cannot_be_written_never_skips_the_drain(tmp_path, monkeypatch, errno, stream, env):
    """Slurm's prolog semantics (only the exit status and the drain count): the verdict's line was printed before the
    drain, so a wrapper whose stdout reader had left (or a stdout on a full disk) raised there, and the node with a
    lost GPU stayed in service (exit 0 under Prolog=, PROLOG_CRASHED or a quiet 141). Now the line is said on stderr
    where it can be, and the node is drained all the same (exit 1), its drain on record."""
    fake = install_fake(monkeypatch)
    _verify_writes(monkeypatch, json.dumps(_report(_gpu("fail", code="GPU_LOST", owner="host"))).encode())
    monkeypatch.setattr(sys, stream, _Unwritable(errno))
    status = cli.main(_args(tmp_path), env)
    assert status == 1 and fake.nodes["n1"][0] == "drained", (status, fake.nodes["n1"])
    assert history_events(tmp_path)[-1] == ("drain", "GPU_LOST")
