"""DataLoader advisor: which num_workers / prefetch_factor / persistent_workers / pin_memory fit this container.

`python -m verify bench --dataloader` measures samples/s of a realistic per-sample cost (decode and augment
generated JPEGs) across num_workers from 0 up to the CPU quota of this cgroup, then across prefetch_factor,
persistent_workers and (with a GPU) pin_memory; recommends the best setting; computes the /dev/shm it needs
(workers x prefetch_factor x batch bytes) and warns when this container's /dev/shm cannot hold it. Prints a
table, writes JSON (--json) and an SVG of samples/s against workers (--plot).

`measure` (probe) and `recommend` (pure) are separate; the `dataloader` check runs a short form of both, and
verify/tools/advisor.py is the command line.
"""
from __future__ import annotations

import io
import math
import os
import time
import zlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from ..options import human_bytes
from .shmem import recognise as recognise_shm
from .shmem import shm_path
from .svgplot import Plot, Series, render

MEAN, STD = (0.485, 0.456, 0.406), (0.229, 0.224, 0.225)
TOLERANCE = 0.05      # settings within 5 % of the fastest count as equal; the cheapest of them is recommended

SHM_REMEDY = ("Start the container with more shared memory (`docker run --shm-size=2g ...` or `--ipc=host`; on "
              "Kubernetes an emptyDir with medium: Memory at /dev/shm), or lower num_workers, prefetch_factor or "
              "the batch size.")


@dataclass
class Sizes:
    samples: int = 192        # samples per epoch
    batch_size: int = 32
    image_size: int = 256     # generated source images are image_size x image_size RGB JPEGs
    crop: int = 224           # output of RandomResizedCrop
    epochs: int = 2           # epochs per setting: worker start-up counts, as it does in training
    max_workers: int | None = None   # cap of the worker sweep (default: the CPU quota)
    variants: bool = True     # also sweep prefetch_factor and persistent_workers (and pin_memory with a GPU)


QUICK = Sizes(samples=64, batch_size=16, epochs=2, variants=True)
# The `dataloader` check under CPU emulation (qemu-user): its figures are not judged there, and the full quick sweep
# ran past its timeout on a busy host; a few small settings still prove that workers deliver batches.
EMULATED = Sizes(samples=16, batch_size=8, image_size=64, crop=56, epochs=1, max_workers=2, variants=False)


# ------------------------------------------------------------------------------------------ host facts

def cpu_quota() -> dict[str, Any]:
    """CPUs this process may use: the cgroup CPU quota (v2 cpu.max, v1 cfs_quota_us) and the affinity mask."""
    quota: float | None = None
    source = "none"
    root = "/sys/fs/cgroup"
    try:
        with open(f"{root}/cpu.max", encoding="ascii") as fh:
            q, period = fh.read().split()
            source = "cgroup v2 cpu.max"
            quota = None if q == "max" else int(q) / int(period)
    except (OSError, ValueError):
        try:
            with open(f"{root}/cpu/cpu.cfs_quota_us", encoding="ascii") as fh:
                q1 = int(fh.read())
            with open(f"{root}/cpu/cpu.cfs_period_us", encoding="ascii") as fh:
                p1 = int(fh.read())
            source = "cgroup v1 cfs_quota_us"
            quota = None if q1 <= 0 else q1 / p1
        except (OSError, ValueError):
            pass
    affinity = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    usable = affinity if quota is None else max(1, min(affinity, math.ceil(quota)))
    return {"quota": quota, "quota_source": source, "affinity": affinity, "usable": usable}


def shm_space(path: str | None = None) -> dict[str, Any]:
    path = path or shm_path()
    try:
        st = os.statvfs(path)
    except OSError as exc:
        return {"path": path, "size": None, "free": None, "error": str(exc)}
    return {"path": path, "size": st.f_blocks * st.f_frsize, "free": st.f_bavail * st.f_frsize}


def worker_counts(usable: int, cap: int | None = None) -> list[int]:
    """0 .. usable CPUs: every count up to 8, then powers of two and the quota itself."""
    top = usable if cap is None else max(0, min(usable, cap))
    if top <= 8:
        return list(range(top + 1))
    counts = {0, 1, 2, 4, 6, 8, top}
    counts |= {2 ** k for k in range(3, top.bit_length()) if 2 ** k <= top}
    return sorted(counts)


