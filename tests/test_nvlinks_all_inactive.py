"""`nvidia-smi nvlink -s` answers `NVML: Unable to retrieve NVLink information as all links are inActive` for a GPU
whose every link is down (tests/data/real-world/b200-gpu2-nvml-all-nvlinks-inactive-...: GPUd issue 1085): as many
links down as its model has (verify/baselines.json), not assessed for a model the table does not know; a masked UUID
is no UUID."""
import pytest

from tests.judging import explained, verdict
from verify.explain import nvlinks

pytestmark = pytest.mark.unit

TEXT = "GPU 2: NVIDIA B200 (UUID: GPU-xxx)\nNVML: Unable to retrieve NVLink information as all links are inActive\n"


def test_every_link_of_a_known_model_down_fails_the_host():
    devices = nvlinks.parse(TEXT)["devices"]
    assert devices == [{"index": 2, "name": "NVIDIA B200", "uuid": None, "nvlink": [False] * 18}]
    assert verdict(explained(TEXT, "nvlink.txt")) == ("fail", "NVLINK_DOWN", "host")


def test_a_model_the_table_does_not_know_has_no_link_count():
    devices = nvlinks.parse(TEXT.replace("NVIDIA B200", "NVIDIA Future GPU"))["devices"]
    assert devices is not None and "nvlink" not in devices[0]
