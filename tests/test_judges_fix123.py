"""Issue 35's hundred-and-twenty-third corpus batch (forum and blog posts), fixed by class: a shell transcript that
puts each command's output behind `# ` (a blog's `nvidia-smi` then `# Failed to initialize NVML: Driver/library
version mismatch`) is the tool's output, not a mention of it
(ubuntu-22.04-unattended-kernel-upgrade-dkms-left-570.124.06-module-nvml-driver-library-mismatch-570.133.07). Before,
`verify explain` read NVML's refusal only at a line's start or after a log's head, and called the post unrecognised."""
from __future__ import annotations

import pytest

from tests.judging import explained, verdict

pytestmark = pytest.mark.unit

TRANSCRIPT = """\
nvidia-smi
# Failed to initialize NVML: Driver/library version mismatch
uname -r # 5.15.0-94-generic
"""


def test_nvml_refusal_behind_a_transcript_comment_is_the_driver_s():
    r = explained(TRANSCRIPT)
    assert verdict(r) == ("fail", "DRIVER_ERROR", "host"), r.summary


def test_the_refusal_in_a_comment_s_sentence_is_still_a_mention():
    r = explained("# If you see Failed to initialize NVML: Driver/library version mismatch, reboot.\n")
    assert verdict(r)[0] != "fail", r.summary
