"""NCCL's log says NVLS (NVLink SHARP) was used, or that it was not, or nothing: a trimmed excerpt without an NVLS
line is no proof that NVLS was off, so it stays unknown and `NVLS_NOT_USED` is never raised on it."""
import pytest

from verify.checks.nccl import ncclog
from verify.checks.nccl.bandwidth import nvls_not_used
from verify.findings import Findings

pytestmark = pytest.mark.unit

# Lines as printed in the corpus (tests/data/real-world: h100-hgx-2x8-doca-host-ring-44-busbw-..., dgx-h100 and
# bionemo excerpts)
BUILT = "lccn09:2520148:2520240 [7] NCCL INFO 16 coll channels, 16 collnet channels, 16 nvls channels, 16 p2p channels, 2 p2p channels per peer"
NONE_BUILT = "036260b61d3a:33347:33366 [6] NCCL INFO 16 coll channels, 0 nvls channels, 16 p2p channels, 16 p2p channels per peer"
NO_MULTICAST = "h:1:1 [0] NCCL INFO NVLS multicast support is not available on dev 0"
UNRELATED = "h:1:1 [0] NCCL INFO Using network IB"
# NVIDIA/nccl-tests#216 (tests/data/real-world/h100-x8-docker-nccl-2.19.3-four-ranks-hang-at-nvls-bind-mem-...)
BIND = "c2ce1c877ea3:1023:1032 [0] NCCL INFO NVLS Bind mem 0xac0000000 UC handle 0x7f3310ccb240 MC handle 0x7f3310ccaa20 size 1073741824"


@pytest.mark.parametrize("text, nvls", [(BUILT, True), (BIND, True), (NONE_BUILT, False), (NO_MULTICAST, False), (UNRELATED, None)])
def test_nvls_is_read_from_the_lines_that_show_it_and_unknown_otherwise(text, nvls):
    assert ncclog.parse(text)["nvls"] is nvls


@pytest.mark.parametrize("text, raised", [(UNRELATED, False), (NONE_BUILT, True)])
def test_nvls_not_used_needs_a_line_that_shows_it_off(text, raised):
    facts = {"nccl_version": "2.21.5", "nvswitch": True, "nodes": 1, "world_size": 8,
             "nccl_log": ncclog.parse(text), "nccl_env": {}}
    found = Findings()
    nvls_not_used(facts, found)   # type: ignore[arg-type]
    assert ("NVLS_NOT_USED" in [f.code for f in found.items]) is raised
