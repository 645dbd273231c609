"""`mlxlink -d <dev>` (NVIDIA's link tool, MFT): its `Operational Info` section, one port's state read into the fabric
facts (issue 35, batch 127: cx6-mlx5-0-mlxlink-state-active-eth-an-fsm-enable-200g-4x-rs-fec-544-514-...):
- the adapter is the command line's `-d` (`mlx5_0`, or a PCI address / MST device: what the user named); mlxlink
  prints no device name of its own, so without its command line the text names no adapter and is not this kind
  (cx4-hpe-840qsfp28-mlxlink-...: an `Adapter` needs a name); `-p N` is the port, else its number is not printed;
- `State : Active` is `ACTIVE`; another state word (`Polling`, `Disable`, `Physical LinkUp`: the PHY up, the port
  not) is the port not up (`DOWN`); `Physical state` is kept where it is one of sysfs' words (`LinkUp`, `Polling`,
  `Disabled`, `Sleep`), else null (`ETH_AN_FSM_ENABLE`: the Ethernet negotiation machine, no sysfs name);
- `Speed : 200G` (`100GbE`) is the port's rate in Gb/s; an InfiniBand speed word (`IB-HDR`) is its `speed`, its rate
  then not printed; `Width : 4x` its lanes;
- the link layer: Ethernet where the PHY state is Ethernet's (`ETH_...`) or the speed is a `G`/`GbE` figure,
  InfiniBand where the speed is an `IB-` word; else null.
FEC, loopback, auto-negotiation, the speed masks and the troubleshooting opcode fill no field (they are said in the
source's translation notes, not judged)."""
from __future__ import annotations

import re
from typing import Any

# the command as typed: at a line's start, after a shell prompt (`$ `, `# `, `user@host:~$ `) or `sudo`
_COMMAND = re.compile(r"^(?:[^\n]*?[$#>][ \t]*)?(?:sudo[ \t]+(?:-\S+[ \t]+)*)?(?:\S*/)?mlxlink\b[^\n]*?\s-d\s+(\S+)([^\n]*)$",
                      re.MULTILINE)
_PHYS = {"linkup": "LinkUp", "polling": "Polling", "disabled": "Disabled", "sleep": "Sleep"}


_STATE = {"active": "ACTIVE"}       # mlxlink's `State` as the fabric facts' port state

def _value(text: str, key: str) -> str | None:
    m = re.search(rf"^{re.escape(key)}\s*:[ \t]*(\S.*?)[ \t]*$", text, re.MULTILINE)
    return m.group(1) if m else None


def detect(text: str) -> bool:
    return (_COMMAND.search(text) is not None and re.search(r"^Operational Info\b", text, re.MULTILINE) is not None
            and _value(text, "State") is not None and _value(text, "Physical state") is not None)


def parse(text: str) -> dict[str, Any]:
    command = _COMMAND.search(text)
    assert command is not None
    port = re.search(r"\s-p\s+(\d+)\b", command.group(2))
    state, phys = _value(text, "State") or "", _value(text, "Physical state") or ""
    speed = _value(text, "Speed") or ""
    width = re.fullmatch(r"(\d+)x", (_value(text, "Width") or "").lower())
    rate = re.fullmatch(r"(\d+(?:\.\d+)?)G(?:bE)?", speed)
    ib = re.fullmatch(r"IB-([A-Z0-9]+)", speed)
    layer = ("InfiniBand" if ib else "Ethernet" if rate or phys.upper().startswith("ETH_") else None)
    return {"adapters": [{
        "name": command.group(1), "driver": None, "hca_type": None, "pci_device": None,
        "ports": [{"port": int(port.group(1)) if port else None,
                   "state": _STATE.get(state.lower(), "DOWN"),     # any other operational state: the port is not up
                   "phys_state": _PHYS.get(phys.lower()),
                   "rate_gbps": float(rate.group(1)) if rate else None,
                   "width": int(width.group(1)) if width else None,
                   "speed": ib.group(1) if ib else None, "link_layer": layer}]}]}
