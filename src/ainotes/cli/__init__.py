"""The ``ainotes`` command: presets, validation, MFU, rooflines and collectives, to the terminal or to files.

A thin adapter over the core and the chart pipeline. Each module of this package registers one
group of subcommands (``register(commands, common)``); :data:`COMMAND_GROUPS` lists them in the
order ``ainotes --help`` shows them, so a new command is one module and one line here. What every
command shares (the one-line-error parser, flag types, preset loading, tables) is in
:mod:`ainotes.cli.shared`.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence

from ainotes.base.errors import InputError
from ainotes.base.files import short_path
from ainotes.cli import catalogue, charts, comms, measured, parallel, serving, shared, site, training

COMMAND_GROUPS = (catalogue, charts, comms, measured, training, parallel, serving, site)


def build_parser() -> argparse.ArgumentParser:
    """The ``ainotes`` argument parser with its subcommands."""
    common = shared.Parser(add_help=False)
    common.add_argument(
        "--presets-dir", metavar="DIR", default=argparse.SUPPRESS,
        help="folder of preset YAML files (default: $AINOTES_PRESETS_DIR, else ./presets)",
    )
    parser = shared.Parser(
        prog="ainotes",
        description="Figures and charts for AI-systems notes: GPU presets, MFU, rooflines, collectives.",
        parents=[common],
    )
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True, parser_class=shared.Parser)
    for group in COMMAND_GROUPS:
        group.register(commands, common)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status (0, or 2 for a user mistake)."""
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # --help, or a usage error already printed as one line
        return exc.code if isinstance(exc.code, int) else shared.EXIT_USER_ERROR
    try:
        return args.handler(args)
    except InputError as exc:
        message = shared.flagged(" ".join(str(exc).splitlines()), parser, args.command)
        print(f"ainotes {args.command}: {message}", file=sys.stderr)
        return shared.EXIT_USER_ERROR
    except OSError as exc:  # a path no check above could foresee (a disk error, a name too long)
        if isinstance(exc, BrokenPipeError):
            return _quiet_broken_pipe()
        place = f"{short_path(str(exc.filename))}: " if exc.filename else ""
        print(f"ainotes {args.command}: {place}{exc.strerror or exc.__class__.__name__}", file=sys.stderr)
        return shared.EXIT_USER_ERROR
    except KeyboardInterrupt:
        return 130


def _quiet_broken_pipe() -> int:
    """The reader went away (`ainotes presets | head`): stop quietly, as other tools do."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass
    return 1
