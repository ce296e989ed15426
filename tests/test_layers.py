"""Layering rules that keep start-up fast and the logic testable without a terminal."""

import ast
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest
from conftest import PYTHON, ROOT, run_tutor_env

from tests.source import code_files

LOGIC = [
    "tutor.content",
    "tutor.experiments",
    "tutor.grading",
    "tutor.quiz",
    "tutor.progress",
    "tutor.cli",
    "tutor.commands",
    "tutor.model.corpus",
]


# Every module of the package, not just its __init__ (a package's __init__ imports nothing, so
# importing the package alone would load almost nothing).
IMPORT_ALL = """
import importlib, pkgutil, sys
top = importlib.import_module({module!r})
names = [m.name for m in pkgutil.walk_packages(getattr(top, "__path__", []), top.__name__ + ".")]
for name in names:
    importlib.import_module(name)
print(len(names), sorted(m for m in ("textual", "torch") if m in sys.modules))
"""


@pytest.mark.parametrize("module", LOGIC)
def test_logic_packages_import_neither_textual_nor_torch(module):
    code = IMPORT_ALL.format(module=module)
    out = subprocess.run(
        [PYTHON, "-c", code], capture_output=True, text=True, env=run_tutor_env(), check=True
    )
    count, heavy = out.stdout.strip().split(" ", 1)
    assert heavy == "[]"
    assert (
        module in ("tutor.cli", "tutor.model.corpus") or int(count) >= 3
    )  # the walk found the package's modules


def test_version_needs_neither_torch_nor_textual():
    code = "import sys; from tutor.cli import main; main(['--version'])"
    out = subprocess.run([PYTHON, "-c", code], capture_output=True, text=True, env=run_tutor_env())
    assert out.returncode == 0 and out.stdout.startswith("attention-tutor ")


