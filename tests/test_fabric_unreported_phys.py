"""A port ACTIVE whose physical state the driver does not report (`0: <unknown>`: Azure's paravirtual mlx4_0 on an
H16r VM, tests/data/real-world/azure-h16r-endure-...) is no port down: an unreported state proves nothing either way.
A physical state that is reported and not LinkUp (Polling, Disabled) still is."""
from typing import Any, cast

import pytest

from tests.judging import verdict
from verify.checks.fabric import check as fabric_check
from verify.options import Options

pytestmark = pytest.mark.unit


def _judge(phys: str):
    port = {"port": 1, "state": "4: ACTIVE", "phys_state": phys, "rate_gbps": 40.0, "link_layer": "InfiniBand"}
    return fabric_check.judge(cast(Any, {"adapters": [{"name": "mlx4_0", "hca_type": None, "ports": [port]}]}), Options())


def test_an_active_port_whose_physical_state_is_unreported_is_not_down():
    assert verdict(_judge("0: <unknown>"))[0] == "pass"


@pytest.mark.parametrize("phys", ["2: Polling", "3: Disabled"])
def test_a_reported_physical_state_other_than_linkup_is_down(phys):
    assert verdict(_judge(phys)) == ("fail", "FABRIC_PORT_DOWN", "host")
