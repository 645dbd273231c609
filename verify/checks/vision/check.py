"""vision: torchvision as users break it.

It imports and its compiled ops load (`torchvision.ops.nms` on the CPU and, where visible, on the GPU); the
classic failure, `operator torchvision::nms does not exist`, comes from a torchvision that does not match
torch and is diagnosed as exactly that, with both versions and the right pin. torchvision's CUDA matches
torch's. JPEG and PNG decode through `torchvision.io` (and on the GPU where one is visible). A
`transforms.v2` augmentation pipeline runs over a batch of generated images, timed on the CPU (and the GPU).

`probe` measures and reads; `judge` decides, without I/O.
"""
from __future__ import annotations

import re
import time
import traceback
from importlib import metadata
from typing import Any

from ...facts import VisionFacts
from ...options import Options
from ...result import FAIL, PASS, SKIP, WARN, CheckResult, Status

NAME = "vision"
IMAGES = 64           # images in the augmentation batch
SOURCE_SIZE = 256     # generated images are SOURCE_SIZE x SOURCE_SIZE RGB
CROP = 224
MEAN, STD = (0.485, 0.456, 0.406), (0.229, 0.224, 0.225)

# The torchvision release pinned to each torch release (torchvision's own compatibility table; the same
# pairs as compat.yaml, which a unit test compares). For torch 2.x releases not in the table the rule is:
# torchvision minor = torch minor + 15 (2.11 -> 0.26, 2.13 -> 0.28, 2.14 -> 0.29).
TORCHVISION_FOR_TORCH = {
    "2.10.0": "0.25.0", "2.11.0": "0.26.0", "2.12.1": "0.27.1", "2.13.0": "0.28.0", "2.14.1": "0.29.1",
}
NMS_MISSING = re.compile(r"operator torchvision::\w+ does not exist")


def _release(version: str) -> tuple[str, str | None]:
    """'2.13.0+cpu' -> ('2.13.0', 'cpu'); '0.29.1' -> ('0.29.1', None)."""
    public, _, local = version.partition("+")
    return public, local or None


def _minor(version: str) -> tuple[int, int] | None:
    match = re.match(r"(\d+)\.(\d+)", version)
    return (int(match.group(1)), int(match.group(2))) if match else None


