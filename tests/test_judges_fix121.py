"""Issue 35's hundred-and-twenty-first corpus batch (monitoring output: dcgm-exporter scrapes, DCGM, NVSentinel), fixed
by class in `verify explain` (verify/explain/dcgmseries.py, through dcgm.py's DCGM field values):
- a dcgm-exporter scrape lists the GPUs its series' labels name (`gpu`, `UUID`, `pci_bus_id`, `modelName`), whatever
  the series: one of series no field holds (C2C link status, an NVLink BER, free framebuffer) is the GPUs with no
  health read, not assessed, never a pass; a sample naming no GPU (an NVSwitch's) lists none;
- the Xid series: DCGM_FI_DEV_XID_ERRORS's value is the GPU's last Xid, its `err_code` label where a console lists the
  series without its value; 0 is none seen (`xid_events` []), and `err_msg="Unknown Error"` beside it no NVML error;
  DCGM_FI_DEV_XID_ERRORS_ACTIVE / DCGM_EXP_XID_ERRORS_COUNT count Xid N in a window: 0 is no event;
- the volatile correctable ECC counter's rate as a monitor's report gives it (`ECC_SBE_VOL_TOTAL` rate, `17,657/s`):
  the highest rate is the correctable growth a second, never the counter's total.
The batch's other disagreement is a strict expected failure (tests/test_explain.py: the Xid 31 is prose only)."""
from __future__ import annotations

import pytest

from tests.judging import explained, verdict
from verify.explain import dcgm, dcgmseries

pytestmark = pytest.mark.unit

# gb200-x4-dcgm-exporter-scrape-c2c-link-status-1-nvlink-symbol-ber-0-ecc-sbe-series-dropped-by-exporter (its head)
GB200_SCRAPE = """\
[root@l20a-new-j88eh3ma-000001 ~]# curl localhost:9400/metrics
# HELP DCGM_FI_DEV_C2C_LINK_STATUS C2C link status(active or inactive)
# TYPE DCGM_FI_DEV_C2C_LINK_STATUS gauge
DCGM_FI_DEV_C2C_LINK_STATUS{gpu="0",UUID="GPU-2e2b6342-3996-51b9-5480-e20df571e09c",pci_bus_id="00000008:01:00.0",device="nvidia0",modelName="NVIDIA GB200",Hostname="76e4860421c0"} 1
DCGM_FI_DEV_C2C_LINK_STATUS{gpu="1",UUID="GPU-67ff7ed1-19b8-1998-84ef-59fc0cbb0f3e",pci_bus_id="00000009:01:00.0",device="nvidia1",modelName="NVIDIA GB200",Hostname="76e4860421c0"} 1
# HELP DCGM_FI_DEV_NVLINK_COUNT_SYMBOL_BER_FLOAT BER for symbol errors
# TYPE DCGM_FI_DEV_NVLINK_COUNT_SYMBOL_BER_FLOAT gauge
DCGM_FI_DEV_NVLINK_COUNT_SYMBOL_BER_FLOAT{gpu="0",UUID="GPU-2e2b6342-3996-51b9-5480-e20df571e09c",pci_bus_id="00000008:01:00.0",device="nvidia0",modelName="NVIDIA GB200",Hostname="76e4860421c0"} 0.000000
"""
# rtx-3090-debian-dcgm-exporter-pci-bus-id-label-example-xid-errors-0-fb-free-24268-mib (whole)
RTX3090 = """\
# HELP DCGM_FI_DEV_XID_ERRORS Value of the last XID error encountered.
# TYPE DCGM_FI_DEV_XID_ERRORS gauge
DCGM_FI_DEV_XID_ERRORS{gpu="0",UUID="GPU-96be9fff-fdfd-9b87-88d4-fe5b9a012148",pci_bus_id="00000000:08:00.0",device="nvidia0",modelName="NVIDIA GeForce RTX 3090",Hostname="debian",err_code="0",err_msg="Unknown Error"} 0
# HELP DCGM_FI_DEV_FB_FREE Framebuffer memory free (in MiB).
# TYPE DCGM_FI_DEV_FB_FREE gauge
DCGM_FI_DEV_FB_FREE{gpu="0",UUID="GPU-96be9fff-fdfd-9b87-88d4-fe5b9a012148",pci_bus_id="00000000:08:00.0",device="nvidia0",modelName="NVIDIA GeForce RTX 3090",Hostname="debian"} 24268
"""
# dcgm-exporter-3.3.7-xid-errors-metric-err-code-45-preemptive-cleanup-only-xid62-said-in-dmesg-not-shown (whole):
# a Prometheus console's series, its value not shown
XID45 = ('DCGM_FI_DEV_XID_ERRORS{err_code="45", err_msg="Preemptive cleanup, due to previous errors -- Most likely to '
         'see when running multiple cuda", job="dcgm-exporter"}\n')
# gb200-r06-01-nvsentinel-monitor-liveness-killed-49-times-correctable-ecc-17657-per-s-under-load-dcgm-stalls (the
# monitor's loop and the load table's rows)
R06 = """\
dcgm_health_check has not returned after 45.6s (deadline 45.0s)
  -> GpuDcgmConnectivityFailure published
| Signal | Under load | Idle now |
| --- | --- | --- |
| `ECC_SBE_VOL_TOTAL` rate | 4,647/s, then 17,657/s | **exactly 0**, for 11 consecutive samples over 2.75 days |
| `dcgmi health` response | hangs past the 45s deadline | **0s** |
"""


