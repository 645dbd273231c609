"""arrow: Arrow IPC memory-mapped into torch tensors with zero copy, at memory speed."""
from __future__ import annotations

import os
import tempfile

from .. import arrowpath as ap
from ..options import Options, human_bytes
from ..result import FAIL, PASS, WARN, CheckResult

REPEATS = 3
GB = 1e9


def run(options: Options) -> CheckResult:
    result = CheckResult("arrow", PASS, "")
    import pyarrow as pa
    import torch

    torch.set_num_threads(1)    # both sides of the ratio on one core, so it compares like with like
    result.details.append(f"pyarrow {pa.__version__}, torch {torch.__version__}")
    with tempfile.TemporaryDirectory(prefix="verify-arrow-") as tmp:
        plain = os.path.join(tmp, "plain.arrow")
        rows = ap.write_ipc(plain, options.arrow_bytes)
        mapped = ap.open_mapped(plain)
        try:
            tensors = list(ap.iter_tensors(mapped))
            inside = sum(mapped.contains(t) for t in tensors)
            zero_copy = inside == len(tensors)
            result.details.append(f"uncompressed IPC file, {rows} samples in {len(tensors)} batches, "
                                  f"{human_bytes(mapped.size)} mapped: {inside}/{len(tensors)} batch tensors point "
                                  f"inside the mapping ({'zero copy' if zero_copy else 'COPIED'})")
            checksum, nbytes = ap.consume(iter(tensors))
            mapped_bw = ap.best_throughput(lambda: ap.consume(ap.iter_tensors(mapped))[1], REPEATS)
            memory_bw = ap.memory_bandwidth(nbytes, REPEATS)
            ratio = mapped_bw / memory_bw
            result.metric("zero_copy_throughput", mapped_bw / GB, "GB/s")
            result.metric("memory_read_bandwidth", memory_bw / GB, "GB/s")
            result.metric("ratio", ratio, "x")
            result.details.append(f"read {mapped_bw / GB:.2f} GB/s from the mapping vs {memory_bw / GB:.2f} GB/s "
                                  f"from process memory (ratio {ratio:.2f}, one thread, warm mapping)")

            node_sum, node_ptr_ok, node_bw = _through_nodes(mapped)
            nodes_ok = node_ptr_ok and abs(node_sum - checksum) <= 1e-6 * max(1.0, abs(checksum))
            result.metric("torchdata_nodes_throughput", node_bw / GB, "GB/s")
            result.details.append(f"torchdata.nodes pipeline (IterableWrapper → Mapper → Loader): "
                                  f"{node_bw / GB:.2f} GB/s, same sum {'yes' if nodes_ok else 'NO'}, "
                                  f"zero copy {'yes' if node_ptr_ok else 'NO'}")
        finally:
            mapped.close()

        compressed = os.path.join(tmp, "lz4.arrow")
        ap.write_ipc(compressed, min(options.arrow_bytes, 16 << 20), compression="lz4")
        cmapped = ap.open_mapped(compressed)
        try:
            ctensors = list(ap.iter_tensors(cmapped))
            c_inside = sum(cmapped.contains(t) for t in ctensors)
            lz4_bw = ap.best_throughput(lambda: ap.consume(ap.iter_tensors(cmapped))[1], REPEATS)
        finally:
            cmapped.close()
        result.metric("lz4_throughput", lz4_bw / GB, "GB/s")
        result.details.append(
            f"LZ4-compressed IPC file: not zero-copy ({c_inside}/{len(ctensors)} tensors inside the mapping): "
            f"compression forces decompression into new buffers ({lz4_bw / GB:.2f} GB/s). Also breaking zero copy: "
            f"feather.write_feather's default LZ4, reading without pa.memory_map, combine_chunks(), nulls.")

    if not zero_copy or not nodes_ok:
        result.status = FAIL
        result.summary = "Arrow data is copied on the way into tensors" if not zero_copy else "torchdata.nodes pipeline lost zero copy or data"
        result.remedy = ("Write IPC files uncompressed (pa.ipc.IpcWriteOptions(compression=None)), open them with "
                         "pa.memory_map, and build tensors from the column's buffers (flatten(), no nulls).")
    elif ratio < options.arrow_min_ratio and _emulated():
        result.summary = (f"zero copy proven; {mapped_bw / GB:.2f} GB/s = {ratio:.2f}x memory bandwidth, under CPU "
                          f"emulation: reported, not judged; torchdata.nodes ok")
        result.details.append("throughput not gated: this process runs under CPU emulation (qemu-user), where "
                              "both sides of the ratio measure the emulator, not the hardware")
    elif ratio < options.arrow_min_ratio:
        result.status = WARN
        result.summary = f"zero copy, but {mapped_bw / GB:.2f} GB/s is only {ratio:.2f} of memory bandwidth"
        result.remedy = ("The mapping is not warm (file on slow or network storage?): keep training data on local "
                         "NVMe or tmpfs, and check the container's CPU limit.")
    else:
        result.summary = (f"zero copy proven; {mapped_bw / GB:.1f} GB/s = {ratio:.2f}x memory bandwidth; "
                          f"torchdata.nodes ok")
    return result


def _emulated() -> bool:
    from ..environment import emulation
    return bool(emulation()["emulated"])


def _through_nodes(mapped: ap.Mapped) -> tuple[float, bool, float]:
    """(checksum, every batch inside the mapping, bytes/s) of the batches a torchdata.nodes pipeline yields."""
    import time
    outside = []

    def checked(tensors):
        for tensor in tensors:
            if not mapped.contains(tensor):
                outside.append(tensor.data_ptr())
            yield tensor

    start = time.perf_counter()
    total, nbytes = ap.consume(checked(ap.nodes_pipeline(mapped)))
    return total, not outside, nbytes / (time.perf_counter() - start)
