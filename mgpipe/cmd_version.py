"""``mgpipe version``: print the installed package version."""

from __future__ import annotations

import argparse

import mgpipe


def run(args: argparse.Namespace) -> int:
    print(mgpipe.__version__)
    return 0


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser("version", help="print the mgpipe version")
    p.set_defaults(func=run)
