"""Issue 35's hundred-and-eighteenth and hundred-and-nineteenth corpus batches (kernel logs, DCGM, RDMA listings),
fixed by class:
- a GPU inventory (`dcgmi discovery -l`, `nvidia-smi -L`: names, bus ids, UUIDs, no health field) pasted above another
  tool's health read of the same GPUs (`dcgmi nvlink -s`) is not "no health field read": the read that judged every
  listed GPU decides (h800-x8-dcgm-3.1.8-dcgmi-discovery-eight-gpus-0-nvswitches-found-nvlink-s-eight-links-up-each-
  error-counts-zero-llm-action-notes); an inventory alone, or beside a read of only some of its GPUs, still warns."""
from __future__ import annotations

import pytest

from tests.judging import explained, verdict

pytestmark = pytest.mark.unit

# the entry's first two GPUs, as DCGM 3.1.8 printed them
DISCOVERY = """8 GPUs found.
+--------+----------------------------------------------------------------------+
| GPU ID | Device Information                                                   |
+--------+----------------------------------------------------------------------+
| 0      | Name: NVIDIA H800                                                    |
|        | PCI Bus ID: 00000000:18:00.0                                         |
|        | Device UUID: GPU-34bf77d1-c686-6821-79a8-32d326c5039c                |
+--------+----------------------------------------------------------------------+
| 1      | Name: NVIDIA H800                                                    |
|        | PCI Bus ID: 00000000:3E:00.0                                         |
|        | Device UUID: GPU-f5046fa5-3db4-45e8-870a-dc1376becaa5                |
+--------+----------------------------------------------------------------------+
0 NvSwitches found.
"""


def _links(rows: list[str]) -> str:
    gpus = "".join(f"    gpuId {n}:\n        {row}\n" for n, row in enumerate(rows))
    return ("+----------------------+\n|  NvLink Link Status  |\n+----------------------+\nGPUs:\n" + gpus
            + "NvSwitches:\n    No NvSwitches found.\n\nKey: Up=U, Down=D, Disabled=X, Not Supported=_\n")


UP = "U U U U U U U U _ _ _ _ _ _ _ _ _ _"


def test_an_inventory_beside_a_link_read_of_every_gpu_it_lists_is_judged_by_that_read():
    r = explained(DISCOVERY + "\n" + _links([UP, UP]))
    assert (r.name, *verdict(r)) == ("gpu", "pass", None, None), r.summary
    assert any("also read as dcgmi discovery -l" in d for d in r.details)


def test_an_inventory_beside_a_down_link_keeps_the_links_fault():
    r = explained(DISCOVERY + "\n" + _links([UP, "U U U D U U U U _ _ _ _ _ _ _ _ _ _"]))
    assert r.name == "gpu" and r.status in ("warn", "fail") and r.code == "NVLINK_DOWN", r.summary


def test_an_inventory_beside_a_link_read_of_only_some_of_its_gpus_still_warns_not_assessed():
    r = explained(DISCOVERY + "\n" + _links([UP]))
    assert (r.name, *verdict(r)) == ("gpu", "warn", "HEALTH_NOT_ASSESSED", "host"), r.summary


def test_an_inventory_alone_still_warns_not_assessed():
    r = explained(DISCOVERY)
    assert (r.name, *verdict(r)) == ("gpu", "warn", "HEALTH_NOT_ASSESSED", "host"), r.summary


# ------------------------------------------------------------------ dcgm-exporter's Xid series
# dcgm-exporter-pr239-t400-545.29.02-xid-errors-active-xid42-injected-with-dcgmi-test-inject-no-real-fault, verbatim
# (its xid and count as parameters)
ACTIVE = ('DCGM_FI_DEV_XID_ERRORS_ACTIVE{{gpu="0",UUID="GPU-b9f9e81b-bee7-34bc-af17-132ef6592740",device="nvidia0",'
          'modelName="NVIDIA T400 4GB",Hostname="workstation",DCGM_FI_DRIVER_VERSION="545.29.02",'
          'window_size_in_ms="300000",xid="{xid}"}} {count}\n')
# a30-mig-1g.6gb-dcgm-exporter-xid-errors-0-gpu-temp-35-clock-events-count-metric-not-added's series (its value varied)
LAST = ('DCGM_FI_DEV_XID_ERRORS{{gpu="1",UUID="GPU-2d20791a-b4a6-ba59-97f1-e95b99fe5b49",device="nvidia1",'
        'modelName="NVIDIA A30",Hostname="node"}} {xid}\n')


def test_dcgm_exporters_active_xid_count_is_one_event_of_that_xid_as_nvml_relayed_it():
    from verify.explain import dcgm
    text = "# TYPE DCGM_EXP_XID_ERRORS_COUNT gauge\n" + ACTIVE.format(xid=42, count=1)
    facts = dcgm.parse(text)
    assert [(e["xid"], e["index"], e["source"]) for e in facts["xid_events"]] == [(42, 0, "nvml")]
    assert facts["driver"] == "545.29.02"
    r = explained(text)
    assert (r.name, r.code) == ("gpu", "XID_ERROR"), r.summary


def test_dcgm_exporters_last_xid_is_judged_by_the_catalog():
    r = explained(LAST.format(xid=79))        # fallen off the bus
    assert (r.name, *verdict(r)) == ("gpu", "fail", "GPU_LOST", "host"), r.summary


@pytest.mark.parametrize("text", [LAST.format(xid=0), ACTIVE.format(xid=31, count=0)], ids=["last-xid-0", "count-0"])
def test_a_dcgm_xid_series_at_zero_is_no_event(text):
    """No event: a last Xid of 0 is DCGM's clean watch (`[]`, as batch 121's translators read it); a count of 0 in
    the window says nothing more (verify/explain/dcgmseries.py)."""
    from verify.explain import dcgm
    assert not dcgm.parse(text).get("xid_events")