# ------------------------------------------------------------------------------------------ datasets

def _generated(count: int, size: int) -> list[Any]:
    """HxWx3 uint8 numpy images: gradients plus noise, as compressible as photos."""
    import numpy as np

    rng = np.random.default_rng(0)
    yy, xx = np.mgrid[0:size, 0:size].astype(np.float32) / size
    images = []
    for i in range(count):
        phase = i / max(count, 1)
        base = np.stack([(xx + phase) % 1, yy * (1 - phase), (xx * yy + phase / 2) % 1], axis=-1)
        noisy = np.clip(base * 0.9 + rng.random((size, size, 3), dtype=np.float32) * 0.1, 0, 1)
        images.append((noisy * 255).astype(np.uint8))
    return images


def backend_available() -> str:
    """'torchvision' (decode_jpeg + transforms.v2), 'pil' (Pillow + numpy) or 'numpy' (zlib + numpy)."""
    try:
        import torchvision.io  # type: ignore[import-not-found,unused-ignore]  # noqa: F401
        from torchvision.transforms import v2  # type: ignore[import-not-found,unused-ignore]  # noqa: F401
    except Exception:  # noqa: BLE001 - missing or broken: fall back
        torchvision_ok = False
    else:
        torchvision_ok = True
    if torchvision_ok:
        return "torchvision"
    try:
        import PIL.Image  # type: ignore[import-not-found,unused-ignore]  # noqa: F401
        return "pil"
    except ImportError:
        return "numpy"


BACKEND_TEXT = {
    "torchvision": "torchvision: decode_jpeg + transforms.v2 (RandomResizedCrop, flip, ColorJitter, Normalize)",
    "pil": "FALLBACK (no torchvision): Pillow JPEG decode + crop/resize/flip in Pillow, colour jitter and "
           "normalise in numpy",
    "numpy": "FALLBACK (neither torchvision nor Pillow): zlib-inflated raw pixels (a PNG-like decode) + "
             "numpy crop, nearest resize, flip, colour jitter and normalise",
}


