"""NVIDIA's Xid catalogue: a graphics engine exception (Xid 13) is most often the program's; the same exception met
by several programs on one GPU points at the GPU. A program restarted into the same fault is one program, whatever
its pids: every line names the same program (`name=`) and the same engine class and offset."""
import pytest

from tests.judging import verdict
from verify.checks import CHECKS
from verify.judging import judge
from verify.options import Options

pytestmark = pytest.mark.unit

# tests/data/real-world/proton-space-marine-2-crash-loop-three-xid13-graphics-exception-class-c997-offset-0-...
LINE = ("NVRM: Xid (PCI:0000:01:00): 13, pid={pid}, name={name}, Graphics Exception: channel 0x0000000{ch}, "
        "Class 0000c997, Offset {offset}, Data 00000000")


def _events(*lines: str) -> list[dict]:
    return [{"xid": 13, "index": None, "uuid": None, "pci_bus_id": "0000:01:00", "source": "kernel_log",
             "time": None, "text": t} for t in lines]


def test_one_program_restarted_into_the_same_exception_is_the_job_s():
    lines = [LINE.format(pid=p, name="Warhammer 40000", ch=c, offset="00000000")
             for p, c in ((12770, 9), (13692, "a"), (14559, "a"))]
    r = judge(CHECKS["gpu"], {"torch": None, "xid_events": _events(*lines)}, Options())
    assert verdict(r) == ("warn", "XID_ERROR", "job"), r.summary


@pytest.mark.parametrize("names, offsets", [
    (("game", "trainer", "render"), ("00000000",) * 3),      # three programs: the GPU is suspect
    (("game",) * 3, ("00000000", "00000104", "00000a80")),    # one program faulting at different places
])
def test_other_spreads_over_three_processes_stay_suspect(names, offsets):
    lines = [LINE.format(pid=100 + i, name=n, ch=i, offset=o) for i, (n, o) in enumerate(zip(names, offsets, strict=True))]
    r = judge(CHECKS["gpu"], {"torch": None, "xid_events": _events(*lines)}, Options())
    assert verdict(r) == ("warn", "XID_ERROR", "host"), r.summary
