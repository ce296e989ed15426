"""`python -m tutor [SUBCOMMAND]`: the app with no subcommand, headless tools otherwise.

Every subcommand lives in `tutor/commands/<name>.py` (or the module MODULES names for it) and
provides `add_arguments(parser, t)` and `run(args, ctx) -> int`. Those modules import only
lightweight things at import time, so parsing the command line never waits for torch or Textual.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from dataclasses import dataclass
from functools import partial
from pathlib import Path

from tutor import __version__
from tutor.errors import TutorError
from tutor.i18n import FALLBACK, LANGS, pick_lang
from tutor.model.errors import ModelError
from tutor.texts import say

COMMANDS = (
    "lessons",
    "check",
    "experiment",
    "exercise",
    "grade",
    "quiz",
    "read",
    "progress",
    "train",
    "generate",
    "serve",
    "class",
)
# a command whose name is a Python keyword lives in a module of another name
MODULES = {"class": "class_view"}

EXIT_FAIL, EXIT_USAGE = 1, 2


@dataclass(frozen=True)
class Context:
    """The three global options, resolved."""

    lang: str
    lessons_dir: Path
    home: Path


def _common_options(for_subcommand: bool, lang: str) -> argparse.ArgumentParser:
    # The same options before or after the subcommand: on the subcommand, SUPPRESS keeps an
    # option given before it from being reset to None.
    default = argparse.SUPPRESS if for_subcommand else None
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--lang", choices=LANGS, default=default, help=say("cli.global.lang", lang))
    common.add_argument(
        "--lessons", type=Path, default=default, metavar="DIR", help=say("cli.global.lessons", lang)
    )
    common.add_argument(
        "--home", type=Path, default=default, metavar="DIR", help=say("cli.global.home", lang)
    )
    common.add_argument(
        "--allow-weak-box", action="store_true", default=default, help=say("cli.global.allow_weak_box", lang)
    )
    return common


def _plain_option(parser: argparse.ArgumentParser, lang: str) -> None:
    """--plain, before any subcommand only: the plain mode instead of the app (tutor.commands.read)."""
    parser.add_argument("--plain", action="store_true", help=say("cli.global.plain", lang))


class _Formatter(argparse.HelpFormatter):
    """argparse's help layout, with its own words ("usage:") in `lang` and lines broken by
    tutor.wrap, which counts a Chinese character as two columns and breaks between them."""

    def __init__(self, prog: str, lang: str, **kwargs):
        super().__init__(prog, **kwargs)
        self.lang = lang

    def _format_usage(self, usage, actions, groups, prefix):
        from rich.cells import cell_len

        prefix = say("cli.usage", self.lang) if prefix is None else prefix
        stand_in = "u" * cell_len(prefix)  # argparse counts characters; "用法：" takes six columns
        return prefix + super()._format_usage(usage, actions, groups, stand_in)[len(stand_in) :]

    def _split_lines(self, text: str, width: int) -> list[str]:
        from tutor.wrap import wrap

        return wrap(" ".join(text.split()), width)

    def _fill_text(self, text: str, width: int, indent: str) -> str:
        return "\n".join(indent + line for line in self._split_lines(text, width))


class _Parser(argparse.ArgumentParser):
    """An argument parser that speaks `lang`: headings, -h, usage and errors from the catalogue
    (argparse's own reasons after "error:", such as "invalid int value", stay in English)."""

    def __init__(self, *, lang: str, add_help: bool = True, **kwargs):
        super().__init__(add_help=False, formatter_class=partial(_Formatter, lang=lang), **kwargs)
        self.lang = lang
        self._positionals.title = say("cli.heading.positional", lang)
        self._optionals.title = say("cli.heading.options", lang)
        if add_help:
            self.add_argument("-h", "--help", action="help", help=say("cli.opt.help", lang))

    def error(self, message: str):  # argparse's own errors: exit 2 with usage, as it does
        self.print_usage(sys.stderr)
        self.exit(EXIT_USAGE, f"{self.prog}: {say('cli.error', self.lang, message=message)}\n")


def build_parser(lang: str = FALLBACK) -> argparse.ArgumentParser:
    """The whole command line, its help in `lang`. Each command's add_arguments(parser, t) gets
    `t(key)`, the catalogue's text for `key` in `lang`."""

    def t(key: str) -> str:
        return say(key, lang)

    parser = _Parser(
        prog="python -m tutor",
        description=t("cli.description"),
        lang=lang,
        parents=[_common_options(False, lang)],
    )
    _plain_option(parser, lang)
    parser.add_argument(
        "--version", action="version", version=f"attention-tutor {__version__}", help=t("cli.opt.version")
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    sub_common = _common_options(True, lang)
    for name in COMMANDS:
        module = importlib.import_module(f"tutor.commands.{MODULES.get(name, name)}")
        text = say(f"cli.command.{name}", lang)
        p = sub.add_parser(name, help=text, description=text, parents=[sub_common], lang=lang)  # type: ignore[list-item]  # typeshed: parents of the subparser class; argparse takes any
        module.add_arguments(p, t)
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
    lang = pick_lang()  # before --lang is read: for a mistake in the global options themselves
    quick = _Parser(prog="python -m tutor", add_help=False, lang=lang, parents=[_common_options(False, lang)])
    _plain_option(quick, lang)
    options, rest = quick.parse_known_args(argv)
    if not rest:
        options.command = None
        return options
    return build_parser(pick_lang(options.lang)).parse_args(argv)  # its help and errors speak --lang


def main(argv: list[str] | None = None) -> int:
    args = parse(argv)
    ctx = resolve_context(args)
    if getattr(args, "allow_weak_box", False):
        from tutor.settings import allow_weak_box

        allow_weak_box(True)  # for this process's grades and every child's (the app's, a served class's)
    try:
        if args.command is None and getattr(args, "plain", False):
            from tutor.commands import read

            return read.run(args, ctx)
        if args.command is None:
            from tutor.commands.app import run_app

            return run_app(ctx)
        return args._module.run(args, ctx)
    except (TutorError, ModelError) as err:  # bad input, in the tutor or in a corpus/checkpoint
        if isinstance(err, ModelError):  # tutor/model/ speaks English: its words, framed in the learner's
            err = TutorError("err.app.model", detail=str(err))
        print(say("cli.error", ctx.lang, message=err), file=sys.stderr)  # worded in ctx.lang (in_lang)
        return EXIT_USAGE
    except KeyboardInterrupt:
        print(say("cli.interrupted", ctx.lang), file=sys.stderr)
        return 130
    except BrokenPipeError:
        # the reader went away (`... | head`): stop quietly; point stdout at devnull so the
        # interpreter's final flush does not raise again
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_FAIL
