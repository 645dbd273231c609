"""Commands added by later modules (build, verify, compat, ...); kept apart so cli.py stays small."""
from __future__ import annotations

import argparse


def add_commands(sub: argparse._SubParsersAction) -> None:
    return None