def test_a_closed_pipe_ends_quietly():
    proc = subprocess.Popen(
        [PYTHON, "-m", "tutor", "lessons", "--json"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=run_tutor_env(),
    )
    proc.stdout.read(10)
    proc.stdout.close()
    err = proc.stderr.read().decode()
    proc.wait(timeout=30)
    assert "Traceback" not in err and "BrokenPipe" not in err


# --- import direction, read from the source: every `import` of tutor/ and tutor/model/, nothing imported ---

PACKAGES = ("tutor",)
LOGIC_CORE = ("tutor.content", "tutor.quiz", "tutor.progress", "tutor.experiments", "tutor.grading")


@dataclass(frozen=True)
class Import:
    module: str  # the importing module
    target: str  # what it names, dotted: "tutor.errors.TutorError", "textual.app", "tutor.model.gpt"
    line: int
    at_import_time: bool  # module or class level, outside `if TYPE_CHECKING:` (not inside a function)
    type_only: bool = False  # under `if TYPE_CHECKING:`: for the type checker, never run


def _module_name(file: Path) -> str:
    parts = file.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _is_module(dotted: str) -> bool:
    path = ROOT.joinpath(*dotted.split("."))
    return path.with_suffix(".py").is_file() or (path / "__init__.py").is_file()


def _source_files() -> list[Path]:
    return code_files()


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _imports_of(file: Path) -> tuple[list[Import], list[tuple[str, int]]]:
    """(imports, private names used through an imported module: `runner._one_thread`)."""
    module = _module_name(file)
    tree = ast.parse(file.read_text(encoding="utf-8"), filename=str(file))
    imports: list[Import] = []
    module_aliases: dict[str, str] = {}  # local name -> one of our modules

    def visit(node: ast.AST, at_import_time: bool, type_only: bool = False) -> None:
        for child in ast.iter_child_nodes(node):
            now = at_import_time
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
                now = False
            if isinstance(child, ast.Import):
                for alias in child.names:
                    imports.append(Import(module, alias.name, child.lineno, now, type_only))
                    if alias.asname:
                        module_aliases[alias.asname] = alias.name
            elif isinstance(child, ast.ImportFrom):
                base = child.module or ""
                if child.level:  # relative: resolved against this module's package
                    package = module.split(".")[: -child.level + (file.name == "__init__.py") or None]
                    base = ".".join([*package, *([base] if base else [])])
                for alias in child.names:
                    target = f"{base}.{alias.name}"
                    imports.append(Import(module, target, child.lineno, now, type_only))
                    if base.split(".")[0] in PACKAGES and _is_module(target):
                        module_aliases[alias.asname or alias.name] = target
            if isinstance(child, ast.If) and _is_type_checking(child):
                for part in child.body:
                    visit(ast.Module(body=[part], type_ignores=[]), False, True)
                for part in child.orelse:
                    visit(ast.Module(body=[part], type_ignores=[]), now, type_only)
                continue
            visit(child, now, type_only)

    visit(tree, True)
    private = [
        (f"{module_aliases[n.value.id]}.{n.attr}", n.lineno)
        for n in ast.walk(tree)
        if isinstance(n, ast.Attribute)
        and isinstance(n.value, ast.Name)
        and n.value.id in module_aliases
        and _private(n.attr)
    ]
    return imports, private


def _private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def _under(dotted: str, prefix: str) -> bool:
    return dotted == prefix or dotted.startswith(prefix + ".")


@pytest.fixture(scope="module")
def source_imports() -> dict[str, tuple[list[Import], list[tuple[str, int]]]]:
    return {_module_name(f): _imports_of(f) for f in _source_files()}


def _where(imp: Import) -> str:
    return f"{imp.module}:{imp.line} imports {imp.target}"


# the modules at the top of tutor/grading/: what the learner's commands and the app use
LEARNER_GRADING = sorted(f.stem for f in (ROOT / "tutor" / "grading").glob("*.py") if f.stem != "__init__")
# the modules at the top of tutor/experiments/: the framework, which names the experiments by string only
EXPERIMENT_FRAMEWORK = sorted(
    f.stem for f in (ROOT / "tutor" / "experiments").glob("*.py") if f.stem != "__init__"
)

# (who, what they must never import, why)
FORBIDDEN = [
    *[(core, "tutor.ui", "logic never imports the UI") for core in LOGIC_CORE],
    *[(core, "textual", "logic never imports Textual") for core in LOGIC_CORE],
    ("tutor.content", "tutor.experiments", "content validation is given the experiment names"),
    ("tutor.experiments", "tutor.progress", "experiments compute; their callers store the runs"),
    ("tutor.progress", "tutor.model", "the store does not depend on the model"),
    ("tutor.content", "tutor.model", "content does not depend on the model"),
    ("tutor.quiz", "tutor.model", "the quiz does not depend on the model"),
    # grading's jobs (tutor/grading/__init__.py): the box below the judge, the instructor's on top
    *[
        ("tutor.grading.box", f"tutor.grading.{other}", "the box stands alone: the worker is forked with it")
        for other in ("judging", "instructor", *LEARNER_GRADING)
    ],
    ("tutor.grading.judging", "tutor.grading.instructor", "the judge knows nothing of batches"),
    *[
        (
            f"tutor.grading.{m}",
            "tutor.grading.instructor",
            "the learner's grading does not depend on the instructor's",
        )
        for m in LEARNER_GRADING
    ],
    *[
        (f"tutor.experiments.{m}", "tutor.experiments.course", "the framework imports no experiment")
        for m in EXPERIMENT_FRAMEWORK
    ],
]


@pytest.mark.parametrize(("who", "what", "why"), FORBIDDEN, ids=[f"{a}-x-{b}" for a, b, _ in FORBIDDEN])
def test_imports_point_one_way(source_imports, who, what, why):
    wrong = [
        _where(imp)
        for module, (imports, _private_uses) in source_imports.items()
        if _under(module, who)
        for imp in imports
        if _under(imp.target, what)
    ]
    assert not wrong, f"{why}:\n" + "\n".join(wrong)


# (who, the only parts of tutor/ it may import, why)
STANDS_ALONE = [
    ("tutor.atomicio", (), "tutor.atomicio is below everything: the standard library's kind of helper"),
    ("tutor.model", ("tutor.model", "tutor.atomicio"), "the shared GPT stands alone: a learner imports it"),
]


@pytest.mark.parametrize(("who", "allowed", "why"), STANDS_ALONE, ids=[who for who, _, _ in STANDS_ALONE])
def test_the_model_and_the_helpers_below_it_import_nothing_else_of_ours(source_imports, who, allowed, why):
    wrong = [
        _where(imp)
        for module, (imports, _private_uses) in source_imports.items()
        if _under(module, who)
        for imp in imports
        if _under(imp.target, "tutor")
        and imp.target != "tutor.__version__"
        and not any(_under(imp.target, ok) for ok in allowed)
    ]
    assert not wrong, f"{why}:\n" + "\n".join(wrong)


def test_only_the_ui_imports_textual(source_imports):
    wrong = [
        _where(imp)
        for module, (imports, _private_uses) in source_imports.items()
        if not _under(module, "tutor.ui")
        for imp in imports
        if _under(imp.target, "textual")
    ]
    assert not wrong, "\n".join(wrong)


def _tutor_part(dotted: str) -> str | None:
    """The package or top-level module of tutor/ that `dotted` lies in: tutor.quiz.session.Item ->
    tutor.quiz; None outside tutor/ and for the names of tutor/__init__.py itself."""
    parts = dotted.split(".")
    if parts[0] != "tutor" or len(parts) < 2 or not _is_module(f"tutor.{parts[1]}"):
        return None
    return f"tutor.{parts[1]}"


def _path(edges: dict[str, dict[str, Import]], start: str, goal: str) -> list[str] | None:
    """A shortest chain of packages from start to goal (breadth first), or None."""
    came_from: dict[str, str | None] = {start: None}
    queue = [start]
    for here in queue:
        if here == goal:
            chain = [here]
            while came_from[chain[-1]] is not None:
                chain.append(came_from[chain[-1]])
            return chain[::-1]
        for there in sorted(edges.get(here, {})):
            if there not in came_from:
                came_from[there] = here
                queue.append(there)
    return None


def package_cycles(source_imports) -> list[str]:
    """Each cycle among tutor's packages, once, named by its packages and one import per step.
    Every import counts: at module level, inside functions, and under `if TYPE_CHECKING:`."""
    edges: dict[str, dict[str, Import]] = {}  # package -> package it imports -> first such import
    for module, (imports, _uses) in sorted(source_imports.items()):
        here = _tutor_part(module)
        for imp in imports:
            there = _tutor_part(imp.target)
            if here and there and there != here:
                edges.setdefault(here, {}).setdefault(there, imp)
    cycles: dict[frozenset[str], str] = {}
    for here in sorted(edges):
        for there in sorted(edges[here]):
            back = _path(edges, there, here)
            if back is None or frozenset([here, *back]) in cycles:
                continue
            chain = [here, *back]
            steps = [_where(edges[a][b]) for a, b in zip(chain, chain[1:], strict=False)]
            cycles[frozenset(chain)] = " -> ".join(chain) + "\n    " + "\n    ".join(steps)
    return list(cycles.values())


def test_tutor_packages_import_each_other_in_one_direction(source_imports):
    """No cycle among tutor's packages and top-level modules: each can be read, tested and moved
    knowing only what it imports."""
    cycles = package_cycles(source_imports)
    assert not cycles, "package cycles:\n" + "\n".join(cycles)


def _module_of(dotted: str, modules: set[str]) -> str | None:
    """The module of ours that `dotted` names or lies in: tutor.quiz.session.Item -> tutor.quiz.session."""
    parts = dotted.split(".")
    return next(
        (".".join(parts[:n]) for n in range(len(parts), 0, -1) if ".".join(parts[:n]) in modules), None
    )


def module_cycles(source_imports) -> list[list[str]]:
    """Each cycle among our modules (strongly connected, more than one module), sorted. Every import that
    runs counts (at module level and inside functions); one under `if TYPE_CHECKING:` does not, as it never
    runs, nor a module's import of its own package's __init__."""
    modules = set(source_imports)
    edges: dict[str, set[str]] = {}
    for module, (imports, _uses) in source_imports.items():
        for imp in imports:
            there = _module_of(imp.target, modules)
            if there and there != module and not imp.type_only and not module.startswith(there + "."):
                edges.setdefault(module, set()).add(there)
    order, low, stack, cycles = {}, {}, [], []

    def visit(here: str) -> None:  # Tarjan's strongly connected components
        order[here] = low[here] = len(order)
        stack.append(here)
        for there in sorted(edges.get(here, ())):
            if there not in order:
                visit(there)
                low[here] = min(low[here], low[there])
            elif there in stack:
                low[here] = min(low[here], order[there])
        if low[here] == order[here]:
            part = []
            while not part or part[-1] != here:
                part.append(stack.pop())
            if len(part) > 1:
                cycles.append(sorted(part))

    for module in sorted(modules):
        if module not in order:
            visit(module)
    return cycles


def test_no_two_modules_import_each_other_even_inside_functions(source_imports):
    """A cycle of modules is one module in two files: neither can be read or moved alone."""
    assert module_cycles(source_imports) == []


def test_the_module_cycle_finder_finds_a_cycle_through_a_function_and_not_through_type_checking():
    def imp(module: str, target: str, type_only: bool = False) -> Import:
        return Import(module, target, 1, False, type_only)

    found = {
        "a.x": ([imp("a.x", "a.y.f")], []),
        "a.y": ([imp("a.y", "a.z")], []),
        "a.z": ([imp("a.z", "a.x.C")], []),
    }
    assert module_cycles(found) == [["a.x", "a.y", "a.z"]]
    found["a.z"] = ([imp("a.z", "a.x.C", type_only=True)], [])
    assert module_cycles(found) == []


def test_the_cycle_finder_names_a_cycle_inside_a_function():
    def imp(module: str, target: str) -> Import:
        return Import(module, target, 1, False)

    found = package_cycles(
        {
            "tutor.quiz.session": ([imp("tutor.quiz.session", "tutor.progress.store.Store")], []),
            "tutor.progress.summary": ([imp("tutor.progress.summary", "tutor.quiz.status.is_due")], []),
            "tutor.content.loader": ([imp("tutor.content.loader", "tutor.texts.say")], []),
        }
    )
    assert found == [
        "tutor.progress -> tutor.quiz -> tutor.progress\n"
        "    tutor.progress.summary:1 imports tutor.quiz.status.is_due\n"
        "    tutor.quiz.session:1 imports tutor.progress.store.Store"
    ]


def test_no_module_imports_a_private_name_of_another(source_imports):
    wrong = [
        _where(imp)
        for imports, _uses in source_imports.values()
        for imp in imports
        if any(_private(part) for part in imp.target.split(".")[1:])
    ]
    wrong += [
        f"{module}:{line} uses {name}"
        for module, (_imports, uses) in source_imports.items()
        for name, line in uses
    ]
    assert not wrong, "\n".join(wrong)


def _loaded_at_import(module: str, graph: dict[str, list[Import]]) -> set[str]:
    """Every module importing `module` runs, ours followed through their own import-time imports."""
    seen: set[str] = set()
    stack = [module]
    while stack:
        name = stack.pop()
        parts = name.split(".")
        for i in range(1, len(parts) + 1):  # importing a.b.c runs a, a.b and a.b.c
            prefix = ".".join(parts[:i])
            if prefix in seen:
                continue
            seen.add(prefix)
            for imp in graph.get(prefix, []):
                if imp.at_import_time:
                    target = imp.target if _is_module(imp.target) else imp.target.rsplit(".", 1)[0]
                    if target.split(".")[0] in PACKAGES:
                        stack.append(target)
                    else:
                        seen.add(target.split(".")[0])
    return seen


@pytest.mark.parametrize("package", LOGIC)
def test_logic_modules_load_neither_textual_nor_torch_at_import(source_imports, package):
    """The static twin of the subprocess test above: every module of the package, followed through
    everything of ours it imports at module level."""
    graph = {module: imports for module, (imports, _uses) in source_imports.items()}
    modules = [m for m in graph if _under(m, package)]
    assert modules
    heavy = {m: sorted(_loaded_at_import(m, graph) & {"textual", "torch"}) for m in modules}
    assert {m: h for m, h in heavy.items() if h} == {}


# --- the UI uses Textual's public API ---------------------------------------------------------------

# None: binding descriptions have no public setter, so tutor/ui/bindings.py labels keys at drawing time
# and reads the keys from the classes' BINDINGS rather than from a node's private `_bindings`.
# each with its reason; a Textual upgrade that renames one fails tests/test_ui_* where it is used
TEXTUAL_PRIVATE_ALLOWED: set[str] = {
    # tutor.ui.driver overrides LinuxDriver.disable_input (without its 200 ms join) and does the rest of
    # what the method it replaces does: Textual offers no public way to turn the mouse reporting off
    "_disable_mouse_support",
}


def _textual_modules_used(source_imports) -> set[str]:
    """Every Textual module the code imports from, or whose names it imports (textual.widgets.Input -> the
    module that defines Input)."""
    import importlib
    import inspect

    used = set()
    for imports, _uses in source_imports.values():
        for imp in imports:
            if imp.target.split(".")[0] != "textual":
                continue
            module_name, _, name = imp.target.rpartition(".")
            try:
                used.add(importlib.import_module(imp.target).__name__)
                continue
            except ImportError:
                pass
            obj = getattr(importlib.import_module(module_name), name, None)
            defined = inspect.getmodule(obj) if obj is not None else None
            used.add(defined.__name__ if defined and defined.__name__.startswith("textual") else module_name)
    return used


def _textual_private_names(source_imports) -> set[str]:
    """Private attributes of everything Textual the code touches: the members of every class in the
    Textual modules it imports, along their MRO, and the instance attributes that every module defining
    one of those classes assigns (`self._screen_stacks = ...`)."""
    import importlib
    import inspect
    import re

    classes = set()
    for module_name in _textual_modules_used(source_imports):
        module = importlib.import_module(module_name)
        classes |= {c for c in vars(module).values() if inspect.isclass(c)}
    names, files = set(), set()
    for cls in classes:
        for c in cls.__mro__:
            if c.__module__.startswith("textual"):
                names |= {n for n in vars(c) if _private(n)}
                files.add(inspect.getsourcefile(c))
    for file in files - {None}:
        names |= set(re.findall(r"self\.(_[a-z]\w*)\s*[:=]", Path(file).read_text("utf-8")))
    return names


def test_the_private_textual_names_cover_every_module_the_ui_touches(source_imports):
    used = _textual_modules_used(source_imports)
    assert {"textual.app", "textual.screen", "textual.widgets._input", "textual.command"} <= used, used
    names = _textual_private_names(source_imports)
    assert {"_compositor", "_screen_stacks", "_on_key", "_cursor_blink_visible"} & names


def test_the_ui_uses_no_private_textual_attribute(source_imports):
    ours: set[str] = set()  # private names the UI itself defines or assigns
    uses: list[tuple[str, int, str, bool]] = []  # (module, line, name, on self)
    for file in sorted((ROOT / "tutor" / "ui").rglob("*.py")):
        for node in ast.walk(ast.parse(file.read_text(encoding="utf-8"))):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                ours.add(node.name)
            elif isinstance(node, ast.Attribute) and _private(node.attr):
                if isinstance(node.ctx, ast.Store):
                    ours.add(node.attr)
                on_self = isinstance(node.value, ast.Name) and node.value.id == "self"
                uses.append((_module_name(file), node.lineno, node.attr, on_self))
            elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
                ours.add(node.target.id)  # a class attribute such as `_shown: tuple | None = None`
    textual_private = _textual_private_names(source_imports) - TEXTUAL_PRIVATE_ALLOWED
    wrong = [
        f"{module}:{line} uses {name}"
        for module, line, name, on_self in uses
        if name in textual_private and (not on_self or name not in ours)
    ]
    assert not wrong, "\n".join(wrong)


def _is_environ(node: ast.AST) -> bool:
    return isinstance(node, ast.Attribute) and node.attr == "environ"


def _reads_a_named_variable(node: ast.AST) -> bool:
    """`os.environ.get(...)`, `os.getenv(...)` or `os.environ[...]` (a read, not an assignment)."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
        return (node.func.attr == "get" and _is_environ(node.func.value)) or node.func.attr == "getenv"
    return isinstance(node, ast.Subscript) and _is_environ(node.value) and isinstance(node.ctx, ast.Load)


def test_only_the_settings_module_reads_a_named_environment_variable():
    """Reading a variable lives in tutor/settings.py, which lists every variable the tutor reads;
    passing the whole environment on to a child (`dict(os.environ)`) is not a read."""
    wrong = [
        f"{_module_name(file)}:{node.lineno}"
        for file in _source_files()
        if _module_name(file) != "tutor.settings"
        for node in ast.walk(ast.parse(file.read_text(encoding="utf-8")))
        if _reads_a_named_variable(node)
    ]
    assert not wrong, "\n".join(wrong)


# --- processes are started in one place: tutor/proc/ ---

# the calls that start a process, by the module that offers them
STARTS_A_PROCESS = {
    "subprocess": {"Popen", "run", "call", "check_call", "check_output", "getoutput", "getstatusoutput"},
    "os": {"fork", "forkpty", "posix_spawn", "posix_spawnp", "system", "popen"}
    | {f"exec{s}" for s in ("l", "le", "lp", "lpe", "v", "ve", "vp", "vpe")}
    | {f"spawn{s}" for s in ("l", "le", "lp", "lpe", "v", "ve", "vp", "vpe")},
    "asyncio": {"create_subprocess_exec", "create_subprocess_shell"},
    "pty": {"fork", "spawn"},
    "multiprocessing": None,  # any of it
    "concurrent.futures": {"ProcessPoolExecutor"},
}


def _process_starts(file: Path) -> list[tuple[int, str]]:
    """(line, what) for every call or import in `file` that starts a process."""
    found = []
    for node in ast.walk(ast.parse(file.read_text(encoding="utf-8"))):
        call = (
            node.func if isinstance(node, ast.Call) else None
        )  # a call: a type named in an annotation is none
        if isinstance(call, ast.Attribute) and isinstance(call.value, ast.Name):
            names = STARTS_A_PROCESS.get(call.value.id, set())
            if names is not None and call.attr in names:
                found.append((node.lineno, f"{call.value.id}.{call.attr}"))
        elif isinstance(node, ast.Import):
            found += [(node.lineno, a.name) for a in node.names if a.name.split(".")[0] == "multiprocessing"]
        elif isinstance(node, ast.ImportFrom) and node.module is not None:
            top = node.module.split(".")[0]
            names = STARTS_A_PROCESS.get(node.module, STARTS_A_PROCESS.get(top, set()))
            found += [
                (node.lineno, f"{node.module}.{a.name}")
                for a in node.names
                if names is None or a.name in names
            ]
    return found


def test_only_tutor_proc_starts_a_process():
    wrong = [
        f"{_module_name(file)}:{line} {what}"
        for file in code_files()
        if not _under(_module_name(file), "tutor.proc")
        for line, what in _process_starts(file)
    ]
    assert not wrong, "start processes in tutor/proc/, through its functions:\n" + "\n".join(wrong)


def test_the_process_finder_sees_each_way_to_start_one(tmp_path):
    code = tmp_path / "starts.py"
    code.write_text(
        "import os, subprocess, asyncio\nfrom multiprocessing import Pool\n"
        "from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor\nfrom os import fork\n"
        "subprocess.run(['x'])\nos.fork()\nos.execv('x', [])\nasyncio.create_subprocess_exec('x')\n"
        "subprocess.PIPE\nos.getpid()\nproc: subprocess.Popen[bytes]\n",
        encoding="utf-8",
    )
    whats = sorted(what for _, what in _process_starts(code))  # ast.walk goes breadth first
    assert whats == sorted(
        [
            "multiprocessing.Pool",
            "concurrent.futures.ProcessPoolExecutor",
            "os.fork",
            "subprocess.run",
            "os.fork",
            "os.execv",
            "asyncio.create_subprocess_exec",
        ]
    )


# --- the UI's widgets do not reach up to the app ---------------------------------------------------


def _casts_to_the_app(node: ast.AST) -> bool:
    """`cast("TutorApp", ...)` or `cast(TutorApp, ...)`."""
    if not (isinstance(node, ast.Call) and node.args):
        return False
    func, kind = node.func, node.args[0]
    named_cast = (isinstance(func, ast.Name) and func.id == "cast") or (
        isinstance(func, ast.Attribute) and func.attr == "cast"
    )
    names_app = (isinstance(kind, ast.Constant) and kind.value == "TutorApp") or (
        isinstance(kind, ast.Name) and kind.id == "TutorApp"
    )
    return named_cast and names_app


def test_widgets_reach_the_app_through_its_host_protocol_only(source_imports):
    """A widget asks the app for what tutor.ui.widgets.host.Host offers, or posts a Message: it never
    imports tutor.ui.app (not even for the type checker) nor casts `self.app` to TutorApp."""
    wrong = [
        _where(imp)
        for module, (imports, _uses) in source_imports.items()
        if _under(module, "tutor.ui.widgets")
        for imp in imports
        if _under(imp.target, "tutor.ui.app")
    ]
    wrong += [
        f"{_module_name(file)}:{node.lineno} casts to TutorApp"
        for file in sorted((ROOT / "tutor" / "ui" / "widgets").rglob("*.py"))
        for node in ast.walk(ast.parse(file.read_text(encoding="utf-8")))
        if _casts_to_the_app(node)
    ]
    assert not wrong, "\n".join(wrong)
