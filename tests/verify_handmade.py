"""Hand-made facts (not from hardware): a healthy 8x H100 SXM node as the gpu and nccl probes would record it.

Tests change one field at a time to drive each judge branch. `python -m tests.verify_handmade DIR` writes
them as a --save-facts folder (tests/data/facts-handmade/h100-8gpu-handmade/ is that output).
"""
from __future__ import annotations

import copy
import json
import sys
from pathlib import Path
from typing import Any

from verify.checks.train import trainer

H100 = "NVIDIA H100 80GB HBM3"


def h100_device(index: int) -> dict[str, Any]:
    return {"index": index, "unsupported": {}, "name": H100, "uuid": f"GPU-handmade-0000-0000-0000-00000000000{index}",
            "pci_bus_id": f"00000000:{0x18 + 16 * index:02X}:00.0", "memory_bytes": 85520809984, "cc": "9.0",
            "persistence": True, "mig": [False, False], "ecc": [True, True], "ecc_volatile_uncorrectable": 0,
            "ecc_aggregate_uncorrectable": 0, "retired_pages_pending": False,
            "row_remap": {"correctable": 0, "uncorrectable": 0, "pending": 0, "failed": 0},
            "throttle_reasons": 0x1, "throttle_reasons_read": 0x1FF, "pcie_gen": 1, "pcie_width": 16, "pcie_gen_max": 5, "pcie_width_max": 16,
            "pcie_gen_gpu_max": 5, "nvlink": [True] * 18, "temperature_c": 34, "temperature_slowdown_c": 87,
            "power_w": 72.0, "power_limit_w": 700.0, "power_default_limit_w": 700.0}


def gpu_facts(n: int = 8) -> dict[str, Any]:
    return {
        "torch": "2.14.1+cu130", "torch_cuda": "13.0", "driver_min_env": "580.65.06", "cuda_visible_devices": "unset",
        "device_nodes": True, "nvml_library": True, "nvml_error": "none", "driver": "580.95.05", "cuda_driver": "13.0",
        "devices": [h100_device(i) for i in range(n)], "cuda_available": True, "cuda_init_error": "none",
        "xid_events": [],
        "torch_devices": n, "arch_list": ["sm_75", "sm_80", "sm_86", "sm_90", "sm_100", "sm_120", "compute_120"],
        "capabilities": ["9.0"] * n, "kernels": [{"index": i, "max_abs_error": 3.1e-5, "error": None} for i in range(n)],
        "perf": [{"index": i, "d2d_GBps": 2990.0, "h2d_GBps": 53.1, "d2h_GBps": 52.4, "bf16_TFLOPs": 781.5,
                  "pcie_under_load": {"gen": 5, "width": 16, "throttle_reasons": 0x4}, "throttle_under_load": 0x4}
                 for i in range(n)],
        "sdc": [{"index": i, "name": H100, "sm_count": 132, "digests": ["9f1c2a7e0b3d4c55"] * 4} for i in range(n)],
    }


# what a node where torch sees no GPU records (a CPU build, no device nodes, no NVML): no torch device, no kernel
CPU_BUILD: dict[str, Any] = {"torch_devices": 0, "cuda_available": False, "capabilities": None, "kernels": None,
                             "perf": None, "sdc": None}


def nccl_rows(world: int, peak: float) -> list[dict[str, Any]]:
    rows = []
    for size, frac in ((1 << 20, 0.1), (4 << 20, 0.3), (16 << 20, 0.6), (64 << 20, 0.8), (256 << 20, 0.95), (1 << 30, 1.0)):
        factor = 2 * (world - 1) / world if world > 0 else 0.0
        busbw = round(peak * frac, 3) if factor else 0.0
        algbw = round(busbw / factor, 3) if factor else round(900.0 * frac, 3)    # world 1: a copy, no bus
        rows.append({"size": size, "count": size // 4, "type": "float", "redop": "sum",
                     "time_us": round(size / (algbw * 1e9) * 1e6, 1), "algbw": algbw, "busbw": busbw, "wrong": 0})
    return rows


def nccl_facts(world: int = 8, peak: float = 472.0) -> dict[str, Any]:
    return {"distributed": True, "nccl_env": {}, "gloo_socket_ifname": None, "shm_bytes": 2 << 30, "memlock_bytes": "unlimited",
            "infiniband": False, "gpus": world, "nccl_available": True, "backend": "nccl", "nccl_version": "2.27.7",
            "device_name": H100, "timeout_s": 60.0, "world_size": world,
            "mode": f"{world} local process(es), one per GPU", "nodes": 1, "sizes": nccl_rows(world, peak), "error": "none",
            "nccl_log": {"network": "Socket", "interface": "lo", "nvls": True, "transports": ["P2P/CUMEM"]}}


