"""What a dcgm-exporter scrape says beyond the health fields verify/explain/dcgm.py reads, read into the same gpu facts:
- the GPUs themselves: every sample of a DCGM series names the GPU DCGM read by its labels (`gpu`, DCGM's GPU id, as
  NVML's index; `UUID`, `pci_bus_id`, `modelName`), whatever the series (`DCGM_FI_DEV_FB_FREE`,
  `DCGM_FI_DEV_C2C_LINK_STATUS`, an NVLink bit-error ratio: no field of the facts). A scrape of such series alone
  lists its GPUs with their health not read: not assessed, never a pass. A sample naming no GPU (an NVSwitch's, a
  CPU's, a console's `{err_code=..., job=...}`) lists none;
- the Xid series, each Xid one event of `xid_events`, source `nvml` (DCGM fills them from NVML's event set: FACTS.md):
  `DCGM_FI_DEV_XID_ERRORS` is "the value of the last XID error encountered" (its HELP line): its value is the Xid, or,
  where a Prometheus console lists the series without its value, its `err_code` label (dcgm-exporter 3.3 on: the
  value as text, `err_msg` NVIDIA's name for it). 0 is no Xid since DCGM began watching: where no GPU shows another,
  `xid_events` is [] (watched, none seen); `err_msg="Unknown Error"` beside 0 is only the exporter's text for a code
  its table lacks, no NVML error. `DCGM_FI_DEV_XID_ERRORS_ACTIVE` / `DCGM_EXP_XID_ERRORS_COUNT`
  (`{...,xid="42"} 1`) count Xid N in the exporter's window: a count above 0 is one event, 0 none (and no clean watch:
  it speaks of one Xid);
- the volatile correctable ECC counter's rate, as monitors and their users report it (`| ECC_SBE_VOL_TOTAL rate |
  4,647/s, then 17,657/s |`, `DCGM_FI_DEV_ECC_SBE_VOL_TOTAL ... rising at ~17,700/s`, `1,200 per minute`): the
  highest rate shown is `ecc_correctable_growth` (that many errors in its second, minute or hour). The counter's
  short name (DCGM's field name without its `DCGM_FI_DEV_` prefix) is the same field. A rate is never the counter's
  total (dcgm.py reads no `N/s` as one).
Samples and rates that prose mentions (`If ... is 5`: verify/explain/said.py) hold no value."""
from __future__ import annotations

import re
from typing import Any

from ..checks.gpu.figures_table import FIGURES
from ..figures import within
from .notknown import known
from .said import mentioned

# a rate's unit of time (dcgm.py reads no figure before one as a count)
UNIT = r"(?:s|secs?|seconds?|min|mins|minutes?|h|hrs?|hours?)\b"

# one sample as the exposition prints it (`NAME{labels} value`), or a console's series without its value
_SAMPLE = re.compile(r"^\s*((?:DCGM_FI|DCGM_EXP)_\w+)\{([^{}]*)\}(?:\s+(\S+))?(?:\s+\d+)?\s*$")
_LABEL = re.compile(r'(?<!\w)(\w+)\s*=\s*"([^"]*)"')
_XID_LAST = "DCGM_FI_DEV_XID_ERRORS"
_XID_COUNTED = ("DCGM_FI_DEV_XID_ERRORS_ACTIVE", "DCGM_EXP_XID_ERRORS_COUNT")
_XID = "xid_events[].xid"               # the contract's path, and so its bounds, for an Xid
_BLANK = 140737488355328.0          # DCGM's blank values (2^47 up): no figure (dcgm.py)
# the volatile correctable counter named, long or short, then a rate: `17,657/s`, `~17,700/s`, `5000 per second`
_SBE_VOL = re.compile(r"(?<![\w])(?:DCGM_FI_DEV_)?ECC_SBE_VOL_TOTAL(?!\w)")
# (`17.7k/s`, `1,200 errors per minute`)
_RATE = re.compile(r"(?<![\w.])(\d+(?:,\d{3})*(?:\.\d+)?)\s*([kKM])?\s*(?:errors?\s*)?(?:/\s*|per\s+)(" + UNIT + ")", re.IGNORECASE)
_SECONDS = {"s": 1.0, "m": 60.0, "h": 3600.0}
_SCALE = {"k": 1e3, "m": 1e6}


def _value(text: str | None) -> float | None:
    try:
        number = float((text or "").replace(",", ""))
    except ValueError:
        return None
    return None if number != number or number < 0 or number >= _BLANK else number


def samples(text: str) -> list[tuple[str, dict[str, str], float | None, str]]:
    """Each DCGM sample line: its series, labels, value (None where not shown or blank) and the line."""
    found = []
    for line in text.splitlines():
        m = _SAMPLE.match(line)
        labels = dict(_LABEL.findall(m.group(2))) if m else {}
        if m and labels and not mentioned(line, m.start(1)):
            found.append((m.group(1), labels, _value(m.group(3)), line))
    return found