def cuda_release(value: Any) -> tuple[int, int] | None:
    """'13.0' (torch.version.cuda) or 13000 (torchvision.version.cuda: major*1000 + minor*10) -> (13, 0)."""
    if value is None or value == "" or value == -1:
        return None
    text = str(value)
    if text.isdecimal():
        number = int(text)
        return (number // 1000, (number % 1000) // 10)
    return _minor(text)


def _cuda_text(value: Any) -> str:
    mm = cuda_release(value)
    return f"{mm[0]}.{mm[1]}" if mm else "none (CPU)"


def expected_torchvision(torch_version: str) -> str | None:
    """The torchvision pin for a torch version: exact from the table, else '0.<minor+15>.*' for torch 2.x."""
    public, _ = _release(torch_version)
    if public in TORCHVISION_FOR_TORCH:
        return TORCHVISION_FOR_TORCH[public]
    mm = _minor(public)
    if mm is None or mm[0] != 2:
        return None
    return f"0.{mm[1] + 15}.*"


def pairs(torch_version: str, torchvision_version: str) -> bool:
    """Whether the torchvision release line is the one built for this torch release (minor against minor)."""
    want = expected_torchvision(torch_version)
    have = _minor(_release(torchvision_version)[0])
    return want is not None and have is not None and _minor(want) == have


def pip_line(torch_version: str) -> str:
    """The install line of the torchvision matching this torch, from the index that serves torch's build."""
    want = expected_torchvision(torch_version)
    if want is None:
        return "pip install torchvision  # the release built for your torch: see https://github.com/pytorch/vision#installation"
    spec = f"torchvision=={want}"
    _, local = _release(torch_version)
    if local:   # +cpu, +cu126, ...: those builds live on PyTorch's own index only
        return f"pip install {spec} --index-url https://download.pytorch.org/whl/{local}"
    return f"pip install {spec}"


# ---------------------------------------------------------------------------------------------- probe

def _error(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}".strip()[:600]


def _nms(torchvision: Any, torch: Any, device: str) -> dict[str, Any]:
    boxes = torch.tensor([[0, 0, 10, 10], [1, 1, 11, 11], [50, 50, 60, 60], [0, 0, 9, 10]], dtype=torch.float32)
    scores = torch.tensor([0.9, 0.8, 0.7, 0.6])
    try:
        keep = torchvision.ops.nms(boxes.to(device), scores.to(device), 0.5)
        return {"ok": True, "keep": keep.cpu().tolist(), "expected": [0, 2]}
    except Exception as exc:  # noqa: BLE001 - every failure is a fact
        return {"ok": False, "error": _error(exc)}


def _generated(torch: Any, count: int, size: int) -> Any:
    """Smooth colour gradients plus noise: compressible like photos, not constant."""
    gen = torch.Generator().manual_seed(0)
    y = torch.linspace(0, 1, size).view(1, size, 1)
    x = torch.linspace(0, 1, size).view(1, 1, size)
    images = []
    for i in range(count):
        phase = i / max(count, 1)
        channels = [(x + phase) % 1, y * (1 - phase), (x * y + phase / 2) % 1]
        base = torch.cat([c.expand(1, size, size) for c in channels], 0)
        noise = torch.rand((3, size, size), generator=gen) * 0.1
        images.append(((base * 0.9 + noise).clamp(0, 1) * 255).to(torch.uint8))
    return torch.stack(images)


def _decode(torchvision: Any, torch: Any, image: Any, gpu: bool) -> dict[str, Any]:
    from torchvision import io  # type: ignore[import-not-found,unused-ignore]

    facts: dict[str, Any] = {}
    for kind, encode, decode in (("png", io.encode_png, io.decode_png), ("jpeg", io.encode_jpeg, io.decode_jpeg)):
        try:
            data = encode(image) if kind == "png" else encode(image, quality=90)
            out = decode(data)
            facts[kind] = {"ok": True, "bytes": int(data.numel()), "shape": list(out.shape),
                           "mean_abs_diff": round(float((out.float() - image.float()).abs().mean()), 3)}
            generic = io.decode_image(data)
            facts[kind]["decode_image_same"] = bool(torch.equal(generic, out))
        except Exception as exc:  # noqa: BLE001
            facts[kind] = {"ok": False, "error": _error(exc)}
    if gpu:
        try:
            data = io.encode_jpeg(image, quality=90)
            out = io.decode_jpeg(data, device="cuda")
            torch.cuda.synchronize()
            facts["jpeg_gpu"] = {"ok": True, "shape": list(out.shape),
                                 "mean_abs_diff": round(float((out.cpu().float() - image.float()).abs().mean()), 3)}
        except Exception as exc:  # noqa: BLE001
            facts["jpeg_gpu"] = {"ok": False, "error": _error(exc)}
    return facts


def pipeline(crop: int = CROP) -> Any:
    """The augmentation pipeline a training script uses: crop, flip, colour jitter, float, normalise."""
    import torch
    from torchvision.transforms import v2  # type: ignore[import-not-found,unused-ignore]

    return v2.Compose([v2.RandomResizedCrop(crop, antialias=True), v2.RandomHorizontalFlip(),
                       v2.ColorJitter(0.4, 0.4, 0.4, 0.1), v2.ToDtype(torch.float32, scale=True),
                       v2.Normalize(MEAN, STD)])


def _augment(torch: Any, images: Any, device: str) -> dict[str, Any]:
    """Per image on the CPU (as DataLoader workers do); on the GPU per batch (as GPU augmentation is used)."""
    try:
        transform = pipeline()
        torch.manual_seed(0)
        if device == "cpu":
            threads = torch.get_num_threads()
            torch.set_num_threads(1)                          # one thread, as in a DataLoader worker
            try:
                transform(images[0])                          # first call: lazy imports, not timed
                start = time.perf_counter()
                out = torch.stack([transform(img) for img in images])
                seconds = time.perf_counter() - start
            finally:
                torch.set_num_threads(threads)
        else:
            batch = images.to(device)
            transform(batch)
            torch.cuda.synchronize()
            start = time.perf_counter()
            out = torch.cat([transform(batch[i:i + 16]) for i in range(0, len(batch), 16)])
            torch.cuda.synchronize()
            seconds = time.perf_counter() - start
        return {"ok": True, "images": len(images), "seconds": round(seconds, 6), "shape": list(out.shape),
                "dtype": str(out.dtype).removeprefix("torch."), "finite": bool(torch.isfinite(out).all()),
                "std": round(float(out.float().std()), 4)}
    except Exception as exc:  # noqa: BLE001
        return {"ok": False, "error": _error(exc)}


def probe(options: Options) -> dict[str, Any]:
    facts: dict[str, Any] = {}
    for dist in ("torch", "torchvision"):    # the installed distributions: `+cpu` here means PyTorch's index
        try:
            facts[f"{dist}_dist"] = metadata.version(dist)
        except metadata.PackageNotFoundError:
            facts[f"{dist}_dist"] = None
    try:
        import torch
    except Exception as exc:  # noqa: BLE001
        facts["torch_error"] = _error(exc)
        return facts
    facts["torch"] = torch.__version__
    facts["torch_cuda"] = torch.version.cuda
    gpu = bool(torch.cuda.is_available())
    facts["gpu_visible"] = gpu
    try:
        import torchvision
    except Exception as exc:  # noqa: BLE001
        facts["import_error"] = _error(exc)
        facts["import_traceback"] = traceback.format_exc().strip().splitlines()[-6:]
        return facts
    facts["torchvision"] = torchvision.__version__
    facts["torchvision_cuda"] = getattr(getattr(torchvision, "version", None), "cuda", None)
    facts["nms"] = {"cpu": _nms(torchvision, torch, "cpu")}
    if gpu:
        facts["nms"]["cuda"] = _nms(torchvision, torch, "cuda")
    images = _generated(torch, IMAGES, SOURCE_SIZE)
    facts["decode"] = _decode(torchvision, torch, images[0], gpu)
    facts["augment"] = {"cpu": _augment(torch, images, "cpu")}
    if gpu:
        facts["augment"]["cuda"] = _augment(torch, images, "cuda")
    return facts


# ---------------------------------------------------------------------------------------------- judge

def _result(status: Status, summary: str, code: str | None = None, remedy: str | None = None,
            details: list[str] | None = None) -> CheckResult:
    result = CheckResult(NAME, status, summary, details=details or [], remedy=remedy)
    result.code, result.owner = code, ("image" if code else None)
    return result


def _mismatch(torch_v: str, tv: str, cause: str) -> CheckResult:
    want = expected_torchvision(torch_v)
    summary = f"torchvision {tv} does not match torch {torch_v} ({cause}); torch {torch_v} needs torchvision {want}"
    if pairs(torch_v, tv):   # right release line, wrong build (e.g. PyPI's CUDA torchvision beside a +cpu torch)
        _, local = _release(torch_v)
        summary = (f"torchvision {tv} is not the build of torch {torch_v} ({cause}): the release line is right, "
                   f"the build is not (torch is the {local or 'PyPI'} build)")
    return _result(FAIL, summary, "TORCHVISION_MISMATCH",
                   f"Install the torchvision built for this torch: `{pip_line(torch_v)}` (or pin both together, "
                   f"torch=={_release(torch_v)[0]} torchvision=={want}).")


Problem = tuple[Status, str, str, str]     # (status, code, summary, remedy)


def _not_imported(facts: VisionFacts, torch_v: str) -> CheckResult | None:
    """The verdict when torchvision does not import; None when it does."""
    if "import_error" not in facts:
        return None
    error, dist = facts["import_error"], facts.get("torchvision_dist")
    if dist is None and "No module named 'torchvision'" in error:
        return _result(SKIP, f"torchvision is not installed (torch {torch_v}): vision not exercised",
                       "PACKAGE_MISSING", f"To use it: `{pip_line(torch_v)}`.")
    details = [error, *facts.get("import_traceback", [])]
    if dist and (NMS_MISSING.search(error) or not pairs(torch_v, dist)):
        result = _mismatch(torch_v, dist, error.split(": ", 1)[-1].splitlines()[0][:160])
        result.details = details
        return result
    return _result(FAIL, f"torchvision {dist or '?'} does not import: {error}", "TORCHVISION_IMPORT_FAILED",
                   f"Reinstall it for this torch: `{pip_line(torch_v)}`.", details)


def _cpu_nms_broken(cpu_nms: dict[str, Any], torch_v: str, tv: str, details: list[str]) -> CheckResult:
    if NMS_MISSING.search(cpu_nms["error"]) or not pairs(torch_v, tv):
        bad = _mismatch(torch_v, tv, cpu_nms["error"].split(": ", 1)[-1][:160])
        bad.details = details
        return bad
    return _result(FAIL, f"torchvision {tv}: ops.nms fails on the CPU: {cpu_nms['error']}",
                   "TORCHVISION_OPS_MISSING", f"Reinstall the torchvision built for this torch: `{pip_line(torch_v)}`.",
                   details)


def _ops(cpu_nms: dict[str, Any], cuda_nms: dict[str, Any] | None, torch_v: str) -> list[Problem]:
    problems: list[Problem] = []
    if cpu_nms["keep"] != cpu_nms["expected"]:
        problems.append((FAIL, "TORCHVISION_OPS_WRONG", (f"ops.nms on the CPU kept {cpu_nms['keep']}, "
                         f"expected {cpu_nms['expected']}"), "Reinstall torchvision; report it if it persists."))
    if cuda_nms and not cuda_nms["ok"]:
        problems.append((FAIL, "TORCHVISION_OPS_MISSING", f"ops.nms fails on the GPU: {cuda_nms['error'][:200]}",
                         f"Install the CUDA build of torchvision matching torch: `{pip_line(torch_v)}`."))
    elif cuda_nms and cuda_nms["keep"] != cuda_nms["expected"]:
        problems.append((FAIL, "TORCHVISION_OPS_WRONG", f"ops.nms on the GPU kept {cuda_nms['keep']}",
                         "Reinstall torchvision; check the GPU with the gpu check."))
    return problems


def _builds(facts: VisionFacts, torch_v: str, tv: str) -> list[Problem]:
    """torchvision's CUDA against torch's, and the release pair."""
    problems: list[Problem] = []
    tcuda, vcuda = facts.get("torch_cuda"), facts.get("torchvision_cuda")
    if cuda_release(tcuda) != cuda_release(vcuda):
        problems.append((FAIL, "TORCHVISION_CUDA_MISMATCH",
                         (f"torchvision {tv} is built for CUDA {_cuda_text(vcuda)}, torch {torch_v} for CUDA "
                         f"{_cuda_text(tcuda)}"), f"Install the matching build: `{pip_line(torch_v)}`."))
    if not pairs(torch_v, tv):
        problems.append((WARN, "TORCHVISION_MISMATCH",
                         (f"torchvision {tv} is not the release built for torch {torch_v} "
                         f"(expected {expected_torchvision(torch_v)}); its ops load, but the pair is untested"),
                         f"Pin the pair: `{pip_line(torch_v)}`."))
    return problems


def _decoding(decode: dict[str, Any], torch_v: str, details: list[str]) -> list[Problem]:
    problems: list[Problem] = []
    for kind in ("png", "jpeg", "jpeg_gpu"):
        fact = decode.get(kind)
        if fact is None:
            continue
        where = "on the GPU" if kind == "jpeg_gpu" else "on the CPU"
        label = {"jpeg": "JPEG", "png": "PNG"}.get(kind[:4].rstrip("_"), kind.upper())
        if not fact["ok"]:
            problems.append((FAIL if kind != "jpeg_gpu" else WARN, "IMAGE_DECODE_FAILED",
                             f"{label} decode {where} fails: {fact['error'][:200]}",
                             ("torchvision's image codecs (libjpeg/libpng, nvjpeg on the GPU) do not load: install "
                             f"the torchvision wheel built for this torch (`{pip_line(torch_v)}`), not a source build.")))
            continue
        limit = 0.0 if kind == "png" else 8.0    # PNG is lossless; JPEG at quality 90 stays within a few levels
        details.append(f"{label} {where}: shape {fact['shape']}, mean abs diff {fact['mean_abs_diff']}")
        if fact["mean_abs_diff"] > limit or fact.get("decode_image_same") is False:
            problems.append((FAIL, "IMAGE_DECODE_WRONG", (f"{label} {where} decodes wrong: mean abs diff "
                             f"{fact['mean_abs_diff']} (limit {limit})"), "Reinstall torchvision and its codecs."))
    return problems


def _augmenting(augment: dict[str, Any], torch_v: str, result: CheckResult, rates: list[str]) -> list[Problem]:
    problems: list[Problem] = []
    for device, fact in augment.items():
        if not fact["ok"]:
            problems.append((FAIL, "TRANSFORMS_FAILED", f"transforms.v2 pipeline fails on {device}: {fact['error'][:200]}",
                             f"Install the torchvision release built for torch: `{pip_line(torch_v)}`."))
            continue
        rate = fact["images"] / fact["seconds"] if fact["seconds"] > 0 else 0.0
        result.metric(f"augment_{device}_images_per_s", rate, "images/s")
        rates.append(f"{rate:,.0f} images/s on {'the GPU' if device == 'cuda' else 'one CPU thread'}")
        where = "the GPU, per batch of 16" if device == "cuda" else "one CPU thread, per image as in a DataLoader worker"
        result.details.append(f"transforms.v2 (RandomResizedCrop {CROP}, flip, ColorJitter, Normalize) on {where}: "
                              f"{fact['images']} images in {fact['seconds']:.3f} s, output {fact['shape']} {fact['dtype']}")
        if not fact["finite"] or fact["shape"][1:] != [3, CROP, CROP]:
            problems.append((FAIL, "TRANSFORMS_WRONG", (f"transforms.v2 output on {device} is wrong: shape "
                             f"{fact['shape']}, finite {fact['finite']}"), "Reinstall torchvision."))
    return problems


def judge(facts: VisionFacts, options: Options) -> CheckResult:
    if "torch_error" in facts:
        return _result(FAIL, f"torch does not import: {facts['torch_error']}", "TORCH_IMPORT_FAILED",
                       "Fix torch first: `python -c 'import torch'` shows the error.")
    torch_v = facts.get("torch_dist") or facts["torch"]    # '2.14.1' from PyPI although __version__ says +cu130
    broken = _not_imported(facts, torch_v)
    if broken is not None:
        return broken
    tv = facts.get("torchvision_dist") or facts["torchvision"]
    details = [(f"torch {torch_v} (CUDA {facts.get('torch_cuda') or '-'}), torchvision {tv} "
               f"(CUDA {_cuda_text(facts.get('torchvision_cuda'))}); expected torchvision {expected_torchvision(torch_v)}")]
    result = _result(PASS, "", details=details)
    nms = facts.get("nms", {})
    for device, fact in nms.items():
        details.append(f"ops.nms on {device}: " + (f"keep {fact['keep']}" if fact["ok"] else fact["error"]))
    cpu_nms = nms.get("cpu", {"ok": False, "error": "not run"})
    if not cpu_nms["ok"]:
        return _cpu_nms_broken(cpu_nms, torch_v, tv, details)
    rates: list[str] = []
    problems = (_ops(cpu_nms, nms.get("cuda"), torch_v) + _builds(facts, torch_v, tv)
                + _decoding(facts.get("decode", {}), torch_v, details)
                + _augmenting(facts.get("augment", {}), torch_v, result, rates))
    if problems:
        worst = next((p for p in problems if p[0] == FAIL), problems[0])
        result.status, result.code, result.summary, result.remedy = worst[0], worst[1], worst[2], worst[3]
        result.owner = "image"
        details += [f"{p[0]}: {p[2]}" for p in problems if p is not worst]
        return result
    gpu_note = "" if facts.get("gpu_visible") else "; no GPU visible: CPU side only"
    result.summary = (f"torchvision {tv} (CUDA {_cuda_text(facts.get('torchvision_cuda'))}) with torch {torch_v}: ops.nms "
                      f"ok, JPEG/PNG decode ok, v2 augmentation {', '.join(rates)}{gpu_note}")
    return result
