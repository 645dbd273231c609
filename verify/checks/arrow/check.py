"""arrow: Arrow IPC memory-mapped into torch tensors with zero copy, at memory speed."""
from __future__ import annotations

import importlib.util
import os
import tempfile
from typing import Any

from ...facts import ArrowFacts
from ...options import Options, human_bytes
from ...result import FAIL, PASS, SKIP, WARN, CheckResult

REPEATS = 3
CONFIRM_REPEATS = 9       # more turns, only when the first ones read slow
GB = 1e9
PACKAGES = {"pyarrow": "pyarrow", "torchdata": "torchdata", "numpy": "numpy"}     # import name -> pip name


def probe(options: Options) -> dict[str, Any]:
    missing = [pip for mod, pip in PACKAGES.items() if importlib.util.find_spec(mod) is None]
    if missing:
        return {"missing": missing}
    import pyarrow as pa
    import torch

    from . import arrowpath as ap

    torch.set_num_threads(1)    # both sides of the ratio on one core, so it compares like with like
    from ...environment import emulation

    facts: dict[str, Any] = {"pyarrow": pa.__version__, "torch": torch.__version__,
                             "emulated": bool(emulation()["emulated"])}   # throughput under qemu is not judged
    with tempfile.TemporaryDirectory(prefix="verify-arrow-") as tmp:
        plain = os.path.join(tmp, "plain.arrow")
        facts["rows"] = ap.write_ipc(plain, options.arrow_bytes)
        mapped = ap.open_mapped(plain)
        try:
            tensors = list(ap.iter_tensors(mapped))
            facts["batches"], facts["inside"] = len(tensors), sum(mapped.contains(t) for t in tensors)
            facts["mapped_bytes"] = mapped.size
            checksum, nbytes = ap.consume(iter(tensors))
            del tensors
            readers = [lambda: ap.consume(ap.iter_tensors(mapped))[1], ap.memory_reader(nbytes)]
            best = ap.best_in_turns(readers, REPEATS)
            if best[0] < options.arrow_min_ratio * best[1] and not facts["emulated"]:
                # A slow reading is confirmed before it is judged: a neighbour's burst of load (a shared CI host, a
                # busy node) can land on every turn of one side; a cold or remote mapping stays slow however long.
                # Under emulation the ratio is not judged, so nothing is confirmed (nine turns under qemu: minutes).
                best = [max(a, b) for a, b in zip(best, ap.best_in_turns(readers, CONFIRM_REPEATS), strict=True)]
            facts["mapped_Bps"], facts["memory_Bps"] = best
            node_sum, facts["nodes_zero_copy"], facts["nodes_Bps"] = _through_nodes(mapped)
            facts["nodes_same_sum"] = abs(node_sum - checksum) <= 1e-6 * max(1.0, abs(checksum))
        finally:
            mapped.close()
        compressed = os.path.join(tmp, "lz4.arrow")
        ap.write_ipc(compressed, min(options.arrow_bytes, 16 << 20), compression="lz4")
        cmapped = ap.open_mapped(compressed)
        try:
            ctensors = list(ap.iter_tensors(cmapped))
            facts["lz4_batches"], facts["lz4_inside"] = len(ctensors), sum(cmapped.contains(t) for t in ctensors)
            del ctensors
            facts["lz4_Bps"] = ap.best_throughput(lambda: ap.consume(ap.iter_tensors(cmapped))[1], REPEATS)
        finally:
            cmapped.close()
    return facts


