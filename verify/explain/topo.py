"""`nvidia-smi topo -m`: the matrix of how each pair of GPUs is connected, into the gpu facts' devices (index, NVLink
states, behind an NVSwitch, NUMA node). `NV#` is "a bonded set of # NVLinks" between two GPUs (the matrix's legend).

Behind NVSwitches every pair shows the GPU's whole bond (NV18 on an HGX H100: the same 18 links reach every peer),
so a GPU's links up are the largest bond it shows; wired directly (a DGX-1's cube mesh, a bridge pair) they are the
sum of its bonds. A node is switched when some GPU would otherwise have more links than any GPU has (18). The
links every GPU of the node should have are the most any of them shows (one board, one model): a GPU showing fewer
has the rest down. A matrix with no NV cell says nothing about NVLink (a PCIe board, or every bridge down, or `topo
-mp`, the PCIe paths alone): null. A GPU the header lists whose row the excerpt cut is there all the same: its bonds
are its column in its peers' rows (behind switches, all of its links), its NUMA node unread. A matrix cut above its header and its first rows (it starts at `GPU5`) is read from the rows it
holds, their `X` naming their columns: the cut GPUs' bonds are their columns in those rows, behind switches only."""
from __future__ import annotations

import re
from typing import Any

MAX_LINKS = 18            # NVLink 4 and 5 GPUs (H100, B200, GB200) have 18, the most any GPU has
_HEADER = re.compile(r"^\s*GPU0(?:\s+(?:GPU|NIC)\d+|\s+mlx\d+_\d+)*\s+CPU Affinity\b")
_ROW = re.compile(r"^GPU(\d+)\s+(.*)$")
_NV = re.compile(r"^NV(\d+)$")


def _header(lines: list[str]) -> tuple[int, list[str]] | None:
    for n, line in enumerate(lines):
        if _HEADER.match(line):
            return n, line.split("CPU Affinity")[0].split()
    return _headerless(lines)


def _headerless(lines: list[str]) -> tuple[int, list[str]] | None:
    """A matrix quoted without its header line (b200-x8-570.124.06-topo-m-gpu2-...): rows GPU0, GPU1, ... each with
    its one `X` in its own column are the GPUs' columns, in order, as many as such rows; the columns after them (the
    NICs, a cut row's GPU) and the affinities are not read (None: no header to name them)."""
    found = [(n, m) for n, line in enumerate(lines) if (m := _ROW.match(line.strip()))]
    if not found:
        return None
    # the excerpt may be cut above its first rows too (flux#14 starts at GPU5): the first row's `X` says its column,
    # and the columns before it are the GPUs whose rows were cut (nvidia-smi lists the GPUs before the NICs)
    first = count = int(found[0][1].group(1))
    if first > _MOST_GPUS:
        return None                 # no node has that many GPUs: no matrix nvidia-smi prints (nor columns to build)
    for _, m in found:
        cells = m.group(2).split()
        if int(m.group(1)) != count or len(cells) <= count or cells[count] != "X" or cells.count("X") != 1:
            break
        count += 1
    return (found[0][0] - 1, [f"GPU{i}" for i in range(count)] + [_UNNAMED]) if count - first >= 2 else None


_MOST_GPUS = 1024               # NVML's device count on one node is far below this
_UNNAMED = "?"                  # a headerless matrix's last column: what follows the GPUs' is not read


def detect(text: str) -> bool:
    lines = text.splitlines()
    found = _header(lines)
    if found is None:
        return False
    return found[1][-1] == _UNNAMED or any(re.match(r"^GPU0\s+X\b", line) for line in lines[found[0] + 1:])


def _rows(lines: list[str], columns: list[str]) -> dict[int, tuple[list[str], list[str]]]:
    """GPU index -> (its cells under the columns, what follows: CPU affinity, NUMA affinity, ...)."""
    out: dict[int, tuple[list[str], list[str]]] = {}
    for line in lines:
        if (m := _ROW.match(line.strip())) and (cells := m.group(2).split()) and len(cells) >= len(columns):
            out.setdefault(int(m.group(1)), (cells[:len(columns)], cells[len(columns):]))
    return out


def _bonds(rows: dict[int, tuple[list[str], list[str]]], columns: list[str]) -> dict[int, list[int | None]]:
    """Per GPU, its NV bond to each peer: from its own row, or, for a GPU the header lists whose row the excerpt cut,
    from its column in its peers' rows (a bond joins two GPUs: both rows show it). No row at all: none."""
    gpus = [c for c in columns if re.fullmatch(r"GPU\d+", c)]
    nv = {index: {col: int(m.group(1)) if (m := _NV.match(cell)) else None
                  for col, cell in zip(columns, cells, strict=True) if col in gpus and col != f"GPU{index}"}
          for index, (cells, _) in rows.items()}
    bonds = {index: list(cells.values()) for index, cells in nv.items()}
    if bonds:
        bonds.update({int(col[3:]): [cells[col] for cells in nv.values()] for col in gpus if int(col[3:]) not in rows})
    return bonds


def parse(text: str) -> dict[str, Any]:
    lines = text.splitlines()
    found = _header(lines)
    if found is None:
        return {"torch": None, "devices": None}
    start, columns = found
    rows = _rows(lines[start + 1:], columns)
    bonds = _bonds(rows, columns)
    if any(n is not None and n > MAX_LINKS for b in bonds.values() for n in b):
        return {"torch": None, "devices": None}       # a bond wider than any GPU's links: no matrix nvidia-smi prints
    # a GPU that lost every link shows no NV cell at all; its peers still show the switch's bonds
    switched = any(sum(n or 0 for n in b) > MAX_LINKS for b in bonds.values())
    up = {i: (max((n or 0 for n in b), default=0) if switched else sum(n or 0 for n in b)) for i, b in bonds.items()}
    expected = max(up.values(), default=0)
    # bridge pairs (H100 NVL, A100 PCIe): no GPU bonds to more than one peer, so a GPU with no bond may simply have no
    # bridge partner (three cards, one alone: h100-nvl-x3-topo-nv12-pair-plus-lone-gpu2-...): its links are unread,
    # never down (a matrix with no NV cell says nothing of NVLink either)
    paired = not switched and all(sum(1 for n in b if n) <= 1 for b in bonds.values())
    devices = []
    for index in sorted(bonds):
        dev: dict[str, Any] = {"index": index}
        # a cut row's links are its bonds only behind switches; wired directly, its bonds to other cut rows are unread
        # headerless, a GPU's bonds to the columns after the rows are unread: only behind switches (one bond is all
        # of its links) is what the rows show a GPU's whole count
        if expected and (index in rows or switched) and (switched or columns[-1] != _UNNAMED) \
                and not (paired and not up[index]):
            dev["nvlink"] = [True] * up[index] + [False] * (expected - up[index])
        if switched:
            dev["nvswitch"] = True
        rest = rows[index][1] if index in rows and columns[-1] != _UNNAMED else []
        numa = rest[1] if len(rest) > 1 else ""
        if numa.isdecimal() and numa.isascii():
            dev["numa_node"] = int(numa)
        devices.append(dev)
    return {"torch": None, "devices": devices or None}
