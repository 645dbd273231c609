"""Round 59 of issue 36's hunt, the host tier: the prolog as a job's first step runs as the job's user (Slurm), with
journalctl and dmesg as stand-ins on PATH that answer as they do for a user who may not read the kernel log."""
from __future__ import annotations

import os

import pytest

from verify.prolog import kernlog

pytestmark = pytest.mark.host

# ---- the first step runs as the job's user: a kernel log it cannot see is unknown, never clean

@pytest.mark.parametrize("journal, dmesg", [
    ("", "dmesg: read kernel buffer failed: Operation not permitted\n1"),      # journalctl -q as a user: nothing
    ("", "\n0"),                                                             # dmesg answering nothing
])
def test_slurm_step_semantics_a_kernel_log_the_job_s_user_cannot_read_is_unknown_not_clean(tmp_path, monkeypatch,
                                                                                      journal, dmesg):
    """Slurm runs a job's step as the job's user: journalctl -k -q exits 0 with no line for one outside the adm or
    systemd-journal group, and dmesg is refused under kernel.dmesg_restrict. That read as a clean kernel log (an Xid
    79 there unseen, the step passed; `kernel_log_read` true for a revalidation). A running kernel's log always holds
    its boot lines: none at all is no read, said as such."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    out, _, rc = dmesg.rpartition("\n")
    for name, text, code in (("journalctl", journal, 0), ("dmesg", out, int(rc))):
        (bin_dir / name).write_text(f"#!/bin/sh\nprintf '%s' '{text}'\nexit {code}\n")
        (bin_dir / name).chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}:{os.environ['PATH']}")
    log = kernlog.read(5.0)
    assert log.lines is None and "no kernel line" in log.source, log
    (bin_dir / "journalctl").write_text("#!/bin/sh\nprintf '%s\\n' '[    5.000000] host kernel: Linux version'\n")
    assert kernlog.read(5.0).lines == ["[    5.000000] host kernel: Linux version"]
