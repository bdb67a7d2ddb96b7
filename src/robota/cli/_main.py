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
    demo = commands.add_parser(
        "demo",
        help="run the offline demo (no network, no API key)",
        description="Run a real agent loop offline; the model's replies come from a cassette.",
    )
    demo.add_argument(
        "--no-delay", action="store_true", help="print streamed text without pacing it"
    )
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``robota`` command with ``argv`` (default ``sys.argv[1:]``); return its exit code."""
    parser = _parser()
    args = parser.parse_args(argv)
    if args.command == "demo":
        from robota.cli._demo import run_demo  # noqa: PLC0415 - keep `robota --help` fast

        return run_demo(sys.stdout, chunk_delay=0.0 if args.no_delay else 0.03)
    parser.print_help()
    return 2
