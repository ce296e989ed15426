"""`python -m tutor serve`: the app in a browser, for one learner or a whole class.

    python -m tutor serve                       this learner's tutor on 127.0.0.1:8000, behind a link
                                                with a random token (printed), like Jupyter's
    python -m tutor serve --roster class.csv    one link and one home per learner of the roster
        [--dir DIR]                             the class's folder (default ./tutor-class): homes in
                                                DIR/learners/ID, the links in DIR/links.csv (mode 0600)
        [--valid-days N] [--renew]              how long a new link works (30 days); new links for all
    [--host H] [--port P] [--public-url URL]    where to listen; the address the links should show
    [--unix-socket PATH]                        this learner's tutor behind a proxy that logged them in
                                                (JupyterHub's jupyter-server-proxy, tutor.serve.hub): on a
                                                Unix socket in a folder only they may enter, no link
    [--idle-minutes M] [--max-sessions N]       a session ends after M minutes without a key (30); at
                                                most N sessions at once (40)
    [--memory-mb M] [--cpus C] [--tasks N]      each learner's bounds: the app and all it starts (1536
                                                MiB, 1 core, 128 processes and threads)
    [--max-per-address N] [--bounds KIND]       connections from one address (128); the kind of bounds
                                                (cgroup2, cgroup1, systemd, rlimits; default the best)

The roster is a CSV file with the columns id,name[,language] (see tutor/serve/roster.py). Links are
printed once, when they are made; `python -m tutor class DIR` shows where the class stands.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

DEFAULT_PORT = 8000
BOUNDS = ("cgroup2", "cgroup1", "systemd", "rlimits")


def add_arguments(parser, t) -> None:
    parser.add_argument("--roster", type=Path, metavar="CSV", help=t("cli.opt.serve.roster"))
    parser.add_argument(
        "--dir", type=Path, default=Path("tutor-class"), metavar="DIR", help=t("cli.opt.serve.dir")
    )
    parser.add_argument("--host", default="127.0.0.1", help=t("cli.opt.serve.host"))
    parser.add_argument("--port", type=int, default=DEFAULT_PORT, help=t("cli.opt.serve.port"))
    parser.add_argument("--public-url", metavar="URL", help=t("cli.opt.serve.public_url"))
    parser.add_argument("--unix-socket", type=Path, metavar="PATH", help=t("cli.opt.serve.unix_socket"))
    parser.add_argument("--idle-minutes", type=float, default=30.0, metavar="M", help=t("cli.opt.serve.idle"))
    parser.add_argument("--max-sessions", type=int, default=40, metavar="N", help=t("cli.opt.serve.max"))
    parser.add_argument("--valid-days", type=float, default=30.0, metavar="N", help=t("cli.opt.serve.valid"))
    parser.add_argument("--renew", action="store_true", help=t("cli.opt.serve.renew"))
    parser.add_argument("--memory-mb", type=int, default=1536, metavar="M", help=t("cli.opt.serve.memory"))
    parser.add_argument("--cpus", type=float, default=1.0, metavar="C", help=t("cli.opt.serve.cpus"))
    parser.add_argument("--tasks", type=int, default=128, metavar="N", help=t("cli.opt.serve.tasks"))
    parser.add_argument(
        "--max-per-address", type=int, default=128, metavar="N", help=t("cli.opt.serve.per_address")
    )
    parser.add_argument("--bounds", choices=BOUNDS, help=t("cli.opt.serve.bounds"))


def _check(args) -> None:
    from tutor.errors import TutorError

    if not 0 <= args.port <= 65535:
        raise TutorError("err.serve.port", got=args.port)
    if not args.idle_minutes > 0 or not args.max_sessions > 0 or not args.valid_days > 0:
        raise TutorError("err.serve.positive")
    if args.renew and args.roster is None:
        raise TutorError("err.serve.renew_alone")
    if args.unix_socket is not None and args.roster is not None:
        raise TutorError("err.serve.socket_roster")
    if args.memory_mb < 256 or args.tasks < 32 or not 0 < args.cpus <= 64 or args.max_per_address < 4:
        raise TutorError(
            "err.serve.bounds",
            memory=args.memory_mb,
            cpus=args.cpus,
            tasks=args.tasks,
            per_address=args.max_per_address,
        )


def _check_folder(folder: Path, lessons: Path) -> None:
    """The class folder holds every home: no learner's process may read it, so it may not lie inside
    what their processes read (tutor.serve.confine.readable)."""
    from tutor.errors import TutorError
    from tutor.serve.confine import readable

    for path in readable(lessons):
        try:
            inside = folder.is_relative_to(path.resolve())
        except OSError:
            continue
        if inside:
            raise TutorError("err.serve.folder_readable", folder=str(folder), path=str(path))


def run(args, ctx) -> int:
    from tutor.serve.bounds import Limits
    from tutor.serve.server import serve
    from tutor.texts import say

    _check(args)
    limits = Limits(memory_bytes=args.memory_mb * 2**20, cpu_cores=args.cpus, pids=args.tasks)
    secure = (args.public_url or "").lower().startswith("https:")
    options = dict(
        idle_minutes=args.idle_minutes,
        max_sessions=args.max_sessions,
        limits=limits,
        per_address=args.max_per_address,
        secure=secure,
        public_url=args.public_url,
        proxied=args.unix_socket is not None,
    )
    config, fresh = _config(args, ctx, options)

    def ready(port: int, placement) -> None:
        _say_ready(args, ctx, config, fresh, args.public_url or f"http://{args.host}:{port}")
        _say_bounds(args, ctx.lang, placement)

    serve(config, args.host, args.port, ready, bounds=args.bounds, unix_socket=args.unix_socket)
    print(say("serve.stopped", ctx.lang), file=sys.stderr)
    return 0


def _config(args, ctx, options: dict) -> tuple:
    """(the server's config, the learners given a new link): behind a proxy, one learner, or a roster's class."""
    from tutor.serve import roster
    from tutor.serve.server import ServeConfig

    if args.unix_socket is not None:
        return _behind_proxy(ctx, options), []
    if args.roster is None:
        learner = roster.RosterLearner("learner", "", ctx.lang, roster.new_token())
        return ServeConfig([learner], ctx.lessons_dir, None, {learner.id: ctx.home}, **options), [learner]
    folder = args.dir.expanduser().resolve()
    _check_folder(folder, ctx.lessons_dir)
    learners = roster.read_learners(args.roster)
    learners, fresh = roster.give_tokens(folder, learners, args.valid_days, args.renew)
    _write_class_file(folder, learners)
    return ServeConfig(learners, ctx.lessons_dir, folder, {}, **options), fresh


def _say_ready(args, ctx, config, fresh: list, base: str) -> None:
    """Where the class is served, on stdout: the socket behind a proxy, the one link, or the class's links."""
    from tutor.serve import roster
    from tutor.texts import say

    lang = ctx.lang
    if args.unix_socket is not None:
        print(say("serve.proxied", lang, path=args.unix_socket, home=ctx.home), flush=True)
        if config.exchange is not None:
            entry = config.exchange / "learners" / config.learners[0].id
            print(say("serve.exchange", lang, path=entry), flush=True)
    elif args.roster is None:
        print(say("serve.single", lang, link=roster.link(base, fresh[0].token), home=ctx.home), flush=True)
    else:
        assert config.folder is not None  # a roster's class serves from its folder
        path = roster.write_links(config.folder, config.learners, base)
        print(say("serve.class", lang, n=len(config.learners), url=base, folder=config.folder), flush=True)
        for learner in fresh:
            print(f"  {learner.id}\t{learner.name}\t{roster.link(base, learner.token)}")
        print(say("serve.links", lang, n=len(fresh), path=path), flush=True)


def _say_bounds(args, lang: str, placement) -> None:
    """Each session's bounds and how learners are kept apart, on stderr."""
    from tutor.grading.box import landlock
    from tutor.texts import say

    abi = landlock.abi()
    apart = say("serve.landlock", lang, abi=abi) if abi else say("serve.no_landlock", lang)
    bounds = {"memory": args.memory_mb, "cpus": args.cpus, "tasks": args.tasks, "how": placement.summary()}
    print(say("serve.bounds", lang, **bounds, apart=apart), file=sys.stderr, flush=True)


def _behind_proxy(ctx, options: dict):
    """Behind the hub (tutor.serve.hub): its user as the one learner, and their entry in the exchange."""
    from tutor.serve import roster
    from tutor.serve.server import ServeConfig
    from tutor.settings import env
    from tutor.texts import say

    exchange, user = env("TUTOR_EXCHANGE"), env("JUPYTERHUB_USER") or "learner"
    if not roster.ID_PATTERN.fullmatch(user):  # it would name a folder of the exchange: never
        if exchange:
            print(say("serve.exchange_id", ctx.lang, user=user[:80], path=exchange), file=sys.stderr)
        exchange, user = None, "learner"
    learner = roster.RosterLearner(user, "", ctx.lang, "")
    return ServeConfig(
        [learner],
        ctx.lessons_dir,
        None,
        {learner.id: ctx.home},
        exchange=Path(exchange) if exchange else None,
        **options,
    )


def _write_class_file(folder: Path, learners) -> None:
    """`class.json`: who is in the class (no tokens), for `python -m tutor class`."""
    from tutor.atomicio import atomic_write_text
    from tutor.serve.roster import CLASS_FILE

    rows = [{"id": learner.id, "name": learner.name, "language": learner.lang} for learner in learners]
    atomic_write_text(
        folder / CLASS_FILE, json.dumps({"learners": rows}, ensure_ascii=False, indent=1) + "\n"
    )
