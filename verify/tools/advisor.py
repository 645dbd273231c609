"""`verify bench --dataloader`: the DataLoader advisor on the command line (the measuring and the advice are
verify/shared/dataloader.py's; the dataloader check runs its short form)."""
from __future__ import annotations

import argparse
import json
import os
import sys

from ..atomic import write_atomic
from ..report import one_line
from ..shared import dataloader
from ..shared.dataloader import Sizes, format_report, plot, probe, recommend


def main(argv: list[str]) -> int:
    d = Sizes()
    p = argparse.ArgumentParser(prog="verify bench --dataloader", description=(dataloader.__doc__ or "").splitlines()[0])
    p.add_argument("--samples", type=int, default=d.samples, help="samples per epoch (default %(default)s)")
    p.add_argument("--batch-size", type=int, default=d.batch_size, help="batch size (default %(default)s)")
    p.add_argument("--image-size", type=int, default=d.image_size, help="source image side (default %(default)s)")
    p.add_argument("--crop", type=int, default=d.crop, help="augmented output side (default %(default)s)")
    p.add_argument("--epochs", type=int, default=d.epochs, help="epochs per setting (default %(default)s)")
    p.add_argument("--max-workers", type=int, help="cap of the worker sweep (default: the CPU quota)")
    p.add_argument("--no-variants", action="store_true", help="sweep num_workers only")
    p.add_argument("--json", metavar="PATH", help="write measurements and recommendation as JSON")
    p.add_argument("--plot", metavar="PATH", help="write an SVG of samples/s against num_workers")
    args = p.parse_args(argv)
    problems = [f"--{name.replace('_', '-')} must be at least {low}" for name, low in
                (("samples", 1), ("batch_size", 1), ("image_size", 16), ("crop", 8), ("epochs", 1))
                if getattr(args, name) < low]
    if args.crop > args.image_size:
        problems.append("--crop must not exceed --image-size")
    if args.max_workers is not None and args.max_workers < 0:
        problems.append("--max-workers must be 0 or more")
    for path in (args.json, args.plot):
        if path and not os.path.isdir(os.path.dirname(os.path.abspath(path))):
            problems.append(f"the folder of {path} does not exist")
    if problems:
        print(f"verify bench --dataloader: {one_line('; '.join(problems))}", file=sys.stderr)
        return 2
    sizes = Sizes(args.samples, args.batch_size, args.image_size, args.crop, args.epochs, args.max_workers,
                  not args.no_variants)
    print("dataloader: measuring ...", flush=True)
    facts = probe(sizes, progress=lambda text: print(text, flush=True))
    advice = recommend(facts)
    print(format_report(facts, advice))
    if args.json:
        write_atomic(args.json, (json.dumps({"facts": facts, "recommendation": advice}, indent=2) + "\n").encode())
        print(f"JSON: {args.json}")
    if args.plot:
        write_atomic(args.plot, plot(facts, advice))
        print(f"plot: {args.plot}")
    return 0
