"""An excerpt of `nvidia-smi -q -x` without its `<nvidia_smi_log>` root: the section a poster quoted (the L20's
`<clocks_event_reasons>` in 1Panel-dev/1Panel#10990, its nine `clocks_event_reason_*` lines). Told by an element only
nvidia-smi's dtd (nvsmi_device_v12.dtd) names, as a start tag on a line of its own, and given back its root (and,
where the excerpt holds no `<gpu>`, one GPU of unknown bus) so that smixml.py reads it as the whole report."""
from __future__ import annotations

import re

# the dtd's section elements no other tool's XML names (a grep of a whole report for them finds the report itself)
_SECTIONS = ("clocks_event_reasons", "clocks_throttle_reasons", "clocks_event_reasons_counters", "remapped_rows",
             "retired_pages", "ecc_errors", "ecc_mode", "pci_gpu_link_info", "fb_memory_usage", "bar1_memory_usage",
             "gpu_power_readings", "power_readings", "gpu_reset_status", "gpu_recovery_action", "max_clocks",
             "applications_clocks", "default_applications_clocks", "supported_clocks")
# (`<temperature>` is any tool's word: nvidia-smi's only where its first child is the dtd's `<gpu_temp>`, batch 232)
# (`[^\S\n]*`, the line's own indent: a `\s*` from each line start over a file of blank lines is quadratic)
FRAGMENT = re.compile(r"^[^\S\n]*<(?:(?:" + "|".join(_SECTIONS) + r"|clocks_(?:event|throttle)_reason_\w+)>|"
                      r"temperature>\s*<gpu_temp>)", re.MULTILINE)
_GPU = re.compile(r"<gpu(?:\s[^>]*)?>")
_TAG = re.compile(r"<(/?)([A-Za-z_][\w.-]*)[^<>]*?(/?)>")


def unorphaned(text: str) -> str:
    """The excerpt without the end tags of elements it cut the start of (`</fb_memory_usage>` above the section the
    poster meant): XML stops at the first end tag that closes nothing, and what follows would be lost."""
    kept, opened, at = [], [], 0
    for tag in _TAG.finditer(text):
        closing, name, empty = tag.group(1), tag.group(2), tag.group(3)
        if not closing:
            if not empty:
                opened.append(name)
            continue
        if name in opened:
            del opened[len(opened) - 1 - opened[::-1].index(name):]
            continue
        kept.append(text[at:tag.start()])
        at = tag.end()
    return "".join(kept) + text[at:]


_LEAF = re.compile(r"clocks_(event|throttle)_reason_\w+")


def _sectioned(text: str) -> str:
    """Clock-reason lines grepped out of their section (`grep hw_slowdown`), and nothing else, put back inside it:
    a reason is read under its section's path only."""
    starts = [t.group(2) for t in _TAG.finditer(text) if not t.group(1)]
    leaves = [_LEAF.fullmatch(name) for name in starts]
    if not starts or not all(leaves):
        return text
    section = f"clocks_{leaves[0].group(1)}_reasons"    # type: ignore[union-attr]
    return f"<{section}>{text}</{section}>"


def rooted(text: str) -> str:
    """The excerpt inside the report's root, and inside one `<gpu>` where it quotes none."""
    text = _sectioned(unorphaned(text))
    body = text if _GPU.search(text) else f'<gpu id="">{text}</gpu>'
    return f"<nvidia_smi_log>{body}</nvidia_smi_log>"