def rate(text: str) -> dict[str, Any] | None:
    """The highest rate of the volatile correctable counter the text shows, as errors in its unit of time (count,
    seconds); None where none is shown."""
    rates = []
    for line in text.splitlines():
        named = _SBE_VOL.search(line)
        if named and not mentioned(line, named.start()):
            for m in _RATE.finditer(line, named.end()):
                count = float(m.group(1).replace(",", "")) * _SCALE.get((m.group(2) or "").lower(), 1.0)
                if not count < 2 ** 63:
                    continue        # beyond any counter (and a float's range: `1e400` is infinity): no rate
                rates.append((count / _SECONDS[m.group(3)[0].lower()], round(count), _SECONDS[m.group(3)[0].lower()]))
    return {"count": max(rates)[1], "seconds": max(rates)[2]} if rates else None


def detect(text: str) -> bool:
    if "DCGM_" not in text and "ECC_SBE_VOL_TOTAL" not in text:
        return False
    return any(_gpu(labels) for _, labels, _, _ in samples(text)) or any(
        name == _XID_LAST or name in _XID_COUNTED for name, _, _, _ in samples(text)) or rate(text) is not None


def number(label: str | None, path: str) -> int | None:
    """A label's whole number where the facts contract takes it at `path` (a GPU index to 4095, an Xid to 100,000:
    verify/checks/gpu/figures_table.py), else None: ASCII digits only (`str.isdigit` takes `²`, which int() refuses)."""
    text = (label or "").strip()
    return within(FIGURES, path, int(text)) if text.isascii() and text.isdecimal() and len(text) <= 9 else None


def _gpu(labels: dict[str, str]) -> dict[str, Any] | None:
    """The GPU a sample's labels name (None where they name none)."""
    index = number(labels.get("gpu"), "devices[].index")
    uuid = known(labels.get("UUID"))
    bus = known(labels.get("pci_bus_id"))
    if index is None and not (uuid or "").startswith("GPU-") and not bus:
        return None
    return {"index": index, "uuid": uuid if (uuid or "").startswith("GPU-") else None, "pci_bus_id": bus,
            "name": known(labels.get("modelName"))}


def _same(a: dict[str, Any], b: dict[str, Any]) -> bool:
    for key in ("uuid", "pci_bus_id"):
        if a.get(key) and b.get(key):
            return str(a[key]).lower() == str(b[key]).lower()
    return a.get("index") is not None and a.get("index") == b.get("index")


def _xid(name: str, labels: dict[str, str], value: float | None) -> int | None:
    """The Xid a sample shows, 0 for DCGM's last-Xid field at none, None where it shows no Xid."""
    if name in _XID_COUNTED:
        return number(labels.get("xid"), _XID) if value else None
    if name != _XID_LAST:
        return None
    if value is not None:
        return within(FIGURES, _XID, int(value)) if value == int(value) else None
    return number(labels.get("err_code"), _XID)


def read(facts: dict[str, Any], text: str) -> dict[str, Any]:
    """The gpu facts dcgm.py read, with the scrape's GPUs, Xid events and correctable rate added."""
    devices: list[dict[str, Any]] = list(facts.get("devices") or [])
    events: list[dict[str, Any]] = []
    watched = False
    for name, labels, value, line in samples(text):
        gpu = _gpu(labels)
        if gpu is not None:
            dev = next((d for d in devices if _same(d, gpu)), None)
            if dev is None:
                # another GPU by the same number or bus id (two hosts' scrapes pasted together): that name is not its
                for key in ("index", "pci_bus_id"):
                    if gpu[key] is not None and any(d.get(key) == gpu[key] for d in devices):
                        gpu[key] = None
                devices.append(gpu)
            else:
                dev.update({k: v for k, v in gpu.items() if dev.get(k) is None})
            gpu = dev or gpu
        xid = _xid(name, labels, value)
        watched = watched or xid == 0
        named = {k: (gpu or {}).get(k) for k in ("index", "uuid", "pci_bus_id")}
        if xid and not any(e["xid"] == xid and all(e[k] == v for k, v in named.items()) for e in events):
            # once per GPU and Xid (a MIG GPU repeats its series per instance)
            events.append({"xid": xid, **named, "text": line.strip()[:300], "time": None, "source": "nvml"})
    if (growth := rate(text)) is not None:
        unnamed = [d for d in devices if not (d.get("index") is not None or d.get("uuid") or d.get("pci_bus_id"))]
        dev = unnamed[0] if unnamed else devices[0] if len(devices) == 1 else None
        if dev is None:
            dev = {"index": None, "uuid": None, "pci_bus_id": None, "name": None}
            devices.append(dev)
        dev["ecc_correctable_growth"] = growth
    if events or (watched and facts.get("xid_events") is None):
        facts["xid_events"] = [*(facts.get("xid_events") or []), *events]
    facts["devices"] = devices or None
    return facts
