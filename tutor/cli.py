"""`python -m tutor [SUBCOMMAND]`: the app with no subcommand, headless tools otherwise.

Every subcommand lives in `tutor/commands/<name>.py` and provides `HELP`, `add_arguments(parser)`
and `run(args, ctx) -> int`. Those modules import only lightweight things at import time, so
parsing the command line never waits for torch or Textual.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from dataclasses import dataclass
from pathlib import Path

from models.errors import ModelError
from tutor import __version__
from tutor.errors import TutorError
from tutor.i18n import LANGS, pick_lang

COMMANDS = ("lessons", "check", "experiment", "exercise", "grade", "quiz", "progress", "train")

EXIT_FAIL, EXIT_USAGE = 1, 2


@dataclass(frozen=True)
class Context:
    """The three global options, resolved."""

    lang: str
    lessons_dir: Path
    home: Path


def _common_options(for_subcommand: bool) -> argparse.ArgumentParser:
    # The same options before or after the subcommand: on the subcommand, SUPPRESS keeps an
    # option given before it from being reset to None.
    default = argparse.SUPPRESS if for_subcommand else None
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument(
        "--lang", choices=LANGS, default=default, help="language (default: TUTOR_LANG, locale, en)"
    )
    common.add_argument(
        "--lessons", type=Path, default=default, metavar="DIR", help="lesson folder (default: shipped)"
    )
    common.add_argument(
        "--home",
        type=Path,
        default=default,
        metavar="DIR",
        help="progress and workspace (default: TUTOR_HOME, user-data dir)",
    )
    return common


class _Parser(argparse.ArgumentParser):
    def error(self, message: str):  # argparse's own errors: exit 2 with usage, as it does
        self.print_usage(sys.stderr)
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message}\n")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="python -m tutor", description=__doc__.splitlines()[0], parents=[_common_options(False)]
    )
    parser.add_argument("--version", action="version", version=f"attention-tutor {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    sub_common = _common_options(True)
    for name in COMMANDS:
        module = importlib.import_module(f"tutor.commands.{name}")
        p = sub.add_parser(name, help=module.HELP, description=module.HELP, parents=[sub_common])
        module.add_arguments(p)
        p.set_defaults(_module=module)
    return parser


def resolve_context(args: argparse.Namespace) -> Context:
    from tutor.settings import default_home, shipped_lessons_dir

    lessons = getattr(args, "lessons", None)
    home = getattr(args, "home", None)
    return Context(
        lang=pick_lang(getattr(args, "lang", None)),
        lessons_dir=(lessons.expanduser() if lessons else shipped_lessons_dir()),
        home=(home.expanduser() if home else default_home()),
    )


def parse(argv: list[str] | None) -> argparse.Namespace:
    """The command line. With only the global options (the app: what a learner types most), the
    subcommand modules are not imported at all; anything else (a subcommand, --help, a mistake)
    goes to the full parser."""
    argv = sys.argv[1:] if argv is None else argv
    quick = _Parser(prog="python -m tutor", add_help=False, parents=[_common_options(False)])
    options, rest = quick.parse_known_args(argv)
    if not rest:
        options.command = None
        return options
    return build_parser().parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse(argv)
    ctx = resolve_context(args)
    try:
        if args.command is None:
            from tutor.commands.app import run_app

            return run_app(ctx)
        return args._module.run(args, ctx)
    except (TutorError, ModelError) as err:  # bad input, in the tutor or in a corpus/checkpoint
        print(f"error: {err}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        from tutor.texts import say

        print(say("cli.interrupted", ctx.lang), file=sys.stderr)
        return 130
    except BrokenPipeError:
        # the reader went away (`... | head`): stop quietly; point stdout at devnull so the
        # interpreter's final flush does not raise again
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_FAIL