def test_a_scrape_of_series_no_field_holds_lists_its_gpus_not_assessed():
    facts = dcgm.parse(GB200_SCRAPE)
    assert [(d["index"], d["uuid"], d["pci_bus_id"], d["name"]) for d in facts["devices"]] == [
        (0, "GPU-2e2b6342-3996-51b9-5480-e20df571e09c", "00000008:01:00.0", "NVIDIA GB200"),
        (1, "GPU-67ff7ed1-19b8-1998-84ef-59fc0cbb0f3e", "00000009:01:00.0", "NVIDIA GB200")]
    assert facts.get("xid_events") is None              # no Xid series: the Xids were not read
    assert verdict(explained(GB200_SCRAPE, "metrics.txt")) == ("warn", "HEALTH_NOT_ASSESSED", "host")


def test_the_last_xid_at_0_is_none_seen_and_its_unknown_error_text_no_nvml_error():
    facts = dcgm.parse(RTX3090)
    assert facts["xid_events"] == []
    assert [d["uuid"] for d in facts["devices"]] == ["GPU-96be9fff-fdfd-9b87-88d4-fe5b9a012148"]
    # the GPU answers and raised nothing, but none of its health is read: never a pass
    assert verdict(explained(RTX3090, "metrics.txt")) == ("warn", "HEALTH_NOT_ASSESSED", "host")


def test_the_last_xid_is_the_series_value_of_the_gpu_its_labels_name():
    fell_off = RTX3090.replace('err_code="0",err_msg="Unknown Error"} 0',
                               'err_code="79",err_msg="GPU has fallen off the bus"} 79')
    [event] = dcgm.parse(fell_off)["xid_events"]
    assert (event["xid"], event["index"], event["uuid"], event["source"]) == (
        79, 0, "GPU-96be9fff-fdfd-9b87-88d4-fe5b9a012148", "nvml")
    assert verdict(explained(fell_off, "metrics.txt")) == ("fail", "GPU_LOST", "host")


def test_a_console_series_without_its_value_is_read_by_its_err_code():
    facts = dcgm.parse(XID45)
    assert facts["devices"] is None                     # the series names no GPU
    assert [(e["xid"], e["index"], e["source"]) for e in facts["xid_events"]] == [(45, None, "nvml")]
    # a process's channels torn down after its own error: the job's, no drain
    assert verdict(explained(XID45, "query.txt")) == ("warn", "XID_ERROR", "job")


def test_an_xid_counted_in_the_exporters_window_is_an_event_and_a_count_of_0_none():
    line = ('DCGM_EXP_XID_ERRORS_COUNT{gpu="0",UUID="GPU-b9f9e81b-bee7-34bc-af17-132ef6592740",device="nvidia0",'
            'modelName="NVIDIA T400 4GB",Hostname="workstation",window_size_in_ms="300000",xid="%s"} %s\n')
    assert [e["xid"] for e in dcgm.parse(line % ("79", "1") + line % ("43", "0"))["xid_events"]] == [79]
    assert dcgm.parse(line % ("43", "0")).get("xid_events") is None     # one Xid's count says nothing of the others


def test_a_sample_naming_no_gpu_lists_none():
    nvswitch = 'DCGM_FI_DEV_NVSWITCH_TEMPERATURE_CURRENT{nvswitch="0",Hostname="node-1"} 41\n'
    assert not dcgm.detect(nvswitch)
    assert verdict(explained(nvswitch, "metrics.txt")) == ("skip", "FACTS_INCOMPLETE", None)


def test_a_monitors_correctable_rate_is_growth_a_second_never_the_total():
    facts = dcgm.parse(R06)
    [dev] = facts["devices"]
    assert dev["ecc_correctable_growth"] == {"count": 17657, "seconds": 1.0}
    assert dev.get("ecc_volatile_correctable") is None
    assert verdict(explained(R06, "issue.md")) == ("warn", "ECC_UNCORRECTABLE", "host")


def test_a_rate_prose_mentions_is_none():
    assert dcgmseries.rate("If `ECC_SBE_VOL_TOTAL` rises faster than 20/s, cordon the node.") is None
    assert not dcgm.detect("If `ECC_SBE_VOL_TOTAL` rises faster than 20/s, cordon the node.\n")


def test_a_rate_keeps_its_unit_of_time_and_is_no_count_in_a_field_table():
    # gb200-correctable-ecc-storm-dcgm-fields' row: the total beside its rate
    row = "| `DCGM_FI_DEV_ECC_SBE_VOL_TOTAL` | 9.6e9, rising at ~17,700/s under load |\n"
    [dev] = dcgm.parse(row)["devices"]
    assert (dev["ecc_volatile_correctable"], dev["ecc_correctable_growth"]) == (9_600_000_000, {"count": 17700, "seconds": 1.0})
    [dev] = dcgm.parse("| DCGM_FI_DEV_ECC_SBE_VOL_TOTAL | 1,200/min |\n")["devices"]
    assert (dev.get("ecc_volatile_correctable"), dev["ecc_correctable_growth"]) == (None, {"count": 1200, "seconds": 60.0})
    assert dcgmseries.rate("ECC_SBE_VOL_TOTAL climbs ~17.7k/s under load") == {"count": 17700, "seconds": 1.0}