def variant(base: dict[str, Any], **changes: Any) -> dict[str, Any]:
    """`base` with `changes`; an nccl record moved across nodes (nodes > 1) is formed by torchrun, as a real one is:
    ranks the probe spawns itself all run on one node, and such a record claiming more nodes is refused."""
    out = copy.deepcopy(base)
    out.update(changes)
    nodes, world = out.get("nodes"), out.get("world_size")
    if isinstance(nodes, int) and nodes > 1 and "mode" not in changes and "local process" in str(out.get("mode")):
        out["mode"] = f"torchrun group: rank 0 of {world} (local rank 0), n1:29500"
        out["rank"] = 0
    return out


def lost_among_healthy() -> dict[str, Any]:
    """8x H100: device 3 fell off the bus (NVML GPU_IS_LOST on its handle), torch sees the other 7."""
    facts = gpu_facts()
    facts["devices"][3] = {"index": 3, "lost": True, "nvml_errors": {"handle": "GpuIsLost"}, "unsupported": {},
                           "pci_bus_id": "00000000:48:00.0", "name": None}
    facts["torch_devices"] = 7
    facts["cuda_visible_devices"] = "0,1,2,4,5,6,7"
    for key in ("kernels", "perf", "sdc"):
        facts[key] = [dict(e, index=i) for i, e in enumerate(e for e in facts[key] if e["index"] != 3)]
    facts["capabilities"] = ["9.0"] * 7
    return facts


def visible_by_uuid() -> dict[str, Any]:
    """8x H100, the job sees one GPU by UUID (CUDA_VISIBLE_DEVICES=GPU-...5): torch device 0 is NVML device 5."""
    facts = gpu_facts()
    uuid = facts["devices"][5]["uuid"]
    facts.update(cuda_visible_devices=uuid, torch_devices=1, capabilities=["9.0"], torch_map=None,
                 kernels=[{"index": 0, "max_abs_error": 3.1e-5, "error": None}],
                 perf=[dict(facts["perf"][0], index=0)], sdc=[dict(facts["sdc"][0], index=0)])
    return facts


A100_40 = "NVIDIA A100-SXM4-40GB"


def mig_slice() -> dict[str, Any]:
    """One A100 40GB in MIG mode; the job got its 1g.5gb slice (a seventh of the GPU): small figures, no fault."""
    dev = h100_device(0)
    dev.update(name=A100_40, cc="8.0", nvlink=[True] * 12, mig=[True, True], power_limit_w=400.0,
               power_default_limit_w=400.0, pcie_gen_max=4, pcie_gen_gpu_max=4, temperature_slowdown_c=90,
               mig_devices=[{"uuid": "MIG-handmade-aaaa-0000", "profile": "1g.5gb", "slices": 1, "total_slices": 7}])
    return {**gpu_facts(1), "devices": [dev], "cuda_visible_devices": "MIG-handmade-aaaa-0000", "torch_devices": 1,
            "capabilities": ["8.0"],
            "torch_map": [{"torch_index": 0, "name": f"{A100_40} MIG 1g.5gb", "uuid": None, "pci_bus_id": None,
                           "mig_uuid": "MIG-handmade-aaaa-0000"}],
            "perf": [{"index": 0, "d2d_GBps": 190.0, "h2d_GBps": 3.1, "d2h_GBps": 3.0, "bf16_TFLOPs": 38.0,
                      "pcie_under_load": None, "throttle_under_load": 0x4}],
            "sdc": [{"index": 0, "name": f"{A100_40} MIG 1g.5gb", "sm_count": 14, "digests": ["9f1c2a7e0b3d4c55"] * 4}]}


def unknown_model_slow_peer(slow: float = 0.5) -> dict[str, Any]:
    """4 GPUs of a model with no baseline; device 2 copies at `slow` x its peers."""
    facts = gpu_facts(4)
    for dev in facts["devices"]:
        dev["name"] = "NVIDIA Future GPU 96GB"
    for p in facts["perf"]:
        p.update(d2d_GBps=5000.0, h2d_GBps=100.0, d2h_GBps=100.0, bf16_TFLOPs=1500.0)
    facts["perf"][2]["d2d_GBps"] = 5000.0 * slow
    for e in facts["sdc"]:
        e["name"] = "NVIDIA Future GPU 96GB"
    return facts


def handmade_steps(count: int = 30, first: float = 4.9, last: float = 1.2) -> list[dict[str, Any]]:
    return [{"step": i + 1, "loss": first + (last - first) * i / (count - 1), "checksum": f"{0xabc000 + i:016x}"}
            for i in range(count)]


