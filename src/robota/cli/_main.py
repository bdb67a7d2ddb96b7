"""The ``robota`` command-line entry point."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from robota._version import __version__

__all__ = ["main"]


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="robota",
        description="Robota: an agent runtime for Python.",
    )
    parser.add_argument("--version", action="version", version=f"robota {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    commands.add_parser(
        "demo",
        help="run the offline demo (no network, no API key)",
        description="Exercise what Robota has today, offline.",
    )
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``robota`` command with ``argv`` (default ``sys.argv[1:]``); return its exit code."""
    parser = _parser()
    args = parser.parse_args(argv)
    if args.command == "demo":
        from robota.cli._demo import run_demo  # noqa: PLC0415 - keep `robota --help` fast

        return run_demo(sys.stdout)
    parser.print_help()
    return 2
