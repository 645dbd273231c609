"""Issue 35: `verify explain` reads the real excerpts of tests/data/real-world the way people paste them, and gives the
verdict of their translation all the same. Each class of what pasting does (verify/explain/pasted.py: the encoding,
markdown, launchers' prefixes, tabs, a terminal's hard wrap, surrounding text) is applied to excerpts of every kind;
none may change the verdict, and none may turn a verdict that is not a pass into a pass. A file holding two kinds is
read as both and gives the worse verdict."""
from __future__ import annotations

import json
import re

import pytest

from tests.helpers import ROOT
from verify import explain as ex
from verify.explain import ib, kernel, pasted, smi
from verify.explain.wrap import unwrap
from verify.options import Options

pytestmark = pytest.mark.unit

CORPUS = ROOT / "tests" / "data" / "real-world"
# one excerpt per kind, pass and fault alike: nvidia-smi -q (whole and grepped), the table with it, ibstat, ibv_devinfo,
# ulimit/UCX, nccl-tests, NCCL INFO logs (Ray-prefixed, a failure), kernel logs (Xid, SXid), a relay, DCGM, CUDA
EXCERPTS = ("titan-v-idle-persistence-off-no-ecc-gen1", "nvlink-fabric-completed-health-unhealthy",
            "a10-idle-p8-pcie-gen1-of-gen4-healthy", "h100-roce-ibstat-two-cx7-rails-polling-and-disabled",
            "ibv-devinfo-ib-vf-4126-port-active", "ulimit-memlock-64k-ibv-create-cq-fails",
            "a3mega-h100-two-nodes-allreduce-338-busbw", "dgx-spark-ray-hpcx-plugin-roce-200",
            "nccl-ib-no-device-ibext-ipoib-node-socket-channels", "h100-ipoib-hpcx-plugin-completion-error-4-vendor-81",
            "xid45-caused-by-xid149-xid145-four-gpus", "sxid-12028-nvswitch-egress-nonposted-priv",
            "xid94-contained-ecc-device-plugin-marks-gpu-unhealthy", "gb200-correctable-ecc-storm-dcgm-fields",
            "bandwidthtest-cuda-802-system-not-ready",
            # dcgmi diag's boxes: a paste's trailing blanks after each `|` once made every row as
            # wide as the widest and joined them as a terminal's wrap (the diag's fault then unread)
            "t4-dcgmi-diag-gpu0-context-refused", "dcgmi-diag-r3-eight-h200-all-pass-eud-skip")


def _raw(slug):
    return (CORPUS / slug / "raw.txt").read_text()


def _expected(slug):
    (_, v), = json.loads((CORPUS / slug / "expected.json").read_text())["verdicts"].items()
    return v["status"], v["code"], v["owner"]


def verdict(text):
    r = ex.explain_text(text, "pasted.txt", Options())
    return r.status, r.code, r.owner


def per_line(f):
    return lambda text: "\n".join(f(n, line) for n, line in enumerate(text.split("\n")))


def hard_wrap(width):
    """What a terminal `width` columns wide does to a copy: every longer line cut into rows of exactly that width."""
    def wrap(text):
        return "\n".join(line[i:i + width] for line in text.split("\n") for i in range(0, max(len(line), 1), width))
    return wrap


