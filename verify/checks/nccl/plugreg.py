"""A net plugin refusing to register a buffer as an invalid argument: the image's NCCL, plugin and their libraries do
not match, never the adapter. NCCL's own verbs transport (`NET/IB...`, whose `ibv_reg_mr` EINVAL is the driver's) and
sockets are not plugins. Pure."""
from __future__ import annotations

import re

# aws-ofi-nccl: `NET/OFI Unable to register memory (type = 2) for device 0. RC: -22, Error: Invalid argument` (NCCL
# 2.19+ beside libfabric before EFA installer 1.29: aws/aws-ofi-nccl#584); GCP's GPUDirect-TCPXO plugin: `NET/FasTrak
# ...: INVALID_ARGUMENT: Buffer registration request does not have a valid fd set.` (a gRPC-style status). Out of
# locked memory is ENOMEM (-12), judged as memlock.
_PLUGIN = r"NET/(?!IB|Socket\b)\w+"
_EINVAL = r"(?:\bINVALID_ARGUMENT\b|\bInvalid argument\b|\bRC: -22\b|\bEINVAL\b)"
_REGISTER = r"(?:[Rr]egist(?:er|ration)|\bregMr\b)"
REFUSED = re.compile(rf"{_PLUGIN}[^|\n]*?(?:{_EINVAL}[^|\n]*?{_REGISTER}|{_REGISTER}[^|\n]*?{_EINVAL})[^|\n]*")
# the same refusal as NCCL prints it (a WARN line), for `verify explain`: any registration the plugin refused, whatever
# errno (ENOMEM is then read as memlock by the judge)
WARNED = re.compile(rf"NCCL WARN {_PLUGIN}\b[^\n]*?(?:Unable to register memory|{_REGISTER}[^\n]*?(?:{_EINVAL}|fail)|"
                    rf"{_EINVAL}[^\n]*?{_REGISTER})[^\n]*")

# a net plugin's own registration failing with an errno (GCP's GPUDirect-TCPX: `tcpxResult_t gpu_tx_reg_mr(...):223
# NCCL WARN gpu_tx_reg_mr failed -5` after its dma-buf frags ioctl met ENOTTY; `tcpxRegMr(...):800 NCCL WARN p2pdma
# api won't work with only RegMr`): the plugin's build against what it runs on, the image's, unless the log shows the
# host's (an adapter's error event or work completion, judged before). NCCL's verbs call (`ibv_reg_mr failed`) is no
# plugin's, and out of memory (ENOMEM, -12) is locked memory, the launch's (memlock).
_PLUGIN_SHOWN = re.compile(r"NET/(?!IB|Socket\b|OFI\b)\w+|\btcpx\w*|TCPXCHECK|nccl-plugin-\w+|\bFasTrak\b", re.IGNORECASE)
REG_FAILED = re.compile(r"(?<!ibv_)(?<!ibv_reg_dmabuf_)\b(?:\w+_)?(?:reg_mr|regMr)\w*\b[^|\n]*?(?:\bfailed\b|won't work)"
                        r"[^|\n;(]*", re.IGNORECASE)
_OUT_OF_MEMORY = re.compile(r"\bENOMEM\b|Cannot allocate memory|failed -12\b|RC: -12\b")


def registration_failed(said: str) -> str | None:
    """The line of a net plugin's own failed registration, where the log names the plugin; None otherwise."""
    hit = REG_FAILED.search(said)
    if not hit or not _PLUGIN_SHOWN.search(said) or _OUT_OF_MEMORY.search(hit.group(0)) or "ibv_" in hit.group(0):
        return None
    return hit.group(0).strip()[:160]


REMEDY = ("Pin the net plugin (a cloud's TCPX/TCPXO plugin image, aws-ofi-nccl) to the release qualified for the node's "
          "driver and the image's NCCL (not a floating `:latest`), and rerun; the provider's release notes name it.")


# anchored at a line's start: an unanchored `[^\n]*` is tried from every character of a long line (quadratic)
_WARN_LINE = re.compile(r"^.*NCCL WARN .*", re.MULTILINE)


def warned_failure(text: str) -> str | None:
    """For `verify explain`: the WARN of a net plugin's own failed registration, where the text names the plugin,
    with the plugin's line that names it when the WARN does not (`TCPXCHECK /nccl-plugin-gpudirecttcpx/...`)."""
    shown = _PLUGIN_SHOWN.search(text)
    if not shown:
        return None
    for warn in _WARN_LINE.finditer(text):
        if failing := REG_FAILED.search(warn.group(0)):
            if "ibv_" in failing.group(0) or _OUT_OF_MEMORY.search(failing.group(0)):
                continue
            line = warn.group(0).strip()[:240]
            if _PLUGIN_SHOWN.search(line):
                return line
            start = text.rfind("\n", 0, shown.start()) + 1
            end = text.find("\n", shown.end())
            return f"{line}; {text[start:end if end >= 0 else len(text)].strip()[:120]}"
    return None