def judge(facts: ArrowFacts, options: Options) -> CheckResult:
    result = CheckResult("arrow", PASS, "")
    if facts.get("missing"):
        pkgs = " ".join(facts["missing"])
        return result.verdict(SKIP, "PACKAGE_MISSING", f"{', '.join(facts['missing'])} not installed in this image: "
                              "the Arrow data path not checked", f"pip install {pkgs}")
    result.details.append(f"pyarrow {facts['pyarrow']}, torch {facts['torch']}")
    zero_copy = facts["inside"] == facts["batches"]
    result.details.append(f"uncompressed IPC file, {facts['rows']} samples in {facts['batches']} batches, "
                          f"{human_bytes(facts['mapped_bytes'])} mapped: {facts['inside']}/{facts['batches']} batch tensors point "
                          f"inside the mapping ({'zero copy' if zero_copy else 'COPIED'})")
    mapped_bw, memory_bw = facts["mapped_Bps"], facts["memory_Bps"]
    ratio = mapped_bw / memory_bw
    result.metric("zero_copy_throughput", mapped_bw / GB, "GB/s")
    result.metric("memory_read_bandwidth", memory_bw / GB, "GB/s")
    result.metric("ratio", ratio, "x")
    result.details.append(f"read {mapped_bw / GB:.2f} GB/s from the mapping vs {memory_bw / GB:.2f} GB/s "
                          f"from process memory (ratio {ratio:.2f}, one thread, warm mapping)")
    node_ptr_ok = facts["nodes_zero_copy"]
    nodes_ok = node_ptr_ok and facts["nodes_same_sum"]
    result.metric("torchdata_nodes_throughput", facts["nodes_Bps"] / GB, "GB/s")
    result.details.append(f"torchdata.nodes pipeline (IterableWrapper → Mapper → Loader): "
                          f"{facts['nodes_Bps'] / GB:.2f} GB/s, same sum {'yes' if facts['nodes_same_sum'] else 'NO'}, "
                          f"zero copy {'yes' if node_ptr_ok else 'NO'}")
    result.metric("lz4_throughput", facts["lz4_Bps"] / GB, "GB/s")
    result.details.append(
        f"LZ4-compressed IPC file: not zero-copy ({facts['lz4_inside']}/{facts['lz4_batches']} tensors inside the mapping): "
        f"compression forces decompression into new buffers ({facts['lz4_Bps'] / GB:.2f} GB/s). Also breaking zero copy: "
        f"feather.write_feather's default LZ4, reading without pa.memory_map, combine_chunks(), nulls.")
    if not zero_copy or not nodes_ok:
        return result.verdict(FAIL, "ARROW_COPIED", "Arrow data is copied on the way into tensors" if not zero_copy
                              else "torchdata.nodes pipeline lost zero copy or data",
                              "Write IPC files uncompressed (pa.ipc.IpcWriteOptions(compression=None)), open them with "
                              "pa.memory_map, and build tensors from the column's buffers (flatten(), no nulls).")
    if ratio < options.arrow_min_ratio and facts.get("emulated"):
        result.summary = (f"zero copy proven; {mapped_bw / GB:.2f} GB/s = {ratio:.2f}x memory bandwidth, under CPU "
                          f"emulation: reported, not judged; torchdata.nodes ok")
        result.details.append("throughput not gated: this process runs under CPU emulation (qemu-user), where "
                              "both sides of the ratio measure the emulator, not the hardware")
        return result
    if ratio < options.arrow_min_ratio:
        return result.verdict(WARN, "ARROW_SLOW", f"zero copy, but {mapped_bw / GB:.2f} GB/s is only {ratio:.2f} of memory bandwidth",
                              "The mapping is not warm (file on slow or network storage?): keep training data on local "
                              "NVMe or tmpfs, and check the container's CPU limit.")
    result.summary = f"zero copy proven; {mapped_bw / GB:.1f} GB/s = {ratio:.2f}x memory bandwidth; torchdata.nodes ok"
    return result



def _through_nodes(mapped: Any) -> tuple[float, bool, float]:
    """(checksum, every batch inside the mapping, bytes/s) of the batches a torchdata.nodes pipeline yields."""
    import time

    from . import arrowpath as ap
    outside = []

    def checked(tensors):
        for tensor in tensors:
            if not mapped.contains(tensor):
                outside.append(tensor.data_ptr())
            yield tensor

    start = time.perf_counter()
    total, nbytes = ap.consume(checked(ap.nodes_pipeline(mapped)))
    return total, not outside, nbytes / (time.perf_counter() - start)