class AugmentedImages:
    """Map-style dataset: each item decodes one encoded image and augments it to a float CHW tensor."""

    def __init__(self, encoded: list[bytes], backend: str, size: int, crop: int) -> None:
        self.encoded, self.backend, self.size, self.crop = encoded, backend, size, crop
        self._transform: Callable[[Any], Any] | None = None

    def __len__(self) -> int:
        return len(self.encoded)

    def __getitem__(self, index: int) -> Any:
        import numpy as np
        import torch

        data = self.encoded[index]
        rng = np.random.default_rng(index + int(time.perf_counter_ns() % 1000))
        if self.backend == "torchvision":
            from torchvision import io as tio
            from torchvision.transforms import v2
            if self._transform is None:
                self._transform = v2.Compose([
                    v2.RandomResizedCrop(self.crop, antialias=True), v2.RandomHorizontalFlip(),
                    v2.ColorJitter(0.4, 0.4, 0.4, 0.1), v2.ToDtype(torch.float32, scale=True), v2.Normalize(MEAN, STD)])
            return self._transform(tio.decode_jpeg(torch.frombuffer(bytearray(data), dtype=torch.uint8)))
        if self.backend == "pil":
            from PIL import Image
            img = Image.open(io.BytesIO(data)).convert("RGB")
            x0, y0, w = self._crop_box(rng)
            img = img.resize((self.crop, self.crop), Image.Resampling.BILINEAR, box=(x0, y0, x0 + w, y0 + w))
            arr = np.asarray(img, dtype=np.float32) / 255.0
        else:
            raw = np.frombuffer(zlib.decompress(data), dtype=np.uint8).reshape(self.size, self.size, 3)
            x0, y0, w = self._crop_box(rng)
            idx = (np.arange(self.crop) * w // self.crop)
            arr = raw[y0 + idx][:, x0 + idx].astype(np.float32) / 255.0
        if rng.random() < 0.5:
            arr = arr[:, ::-1]
        arr = arr * rng.uniform(0.6, 1.4) + (rng.uniform(0.6, 1.4) - 1) * arr.mean()    # brightness, contrast
        arr = (np.clip(arr, 0, 1) - np.array(MEAN, np.float32)) / np.array(STD, np.float32)
        return torch.from_numpy(np.ascontiguousarray(arr.transpose(2, 0, 1), dtype=np.float32))

    def _crop_box(self, rng: Any) -> tuple[int, int, int]:
        w = int(self.size * math.sqrt(rng.uniform(0.08, 1.0)))
        w = max(8, min(w, self.size))
        return int(rng.integers(0, self.size - w + 1)), int(rng.integers(0, self.size - w + 1)), w


def make_dataset(sizes: Sizes, backend: str) -> AugmentedImages:
    images = _generated(sizes.samples, sizes.image_size)
    if backend == "torchvision":
        import torch
        from torchvision.io import encode_jpeg
        encoded = [bytes(encode_jpeg(torch.from_numpy(img).permute(2, 0, 1).contiguous(), quality=90).numpy())
                   for img in images]
    elif backend == "pil":
        from PIL import Image
        encoded = []
        for img in images:
            buf = io.BytesIO()
            Image.fromarray(img).save(buf, format="JPEG", quality=90)
            encoded.append(buf.getvalue())
    else:
        encoded = [zlib.compress(img.tobytes(), 6) for img in images]
    return AugmentedImages(encoded, backend, sizes.image_size, sizes.crop)


# ------------------------------------------------------------------------------------------ measuring

def measure_one(dataset: Any, setting: dict[str, Any], batch_size: int, epochs: int, gpu: bool) -> dict[str, Any]:
    """samples/s of `epochs` full passes with this setting, worker start-up included; errors are facts."""
    import torch
    from torch.utils.data import DataLoader

    workers = setting["num_workers"]
    kwargs: dict[str, Any] = {"batch_size": batch_size, "shuffle": True, "num_workers": workers,
                              "pin_memory": setting["pin_memory"]}
    if workers > 0:
        kwargs.update(persistent_workers=setting["persistent_workers"], prefetch_factor=setting["prefetch_factor"],
                      timeout=120)
    row = dict(setting)
    seen = 0
    loader = None
    start = time.perf_counter()
    try:
        loader = DataLoader(dataset, **kwargs)
        for _ in range(epochs):
            for batch in loader:
                if gpu:
                    batch = batch.to("cuda", non_blocking=setting["pin_memory"])
                if not seen:         # time to the first batch, workers' start-up included (a job's first step)
                    row["first_batch_s"] = round(time.perf_counter() - start, 4)
                seen += int(batch.shape[0])
        if gpu:
            torch.cuda.synchronize()
        seconds = time.perf_counter() - start
        row.update(ok=True, samples=seen, seconds=round(seconds, 4), samples_per_s=round(seen / seconds, 2))
    except Exception as exc:  # noqa: BLE001 - a failed setting (shm exhausted, worker killed) is a measurement
        text = f"{type(exc).__name__}: {exc}"
        row.update(ok=False, samples=seen, seconds=round(time.perf_counter() - start, 4), samples_per_s=0.0,
                   error=text.strip().splitlines()[0][:300] if text.strip() else type(exc).__name__,
                   shm_error=recognise_shm(text))
    finally:
        del loader     # shuts persistent workers down
    return row


def setting(workers: int, prefetch: int = 2, persistent: bool = False, pin: bool = False) -> dict[str, Any]:
    return {"num_workers": workers, "prefetch_factor": prefetch if workers else None,
            "persistent_workers": persistent if workers else False, "pin_memory": pin}


def probe(sizes: Sizes, progress: Callable[[str], None] | None = None) -> dict[str, Any]:
    """Measure: the host facts, the per-sample backend, and samples/s for each setting of the sweep."""
    import torch

    say = progress or (lambda _text: None)
    cpus = cpu_quota()
    shm = shm_space()
    gpu = bool(torch.cuda.is_available())
    backend = backend_available()
    dataset = make_dataset(sizes, backend)
    sample = dataset[0]
    sample_bytes = int(sample.numel() * sample.element_size())
    facts: dict[str, Any] = {
        "cpus": cpus, "shm": shm, "gpu": gpu, "backend": backend, "torch": torch.__version__,
        "sizes": {"samples": sizes.samples, "batch_size": sizes.batch_size, "image_size": sizes.image_size,
                  "crop": sizes.crop, "epochs": sizes.epochs},
        "sample_shape": list(sample.shape), "sample_bytes": sample_bytes, "batch_bytes": sample_bytes * sizes.batch_size,
        "measurements": [],
    }
    rows: list[dict[str, Any]] = facts["measurements"]

    def run(s: dict[str, Any]) -> dict[str, Any]:
        say(f"  num_workers={s['num_workers']} prefetch_factor={s['prefetch_factor']} "
            f"persistent_workers={s['persistent_workers']} pin_memory={s['pin_memory']} ...")
        row = measure_one(dataset, s, sizes.batch_size, sizes.epochs, gpu)
        rows.append(row)
        return row

    # One torch thread in this process, as DataLoader gives each worker: per-sample work at num_workers=0 then
    # costs what it costs in a worker, instead of fighting the CPU quota with intra-op threads.
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    facts["main_process_torch_threads"] = 1
    try:
        for w in worker_counts(cpus["usable"], sizes.max_workers):
            run(setting(w))
        ok = [r for r in rows if r["ok"] and r["num_workers"] > 0]
        if sizes.variants and ok:
            best = max(ok, key=lambda r: r["samples_per_s"])["num_workers"]
            for s in (setting(best, 4), setting(best, 2, persistent=True), setting(best, 4, persistent=True)):
                run(s)
            if gpu:
                top = max((r for r in rows if r["ok"]), key=lambda r: r["samples_per_s"])
                run({**{k: top[k] for k in ("num_workers", "prefetch_factor", "persistent_workers")}, "pin_memory": True})
    finally:
        torch.set_num_threads(threads)
    return facts


# ------------------------------------------------------------------------------------------ recommending

def shm_needed(row: dict[str, Any], batch_bytes: int) -> int:
    """Shared memory the batches in flight occupy: workers x prefetch_factor x batch bytes (0 without workers)."""
    return row["num_workers"] * (row["prefetch_factor"] or 0) * batch_bytes


def _cost(row: dict[str, Any]) -> tuple[int, int, bool, bool]:
    return row["num_workers"], row["prefetch_factor"] or 0, row["persistent_workers"], row["pin_memory"]


def recommend(facts: Mapping[str, Any], tolerance: float = TOLERANCE) -> dict[str, Any]:
    """Pure: the cheapest setting within `tolerance` of the fastest, its /dev/shm need and whether it fits."""
    rows = facts["measurements"]
    batch_bytes = facts["batch_bytes"]
    free = facts["shm"].get("free")
    ok = [r for r in rows if r["ok"]]
    warnings: list[str] = []
    failed = [r for r in rows if not r["ok"]]
    for r in failed:
        warnings.append(f"{describe(r)} failed: {r.get('shm_error') or r['error']}")
    if not ok:
        return {"setting": None, "warnings": warnings, "shm_ok": None, "failed": len(failed),
                "reason": "every setting failed"}
    fastest = max(r["samples_per_s"] for r in ok)
    best = min((r for r in ok if r["samples_per_s"] >= fastest * (1 - tolerance)), key=_cost)
    base = next((r for r in ok if r["num_workers"] == 0), None)
    need = shm_needed(best, batch_bytes)
    out: dict[str, Any] = {
        "setting": {k: best[k] for k in ("num_workers", "prefetch_factor", "persistent_workers", "pin_memory")},
        "samples_per_s": best["samples_per_s"], "fastest_samples_per_s": fastest,
        "baseline_samples_per_s": base["samples_per_s"] if base else None,
        "speedup_vs_0_workers": round(best["samples_per_s"] / base["samples_per_s"], 2) if base and base["samples_per_s"] else None,
        "shm_needed_bytes": need, "shm_free_bytes": free, "shm_size_bytes": facts["shm"].get("size"),
        "shm_ok": None if free is None else need <= free, "failed": len(failed), "fitting": None,
        "warnings": warnings,
    }
    shm_failures = [r for r in failed if r.get("shm_error")]
    if out["shm_ok"] is False or shm_failures:
        fits = [r for r in ok if free is not None and shm_needed(r, batch_bytes) <= free]
        alt = max(fits, key=lambda r: (r["samples_per_s"], [-c for c in _cost(r)[:2]])) if fits else None
        if alt is not None and alt is not best:
            out["fitting"] = {k: alt[k] for k in ("num_workers", "prefetch_factor", "persistent_workers", "pin_memory")}
            out["fitting_samples_per_s"] = alt["samples_per_s"]
        if out["shm_ok"] is False:
            warnings.insert(0, f"/dev/shm too small: {describe(best)} needs {human_bytes(need)} "
                               f"({best['num_workers']} workers x prefetch {best['prefetch_factor']} x "
                               f"{human_bytes(batch_bytes)} per batch), {facts['shm']['path']} has "
                               f"{human_bytes(free or 0)} free")
        elif shm_failures:
            warnings.insert(0, f"/dev/shm ran out during the sweep ({len(shm_failures)} setting(s) failed); "
                               f"{facts['shm']['path']} has {human_bytes(free or 0)} free")
    # The DataLoader default (prefetch_factor 2) at the CPU quota: when /dev/shm cannot hold even that, it caps
    # the settings this container can use, whatever this run's (noisy) fastest setting was.
    usable = facts["cpus"]["usable"]
    default_need = usable * 2 * batch_bytes
    if free is not None and default_need > free:
        out["shm_caps_in_flight_batches"] = free // batch_bytes if batch_bytes else None
        warnings.append(f"/dev/shm limits the settings: num_workers={usable} (the CPU quota) with the default "
                        f"prefetch_factor=2 needs {human_bytes(default_need)}, {facts['shm']['path']} has "
                        f"{human_bytes(free)} free: at most {free // batch_bytes if batch_bytes else 0} batches of "
                        f"{human_bytes(batch_bytes)} fit (num_workers x prefetch_factor)")
    workers_best = best["num_workers"]
    if workers_best < facts["cpus"]["usable"] and workers_best > 0:
        out["note"] = (f"more than {workers_best} worker(s) did not help here: the main process (collation, the "
                       f"training step) or memory bandwidth limits the rate, not the per-sample work")
    elif workers_best == 0 and facts["cpus"]["usable"] > 0:
        out["note"] = "workers did not pay for themselves: the per-sample work is too small for their overhead"
    return out


def shm_warning(advice: dict[str, Any], facts: Mapping[str, Any]) -> bool:
    """Whether /dev/shm is too small for the recommendation, ran out during the sweep, or caps the settings."""
    return (advice.get("shm_ok") is False or "shm_caps_in_flight_batches" in advice
            or any(r.get("shm_error") for r in facts["measurements"]))


def describe(row: dict[str, Any] | None) -> str:
    if not row:
        return "-"
    if row["num_workers"] == 0:
        return f"num_workers=0{', pin_memory=True' if row['pin_memory'] else ''}"
    text = (f"num_workers={row['num_workers']}, prefetch_factor={row['prefetch_factor']}, "
            f"persistent_workers={row['persistent_workers']}")
    return text + (", pin_memory=True" if row["pin_memory"] else "")


def short(row: dict[str, Any]) -> str:
    return (f"workers {row['num_workers']}" + (f", prefetch {row['prefetch_factor']}" if row["num_workers"] else "")
            + (", persistent" if row["persistent_workers"] else "") + (", pinned" if row["pin_memory"] else ""))


def format_report(facts: Mapping[str, Any], advice: dict[str, Any]) -> str:
    cpus, shm, sizes = facts["cpus"], facts["shm"], facts["sizes"]
    quota = (f"CPU quota {cpus['quota']:g} CPUs ({cpus['quota_source']})" if cpus["quota"]
             else f"no CPU quota ({cpus['quota_source']}: unlimited)")
    lines = [
        f"per sample: {BACKEND_TEXT[facts['backend']]}",
        (f"data: {sizes['samples']} generated {sizes['image_size']}x{sizes['image_size']} images -> "
        f"{facts['sample_shape']} float32 ({human_bytes(facts['sample_bytes'])}), batch {sizes['batch_size']} = "
        f"{human_bytes(facts['batch_bytes'])}, {sizes['epochs']} epochs per setting, start-up included, "
         "1 torch thread per process"),
        (f"{quota}, affinity {cpus['affinity']} CPUs -> workers 0..{cpus['usable']}; "
        f"GPU {'yes' if facts['gpu'] else 'no (pin_memory not measured)'}; "
        f"/dev/shm {human_bytes(shm['size'] or 0)} ({human_bytes(shm['free'] or 0)} free)"),
        "",
        f"{'workers':>7} {'prefetch':>8} {'persistent':>10} {'pin':>5} {'samples/s':>10} {'shm needed':>11}  note",
    ]
    rec = advice.get("setting")
    for r in facts["measurements"]:
        chosen = rec is not None and all(r[k] == rec[k] for k in rec)
        note = "<- recommended" if chosen and r["ok"] else ("" if r["ok"] else f"FAILED: {r.get('shm_error') or r['error']}")
        lines.append(f"{r['num_workers']:>7} {r['prefetch_factor'] or '-':>8} {r['persistent_workers']!s:>10} "
                     f"{r['pin_memory']!s:>5} {r['samples_per_s']:>10,.1f} "
                     f"{human_bytes(shm_needed(r, facts['batch_bytes'])):>11}  {note}"[:200])
    lines.append("")
    if rec is None:
        lines.append(f"recommendation: none: {advice.get('reason')}")
    else:
        speed = f" ({advice['speedup_vs_0_workers']}x of 0 workers)" if rec["num_workers"] else ""
        lines.append(f"recommended: DataLoader(dataset, batch_size={sizes['batch_size']}, {describe(rec)}"
                     "): "
                     f"{advice['samples_per_s']:,.1f} samples/s{speed}")
        lines.append(f"/dev/shm needed: {human_bytes(advice['shm_needed_bytes'])} = {rec['num_workers']} workers x "
                     f"prefetch {rec['prefetch_factor'] or 0} x {human_bytes(facts['batch_bytes'])} per batch; "
                     f"{shm['path']} has {human_bytes(shm['free'] or 0)} free"
                     + ("" if advice["shm_ok"] is not False else " -> TOO SMALL"))
        lines.append("  scale it to your batches: workers x prefetch_factor x (batch_size x bytes per sample)")
        if advice.get("note"):
            lines.append(f"note: {advice['note']}")
    for w in advice.get("warnings", []):
        lines.append(f"WARNING: {w}")
    if advice.get("fitting"):
        lines.append(f"  within this /dev/shm: {describe(advice['fitting'])} "
                     f"({advice['fitting_samples_per_s']:,.1f} samples/s)")
    if shm_warning(advice, facts):
        lines.append(f"  remedy: {SHM_REMEDY}")
    return "\n".join(lines)


def plot(facts: dict[str, Any], advice: dict[str, Any]) -> str:
    rows = facts["measurements"]
    groups: dict[str, list[tuple[float, float]]] = {}
    for r in rows:
        if not r["ok"]:
            continue
        label = (f"prefetch {r['prefetch_factor'] or 2}" + (" persistent" if r["persistent_workers"] else "")
                 + (" pinned" if r["pin_memory"] else ""))
        groups.setdefault(label, []).append((float(r["num_workers"]), float(r["samples_per_s"])))
    series = [Series(label, pts, line=len(pts) > 1) for label, pts in groups.items()]
    rec = advice.get("setting")
    highlight = None
    if rec is not None:
        highlight = (float(rec["num_workers"]), float(advice["samples_per_s"]))
    cpus = facts["cpus"]
    title = f"DataLoader samples/s vs num_workers ({facts['backend']}, batch {facts['sizes']['batch_size']}, " \
            f"{cpus['usable']} CPUs)"
    return render(Plot(title=title, xlabel="num_workers", ylabel="samples/s", series=series, highlight=highlight,
                       highlight_label=f"ring: recommended ({short(rec)})" if rec else "",
                       failed=[float(r["num_workers"]) for r in rows if not r["ok"]],
                       failed_label="failed (shm)" if any(r.get("shm_error") for r in rows) else "failed"))