def unexpand(text):
    """Runs of blanks that reach a tab stop (8) as tabs: a table copied through `unexpand -a`, a pager, an editor."""
    return "\n".join(re.sub(r" {2,}", lambda m: "\t" * (len(m.group(0)) // 8) + " " * (len(m.group(0)) % 8)
                            if len(m.group(0)) >= 8 else m.group(0), line) for line in text.split("\n"))


ENCODING = {
    "crlf": lambda t: t.replace("\n", "\r\n"),
    "bom": lambda t: "\ufeff" + t,
    "trailing blanks": per_line(lambda n, line: line + "  \t "),
    "ansi colour": per_line(lambda n, line: f"\x1b[1;32m{line[:4]}\x1b[0m{line[4:]}" if line else line),
    "ansi without its esc": per_line(lambda n, line: f"[0;33m{line}[0m" if line else line),
    "ansi as cat -v shows it": per_line(lambda n, line: f"^[[32m{line}^[[m" if line else line),
    "every line end doubled": lambda t: t.replace("\n", "\n\n"),
}
MARKDOWN = {
    "code fence": lambda t: "```text\n" + t.rstrip("\n") + "\n```\n",
    "github quote": per_line(lambda n, line: "> " + line),
    "quoted code fence": lambda t: "\n".join("> " + line for line in ("```\n" + t.rstrip("\n") + "\n```").split("\n")),
    "indented code block": per_line(lambda n, line: "    " + line),
    "embedded in a traceback and pip noise": lambda t: (
        "Traceback (most recent call last):\n  File \"/opt/conda/lib/python3.10/site-packages/torch/distributed/run.py\""
        ", line 798, in main\n    run(args)\nRuntimeError: something went wrong, logs below\n" + t +
        "\nCollecting numpy\n  Downloading numpy-1.26.4-cp310-cp310-manylinux_2_17_x86_64.whl (18.2 MB)\n"
        "WARNING: Running pip as the 'root' user can result in broken permissions\nSuccessfully installed numpy-1.26.4\n"),
}
PREFIXES = {
    "srun -l": per_line(lambda n, line: f"{n % 16}: {line}"),
    "srun --label padded": per_line(lambda n, line: f"{n % 16:>2}: {line}"),
    "mpirun --tag-output": per_line(lambda n, line: f"[1,{n % 4}]<stdout>:{line}"),
    "kubectl logs --timestamps": per_line(lambda n, line: f"2024-05-01T12:00:00.123456789Z {line}"),
    "docker compose": per_line(lambda n, line: f"trainer-1  | {line}"),
    "journald short-iso": per_line(lambda n, line: f"2024-05-01T12:00:00+0000 host kernel: {line}"),
    "syslog": per_line(lambda n, line: f"May  1 12:00:00 host kernel: {line}"),
    "dmesg -T": per_line(lambda n, line: f"[Wed May  1 12:00:00 2024] {line}"),
    "dmesg": per_line(lambda n, line: f"[{1234.5 + n:12.6f}] {line}"),
    "ray": per_line(lambda n, line: f"(RayWorker pid=123, ip=10.0.0.1) {line}"),
    "torchrun rank": per_line(lambda n, line: f"[rank3]:{line}"),
    "torchrun default": per_line(lambda n, line: f"[default0]:{line}"),
    "pdsh": per_line(lambda n, line: f"node00{n % 2}: {line}"),
    "kubectl over srun": per_line(lambda n, line: f"2024-05-01T12:00:00.1Z {n % 4}: {line}"),
}
LAYOUT = {
    "tabs": unexpand,
    "wrapped at 80 columns": hard_wrap(80),
    "wrapped at 120 columns": hard_wrap(120),
    "wrapped at 100 columns": hard_wrap(100),
    "srun -l wrapped at 80": lambda t: hard_wrap(80)(PREFIXES["srun -l"](t)),
}


def _cases(classes):
    return [pytest.param(slug, f, id=f"{name}-{slug[:40]}") for name, f in classes.items() for slug in EXCERPTS]


@pytest.mark.parametrize("slug", EXCERPTS)
def test_each_excerpt_as_printed_gives_its_translation(slug):
    assert verdict(_raw(slug)) == _expected(slug)


@pytest.mark.parametrize(("slug", "paste"), _cases(ENCODING))
def test_the_encoding_of_a_paste_changes_no_verdict(slug, paste):
    assert verdict(paste(_raw(slug))) == _expected(slug)


@pytest.mark.parametrize(("slug", "paste"), _cases(MARKDOWN))
def test_markdown_and_surrounding_text_change_no_verdict(slug, paste):
    assert verdict(paste(_raw(slug))) == _expected(slug)


@pytest.mark.parametrize(("slug", "paste"), _cases(PREFIXES))
def test_a_launchers_prefix_on_every_line_changes_no_verdict(slug, paste):
    assert verdict(paste(_raw(slug))) == _expected(slug)


@pytest.mark.parametrize(("slug", "paste"), _cases(LAYOUT))
def test_tabs_and_a_terminals_wrap_change_no_verdict(slug, paste):
    assert verdict(paste(_raw(slug))) == _expected(slug)


# one of each class, over every excerpt of the corpus
EACH_CLASS = {name: classes[name] for classes, name in ((ENCODING, "ansi colour"), (MARKDOWN, "quoted code fence"),
                                                       (PREFIXES, "kubectl over srun"), (LAYOUT, "srun -l wrapped at 80"),
                                                       (LAYOUT, "tabs"), (MARKDOWN, "indented code block"))}


@pytest.mark.parametrize("slug", sorted(p.parent.name for p in CORPUS.glob("*/raw.txt")))
def test_no_paste_turns_a_verdict_that_is_not_a_pass_into_a_pass(slug):
    text = _raw(slug)
    if verdict(text)[0] == "pass":
        return
    for name, paste in EACH_CLASS.items():
        assert verdict(paste(text))[0] != "pass", name


def test_a_tool_line_exactly_as_wide_as_the_terminal_is_not_joined_to_the_next():
    """nvidia-smi -q pads its names: at 60 columns `Incorrect Configuration : N/A` fills a row and is whole, and the
    `Processes` line after it is a record of its own, not its rest."""
    text = _raw("h200-mig-five-instances-shared-3g-idle")
    assert verdict(hard_wrap(60)(text)) == _expected("h200-mig-five-instances-shared-3g-idle")
    for slug in EXCERPTS:          # nothing in an unwrapped excerpt is joined
        lines = pasted.encoding(_raw(slug)).split("\n")
        assert unwrap(lines) == lines, slug


def test_a_lone_line_cut_by_the_terminal_is_read_whole():
    line = ("May 19 07:08:57 ip-26-0-146-100 kernel: [680111.646286] NVRM: Xid (PCI:0000:10:1c): 63, pid=1850, "
            "Row Remapper: New row marked for remapping, reset gpu to activate.")
    assert verdict(hard_wrap(80)(line)) == verdict(line) == ("fail", "RETIREMENT_PENDING", "host")


def test_a_kernel_line_cut_before_its_code_is_never_all_clear():
    """A paste cut inside the address says an Xid happened but not which: the events are unknown, not none."""
    for cut in ("[ 123.4] NVRM: Xid (PCI:0000:3b:0", "[ 1.2] nvidia-nvswitch1: SXid (PCI:0000:8"):
        facts = kernel.parse(cut)
        assert facts["xid_events"] is None and facts["sxid_events"] is None, cut
        assert verdict(cut)[0] != "pass", cut
    sxid = kernel.parse("[ 1.2] nvidia-nvswitch1: SXid (PCI:0000:84:00.0): 12028")["sxid_events"]
    assert [e["sxid"] for e in sxid] == [12028]          # cut after its code: the code is read, as an Xid's is


def test_two_kinds_pasted_together_give_the_worse_verdict_and_name_both():
    healthy_gpu, port_down = "titan-v-idle-persistence-off-no-ecc-gen1", "h100-roce-ibstat-two-cx7-rails-polling-and-disabled"
    for first, second in ((healthy_gpu, port_down), (port_down, healthy_gpu)):
        r = ex.explain_text(_raw(first) + "\n" + _raw(second), "both.txt", Options())
        assert (r.name, r.status, r.code) == ("fabric", "fail", "FABRIC_PORT_DOWN")
        assert any(d.startswith("also read as nvidia-smi -q: gpu pass") for d in r.details), r.details
    fallen = "gpu-fallen-off-bus-multiline-no-xid"
    r = ex.explain_text(_raw("bf3-mt41692-roce-bonds-200-active") + "\n" + _raw(fallen), "both.txt", Options())
    assert (r.name, r.status) == ("gpu", "fail")


def test_another_tools_lines_beside_a_listing_are_not_read_as_its_fields():
    """nvidia-smi pads `State      : Completed`; ibv_devinfo's fields sit against their colon. And an indented block
    that shows no nvidia-smi field is no GPU."""
    both = _raw("ibv-devinfo-ib-vf-4126-port-active") + "\n" + _raw("titan-v-idle-persistence-off-no-ecc-gen1")
    ports = [p for a in ib.parse(pasted.bare(both))["adapters"] for p in a["ports"]]
    assert [p["state"] for p in ports] == ["ACTIVE"]
    devices = smi.parse(pasted.bare(_raw("h100-roce-ibstat-two-cx7-rails-polling-and-disabled") + "\n" +
                                    _raw("titan-v-idle-persistence-off-no-ecc-gen1")))["devices"]
    assert [d["name"] for d in devices] == ["NVIDIA TITAN V"]


def test_prefixes_that_are_a_tools_own_words_are_kept():
    assert pasted.bare("hca_id:\tmlx5_0\n\t\tport:\t1\n") == "hca_id: mlx5_0\n                port:   1"
    assert pasted.bare("NVRM: Xid (PCI:0000:3b:00): 79\nNVRM: GPU at PCI:0000:3b:00\nNVRM: x\n").startswith("NVRM:")
    assert pasted.bare("elapsed [2m30s]") == "elapsed [2m30s]"
    assert pasted.as_printed("[ 12.5] NVRM: Xid (PCI:0000:3b:00): 79") == "[ 12.5] NVRM: Xid (PCI:0000:3b:00): 79"
