"""Rates an InfiniBand adapter model runs at by design below its rated maximum: the half-width port of a split or
a half-rate fabric (HDR100 is a ConnectX-6 port at 2X HDR, 100 Gb/s; NDR200 a ConnectX-7 port at 2X NDR, 200 Gb/s).
Sites build whole fabrics on them (an HDR switch cabled to HDR100 nodes), so such a port is not degraded against
its model's maximum by itself; only a faster port of the same model beside it shows it is (issue 35: the KAUST
Ibex listing). A port whose width or speed says otherwise (4X EDR on an HDR card: a link that trained down) is no
design rate."""
from __future__ import annotations

from ...facts import Port

# model -> (the design rate in Gb/s, its name, the lane generation at 2X width)
DESIGN_RATES = {"MT4123": (100.0, "HDR100", "HDR"), "MT4129": (200.0, "NDR200", "NDR")}


def design_rate(kind: str | None, port: Port) -> str | None:
    """The name of the design rate this port runs at (`HDR100`), None where it is none: the rate must be the
    model's split rate, and a printed width and speed must be that split's (2X of the model's lane), since ibstat
    prints the total rate alone and then either can be null."""
    design = DESIGN_RATES.get(str(kind))
    if design is None or port.get("link_layer") != "InfiniBand":
        return None
    gbps, name, lane = design
    width, speed = port.get("width"), port.get("speed")
    if float(port.get("rate_gbps") or 0.0) != gbps or width not in (None, 2) or speed not in (None, lane):
        return None
    return name
