# mypy: disable-error-code="arg-type, typeddict-item, return-value"
# (judges take their TypedDict facts; these tests hand them partial or malformed facts, as a JSON record would)
"""The DataLoader advisor's pure parts on hand-made measurements: recommendation, /dev/shm need, the check's
verdict, the table, and the dependency-free SVG."""
from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest

from verify.atomic import write_atomic
from verify.checks.dataloader import judge
from verify.options import MiB, Options
from verify.shared import dataloader as dl
from verify.shared.svgplot import Plot, Series, render

pytestmark = pytest.mark.unit

BATCH = 18 * MiB


def row(workers: int, rate: float, prefetch: int = 2, persistent: bool = False, pin: bool = False, **extra) -> dict:
    r = {**dl.setting(workers, prefetch, persistent, pin), "ok": True, "samples": 384, "seconds": 1.0,
         "samples_per_s": rate}
    r.update(extra)
    return r


def handmade_facts(rows: list[dict], shm_free: int = 2048 * MiB, usable: int = 4, backend: str = "torchvision") -> dict:
    return {"cpus": {"quota": None, "quota_source": "cgroup v2 cpu.max", "affinity": usable, "usable": usable},
            "shm": {"path": "/dev/shm", "size": shm_free, "free": shm_free}, "gpu": False, "backend": backend,
            "torch": "2.14.1", "sizes": {"samples": 192, "batch_size": 32, "image_size": 256, "crop": 224, "epochs": 2},
            "sample_shape": [3, 224, 224], "sample_bytes": BATCH // 32, "batch_bytes": BATCH, "measurements": rows}


SWEEP = [row(0, 100), row(1, 180), row(2, 330), row(3, 420), row(4, 430), row(4, 425, 4), row(4, 520, 2, True),
         row(4, 530, 4, True)]


def test_recommends_the_cheapest_setting_within_tolerance_of_the_fastest():
    advice = dl.recommend(handmade_facts(SWEEP))
    # 520 is within 5 % of 530 and uses prefetch 2: cheaper, so it is the one
    assert advice["setting"] == {"num_workers": 4, "prefetch_factor": 2, "persistent_workers": True, "pin_memory": False}
    assert advice["samples_per_s"] == 520 and advice["fastest_samples_per_s"] == 530
    assert advice["speedup_vs_0_workers"] == 5.2
    assert advice["shm_needed_bytes"] == 4 * 2 * BATCH and advice["shm_ok"] is True and not advice["warnings"]


def test_shm_need_is_workers_times_prefetch_times_batch():
    assert dl.shm_needed(row(3, 1, 4), 10) == 120 and dl.shm_needed(row(0, 1), 10) == 0


def test_small_shm_warns_and_names_the_best_setting_that_fits():
    advice = dl.recommend(handmade_facts(SWEEP, shm_free=64 * MiB))
    assert advice["shm_ok"] is False
    assert advice["warnings"][0].startswith("/dev/shm too small: num_workers=4, prefetch_factor=2")
    assert "needs 144 MiB" in advice["warnings"][0] and "64 MiB free" in advice["warnings"][0]
    # 64 MiB holds 3 batches of 18 MiB: 1 worker x 2 (36 MiB) fits, 2 x 2 (72 MiB) does not
    assert advice["fitting"] == {"num_workers": 1, "prefetch_factor": 2, "persistent_workers": False, "pin_memory": False}


def test_settings_that_died_of_shm_are_reported_and_excluded():
    rows = [row(0, 100), row(1, 180), {**row(2, 0), "ok": False, "samples_per_s": 0.0,
                                      "error": "RuntimeError: DataLoader worker (pid 7) is killed by signal: Bus error.",
                                      "shm_error": "DataLoader worker (pid 7) is killed by signal: Bus error."}]
    facts = handmade_facts(rows, shm_free=64 * MiB, usable=2)
    advice = dl.recommend(facts)
    assert advice["setting"]["num_workers"] == 1 and advice["failed"] == 1
    assert any("Bus error" in w for w in advice["warnings"])
    r = judge(facts, Options())
    assert (r.status, r.code, r.owner) == ("warn", "SHM_TOO_SMALL_FOR_LOADER", "job") and "--shm-size" in (r.remedy or "")


def test_no_working_setting_fails_the_check():
    facts = handmade_facts([{**row(0, 0), "ok": False, "error": "ValueError: broken", "shm_error": None}])
    assert dl.recommend(facts)["setting"] is None
    r = judge(facts, Options())
    assert (r.status, r.code) == ("fail", "LOADER_FAILED") and "broken" in r.summary


def test_when_workers_do_not_help_zero_is_recommended_and_said_so():
    advice = dl.recommend(handmade_facts([row(0, 500), row(1, 300), row(2, 490)], usable=2))
    assert advice["setting"]["num_workers"] == 0 and advice["shm_needed_bytes"] == 0
    assert "did not pay for themselves" in advice["note"]


def test_check_passes_with_the_setting_in_its_summary_and_metrics():
    r = judge(handmade_facts(SWEEP), Options())
    assert r.status == "pass" and r.code is None
    assert r.summary.startswith("num_workers=4, prefetch_factor=2, persistent_workers=True: 520 samples/s (5.2x")
    assert r.metrics["shm_needed"].value == 8 * BATCH
    fallback = judge(handmade_facts(SWEEP, backend="numpy"), Options())
    assert "numpy fallback" in fallback.summary


def test_table_marks_the_recommendation_and_says_the_shm_formula():
    facts = handmade_facts(SWEEP, shm_free=64 * MiB)
    text = dl.format_report(facts, dl.recommend(facts))
    line = next(ln for ln in text.splitlines() if "<- recommended" in ln)
    assert line.split()[:4] == ["4", "2", "True", "False"]
    assert "recommended: DataLoader(dataset, batch_size=32, num_workers=4" in text
    assert "/dev/shm needed: 144 MiB = 4 workers x prefetch 2 x 18 MiB per batch" in text and "TOO SMALL" in text
    assert "WARNING: /dev/shm too small" in text and "--shm-size" in text


def test_worker_counts_cover_zero_to_the_quota():
    assert dl.worker_counts(2) == [0, 1, 2] and dl.worker_counts(8) == list(range(9))
    assert dl.worker_counts(32) == [0, 1, 2, 4, 6, 8, 16, 32] and dl.worker_counts(12, cap=3) == [0, 1, 2, 3]


SVG = "{http://www.w3.org/2000/svg}"


def _svg(text: str) -> ET.Element:
    root = ET.fromstring(text)
    assert root.tag == f"{SVG}svg"
    return root


def _texts(root: ET.Element) -> list[str]:
    return [t.text or "" for t in root.iter(f"{SVG}text")]


def test_svg_is_valid_and_draws_what_it_is_given(tmp_path):
    facts = handmade_facts(SWEEP)
    advice = dl.recommend(facts)
    svg = dl.plot(facts, advice)
    root = _svg(svg)
    assert (root.get("width"), root.get("height")) == ("900", "560")
    ok = [r for r in facts["measurements"] if r["ok"]]
    dots = [c for c in root.iter(f"{SVG}circle") if c.get("fill") != "none"]
    rings = [c for c in root.iter(f"{SVG}circle") if c.get("fill") == "none"]
    assert len(dots) == len(ok) and len(rings) == 1           # one marker per measurement, the recommendation ringed
    colours = {c.get("fill") for c in dots}
    assert len(colours) >= 2                                  # several series, each its own colour
    texts = _texts(root)
    assert texts[0].startswith("DataLoader samples/s vs num_workers") and "num_workers" in texts
    assert "samples/s" in texts and any(t.startswith("ring: recommended") for t in texts)
    assert any(t.startswith("prefetch 2") for t in texts)     # the legend names the series
    path = tmp_path / "plot.svg"
    write_atomic(str(path), svg.encode())
    assert path.read_text() == svg and [p.name for p in tmp_path.iterdir()] == ["plot.svg"]


def test_render_copes_with_a_single_point_and_failures():
    root = _svg(render(Plot("t", "x", "y", [Series("only", [(0.0, 5.0)])], failed=[1.0])))
    assert (root.get("width"), root.get("height")) == ("900", "560")
    assert not list(root.iter(f"{SVG}polyline"))              # one point: a marker, no line
    assert len([ln for ln in root.iter(f"{SVG}line") if ln.get("stroke") == "#d62728"]) == 4   # two red crosses
    assert "failed" in _texts(root)


def test_svg_escapes_its_text():
    root = _svg(render(Plot("a < b & c", "x", "y", [Series("<tag>", [(1.0, 2.0), (2.0, 3.0)])])))
    assert "a < b & c" in _texts(root) and "<tag>" in _texts(root)
    assert len(list(root.iter(f"{SVG}polyline"))) == 1


def test_shm_that_cannot_hold_the_default_prefetch_at_the_quota_warns_even_when_the_pick_fits():
    facts = handmade_facts([row(0, 100), row(1, 200), row(2, 190)], shm_free=64 * MiB, usable=2)
    advice = dl.recommend(facts)
    assert advice["setting"]["num_workers"] == 1 and advice["shm_ok"] is True
    assert advice["shm_caps_in_flight_batches"] == 3
    assert any("num_workers=2 (the CPU quota) with the default prefetch_factor=2 needs 72 MiB" in w
               for w in advice["warnings"])
    r = judge(facts, Options())
    assert (r.status, r.code) == ("warn", "SHM_TOO_SMALL_FOR_LOADER")