def handmade_train_facts(gpu: bool = False, tokens_per_s: float | None = None) -> dict[str, Any]:
    """A healthy run as the probe records it: world size 2, one rank on each of nodes n1 and n2."""
    shape = trainer.SHAPES["gpu" if gpu else "cpu"]
    steps = handmade_steps()
    timed = len(steps) - trainer.WARMUP
    tokens = timed * shape.batch_per_rank * shape.seq_len * 2
    seconds = tokens / tokens_per_s if tokens_per_s else 2.5
    loader = {"file_bytes": 532480, "samples": 2048, "zero_copy": True, "cpu_share": 1, "shm": {"free": 1 << 30},
              "setting": {"num_workers": 0, "prefetch_factor": None, "persistent_workers": False, "pin_memory": gpu},
              "sweep": [{"num_workers": 0, "ok": True, "samples_per_s": 5000.0}]}
    ranks = [{"rank": r, "local_rank": 0, "node": f"n{r + 1}", "steps": copy.deepcopy(steps), "bf16": gpu,
              "init_s": 0.4, "first_step_s": 0.2, "planned_steps": len(steps), "timed_steps": timed,
              "timed_s": seconds, "wall_s": 6.0, "loader": copy.deepcopy(loader)} for r in range(2)]
    return {"distributed": True, "gpus": 1 if gpu else 0, "backend": "nccl" if gpu else "gloo", "emulated": False,
            "device_name": H100 if gpu else None, "config": trainer.shape_facts(shape, "gpu" if gpu else "cpu"),
            "world_size": 2, "nodes": 2, "mode": "torchrun group: rank 0 of 2, n1:29500", "ranks": ranks,
            "failures": []}


def make_report(status: str = "pass", checks: list[dict[str, Any]] | None = None, **extra: Any) -> dict[str, Any]:
    """A hand-made verify report (schema 2) of one H100 node: what signed attestations carry."""
    check: dict[str, Any] = {"name": "gpu", "status": "pass", "summary": "1 GPU(s) (NVIDIA H100 80GB HBM3)", "details": [],
             "metrics": {}, "remedy": None, "code": None, "owner": None, "duration_s": 1.0,
             "data": {"driver": "580.65.06", "devices": [{"index": 0, "name": "NVIDIA H100 80GB HBM3"}]}}
    return {"schema_version": 2, "tool": {"name": "verify", "version": "1"}, "created": "2026-01-01T00:00:00Z",
            "status": status, "environment": {"driver": "580.65.06", "torch": "2.15.0", "cuda": "13.2",
                                              "hostname": "c0ffee"},
            "options": {}, "checks": checks if checks is not None else [check], **extra}


CASES = {"h100-8gpu-handmade": gpu_facts, "lost-gpu-among-healthy-handmade": lost_among_healthy,
         "cuda-visible-devices-uuid-handmade": visible_by_uuid, "mig-slice-handmade": mig_slice,
         "unknown-model-slow-peer-handmade": unknown_model_slow_peer}


def write_dir(root: Path) -> None:
    """Every hand-made case as a --save-facts folder under root/<case>/ (facts schema 3)."""
    from verify.checks import gpu, nccl
    from verify.options import Options
    for case, build in CASES.items():
        directory = root / case
        directory.mkdir(parents=True, exist_ok=True)
        records = [("gpu", gpu, build())] + ([("nccl", nccl, nccl_facts())] if case == "h100-8gpu-handmade" else [])
        for name, module, facts in records:
            result = module.judge(facts, Options()).to_dict()
            (directory / f"{name}.json").write_text(json.dumps(
                {"check": name, "facts_schema": 3, "facts": facts, "result": result}, indent=1) + "\n")
        host = {"facts_schema": 3, "hostname": "handmade-h100-node" if case == "h100-8gpu-handmade" else f"{case.removesuffix('-handmade')}-node", "recorded": "2026-11-22T00:00:00Z",
                "handmade": True, "tool": {"name": "verify", "version": "2.0.0"}, "checks": [r[0] for r in records],
                "environment": {"python": "3.12.3", "torch": "2.14.1+cu130", "torch_build": "cuda", "cuda": "13.0"},
                "options": {}}
        (directory / "host.json").write_text(json.dumps(host, indent=1) + "\n")


if __name__ == "__main__":
    write_dir(Path(sys.argv[1]))


def judged_both_ways(check: str, facts: dict[str, Any]) -> tuple[Any, Any]:
    """The check's verdict on facts measured here and on the same facts replayed from a record."""
    from verify import judging
    from verify.checks import CHECKS
    from verify.options import Options
    return (judging.judge(CHECKS[check], facts, Options()),
            judging.judge(CHECKS[check], facts, Options(), source=f"r/{check}.json"))


def assert_refused(check: str, facts: dict[str, Any], *said: str) -> None:
    """Facts no machine produces: measured here, no measurement (MEASUREMENT_INVALID); replayed, a record that
    cannot be true (FACTS_INVALID, the job's); the summary names what does not hold."""
    live, replayed = judged_both_ways(check, facts)
    assert (live.status, live.code) == ("fail", "MEASUREMENT_INVALID"), live.summary
    assert (replayed.status, replayed.code, replayed.owner) == ("fail", "FACTS_INVALID", "job"), replayed.summary
    assert all(s in replayed.summary for s in said), replayed.summary
