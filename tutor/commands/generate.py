"""`python -m tutor generate [--prompt TEXT] [--temperature T] [--top-k K] [--seed S] [--max N] [--top]
[--json]`: the shared GPT writes a poem in the terminal, character by character.

After the poem: how many characters and lines it wrote, how many lines are regular verse (5 or 7
characters and a closing ，。？！；), and the mean probability of the characters it chose. `--top` shows,
for every written character, the five likeliest next characters with their probabilities. `--json`
prints one object: {"prompt", "text", "steps": [{"char", "prob", "top": [[char, prob], ...]}],
"figures": {...}, "params": {...}}. Exit 0; bad values exit 2.
"""

from __future__ import annotations

import json
import sys
import time

from tutor.errors import TutorError
from tutor.texts import Said, number, say


def add_arguments(parser, t) -> None:
    parser.add_argument("--prompt", default="", metavar="TEXT", help=t("cli.opt.generate.prompt"))
    parser.add_argument(
        "--temperature", type=float, default=1.0, metavar="T", help=t("cli.opt.generate.temperature")
    )
    parser.add_argument("--top-k", type=int, default=0, metavar="K", help=t("cli.opt.generate.top_k"))
    parser.add_argument("--seed", type=int, metavar="S", help=t("cli.opt.generate.seed"))
    parser.add_argument("--max", type=int, default=200, metavar="N", help=t("cli.opt.generate.max"))
    parser.add_argument("--top", action="store_true", help=t("cli.opt.generate.top"))
    parser.add_argument("--json", action="store_true", help=t("cli.opt.generate.json"))


def run(args, ctx) -> int:
    _check_settings(args, ctx.lang)
    from tutor.model.checkpoint import load_checkpoint
    from tutor.model.sample import figures, write
    from tutor.settings import default_checkpoint

    ck = load_checkpoint(default_checkpoint())
    started = time.perf_counter()
    steps = []
    if not args.json:
        print(args.prompt, end="", flush=True)
    settings = {"temperature": args.temperature, "top_k": args.top_k, "seed": args.seed}
    for step in write(ck.model, ck.tokenizer, args.prompt, max_new=args.max, **settings):
        steps.append(step)
        if not args.json:
            print(step.char, end="", flush=True)
    seconds = time.perf_counter() - started
    text = args.prompt + "".join(s.char for s in steps)
    found = figures(text, [s.prob for s in steps])
    if args.json:
        _print_json(args, text, found, steps)
    else:
        _print_figures(args, ctx.lang, text, found, steps, seconds)
    return 0


def _check_settings(args, lang: str) -> None:
    if not 0 < args.temperature <= 5:
        raise TutorError(say("cli.generate.temperature", lang, got=f"{args.temperature:g}"))
    if not 0 <= args.top_k <= 10_000:
        raise TutorError(say("cli.generate.top_k", lang, got=args.top_k))
    if not 1 <= args.max <= 2000:
        raise TutorError(say("cli.generate.max", lang, got=args.max))


def _print_json(args, text: str, found: dict, steps: list) -> None:
    params = {"temperature": args.temperature, "top_k": args.top_k, "seed": args.seed, "max": args.max}
    data = {
        "prompt": args.prompt,
        "text": text,
        "params": params,
        "figures": found,
        "steps": [
            {"char": s.char, "prob": round(s.prob, 4), "top": [[c, round(p, 4)] for c, p in s.top]}
            for s in steps
        ],
    }
    print(json.dumps(data, ensure_ascii=False))


def _print_figures(args, lang: str, text: str, found: dict, steps: list, seconds: float) -> None:
    """After the text as it was written: its figures, and with --top each step's candidates."""
    if not text.endswith("\n"):
        print()
    print()
    print(
        say(
            "cli.generate.figures",
            lang,
            characters=Said("exp.write.characters", n=found["characters"]),
            lines=Said("exp.write.lines", n=found["lines"]),
            regular=number(found["regular_lines"], lang),
            mean=number(found["mean_prob"], lang, decimals=2),
            seconds=number(seconds, lang, decimals=1),
        )
    )
    if args.top:
        for s in steps:
            shown = "  ".join(f"{_visible(c)} {number(p, lang, decimals=2)}" for c, p in s.top)
            print(f"{_visible(s.char)} {number(s.prob, lang, decimals=2)}  ←  {shown}")
    sys.stdout.flush()


def _visible(char: str) -> str:
    return {"\n": "⏎", " ": "␠"}.get(char, char)
