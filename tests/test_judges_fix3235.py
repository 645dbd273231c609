"""Issue 35's thirty-second and thirty-fifth corpus batches, fixed by class: dcgm-exporter's Prometheus scrape is read
whole (its `# HELP`/`# TYPE` lines name fields and hold no value; its temperature, power and SM clock series are the
GPU's readings, its driver label the driver), so an idle GPU whose every exported health series is nominal passes as
its translation does."""
from __future__ import annotations

import pytest

from verify import explain as ex
from verify.options import Options

pytestmark = pytest.mark.unit


def verdict(r):
    return r.status, r.code, r.owner


def explained(text: str, name: str = "scrape.txt"):
    return ex.explain_text(text, name, Options())


# ------------------------------------------------------------------ dcgm-exporter's scrape, as `curl :9400/metrics`
_LABELS = ('{gpu="1",UUID="GPU-0d9e3c4a-1111-2222-3333-444455556666",pci_bus_id="00000000:41:00.0",device="nvidia1",'
           'modelName="NVIDIA A10G",Hostname="node-a",DCGM_FI_DRIVER_VERSION="570.86.15"}')


def _scrape(**values: str) -> str:
    lines = []
    for field, value in values.items():
        lines += [f"# HELP {field} Number of remapped rows for uncorrectable errors", f"# TYPE {field} gauge",
                  f"{field}{_LABELS} {value}"]
    return "\n".join(lines) + "\n"


IDLE = {"DCGM_FI_DEV_SM_CLOCK": "210", "DCGM_FI_DEV_GPU_TEMP": "29", "DCGM_FI_DEV_POWER_USAGE": "15.250000",
        "DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS": "0", "DCGM_FI_DEV_ROW_REMAP_FAILURE": "0"}


def test_an_idle_gpu_scraped_from_dcgm_exporter_is_read_with_its_readings_and_passes():
    r = explained(_scrape(**IDLE))
    assert verdict(r) == ("pass", None, None), r.summary
    assert "NVIDIA A10G" in r.summary and "570.86.15" in r.summary


def test_the_exporters_help_and_type_lines_are_no_gpu_of_their_own():
    facts = ex.dcgm.parse(_scrape(**IDLE))
    (dev,) = facts["devices"]
    assert dev["index"] == 1 and dev["temperature_c"] == 29.0 and dev["power_w"] == 15.25 and dev["sm_clock_mhz"] == 210
    assert facts["driver"] == "570.86.15"
    # a HELP line alone names a field and no value: no device comes of it
    assert ex.dcgm.parse("# HELP DCGM_FI_DEV_ECC_DBE_VOL_TOTAL Total double-bit volatile ECC errors.\n")["devices"] is None


def test_a_fault_in_the_scrape_still_fails_beside_its_help_lines():
    r = explained(_scrape(**IDLE, DCGM_FI_DEV_ECC_DBE_VOL_TOTAL="2"))
    assert verdict(r) == ("fail", "ECC_UNCORRECTABLE", "host")


def test_a_blank_figure_of_the_exporter_is_not_a_reading():
    # DCGM_FP64_BLANK (2^47) for a power draw the GPU does not report: unknown, never a 140 TW draw
    facts = ex.dcgm.parse(_scrape(DCGM_FI_DEV_POWER_USAGE="140737488355328.000000", DCGM_FI_DEV_GPU_TEMP="30"))
    assert "power_w" not in facts["devices"][0]
