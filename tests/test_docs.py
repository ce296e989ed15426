"""The front door and the docs: README stays small, every link inside the project leads to a file,
nothing points outside the project, README's capture is what the app draws today, and what the pages say
of the code's layout and the checks to run is what the code and CI have, and the runs' times keep
to the goals the page sets."""

from __future__ import annotations

import asyncio
import re
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PAGES = [
    ROOT / "README.md",
    ROOT / "CHANGELOG.md",
    ROOT / "tutor" / "lessons" / "README.md",
    *sorted((ROOT / "docs").glob("*.md")),
]
LINK = re.compile(r"\]\(([^)#\s]+)(?:#[^)]*)?\)")
# values at float noise (a layer without positions: about 1e-7) differ between CPUs in their digits
NOISE = re.compile(r"\d(?:\.\d+)?e-0[5-9]")


def test_readme_is_a_front_door_of_at_most_10_kb():
    assert len((ROOT / "README.md").read_bytes()) <= 10 * 1024


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_link_of_a_page_leads_to_a_file_of_the_project(page):
    text = page.read_text(encoding="utf-8")
    for target in LINK.findall(text):
        if re.match(r"[a-z]+://", target):
            continue
        assert (page.parent / target).resolve().exists(), f"{page.relative_to(ROOT)}: {target}"


def test_nothing_in_the_project_points_at_files_outside_it():
    tracked = [p for p in ROOT.rglob("*") if p.suffix in {".py", ".md", ".toml"} and p.is_file()]
    skip = {".venv", ".git", "build", "node_modules"}
    found = []
    for path in tracked:
        if skip & set(path.relative_to(ROOT).parts) or path.match("*.egg-info/*"):
            continue
        text = path.read_text(encoding="utf-8", errors="replace")
        if path == Path(__file__):
            continue
        found += [
            f"{path.relative_to(ROOT)}: {m}"
            for m in re.findall(r"DESIGN\.md|REFERENCE\.md|\.\./shared", text)
        ]
    assert not found, "\n".join(found)


def _block_after(page: Path, heading: str) -> list[str]:
    """The lines of the first fenced block after `heading` on `page`."""
    text = page.read_text(encoding="utf-8")
    after = text[text.index(f"\n{heading}\n") :]
    start = after.index("```\n") + 4
    return after[start : after.index("```", start)].splitlines()


def test_the_runs_times_on_the_development_page_keep_to_its_goals():
    """The default run's time is a figure with the load it was measured at, said to be over the page's
    goal exactly when it is; the whole `.ci/run` is within its goal."""
    text = (ROOT / "docs" / "development.md").read_text(encoding="utf-8")
    goal = int(re.search(r"the goal is under (\d+) minutes here \(2 cores\)", text)[1])
    row = next(line for line in text.splitlines() if line.startswith("| default |"))
    cell = row.rstrip(" |").rsplit(" | ", 1)[1]
    measured = re.match(r"(?:\d+–)?(\d+) s at load \d", cell)
    assert measured, f"the default run's figure and its load: {cell}"
    assert (f"over the {goal}-minute goal" in cell) == (int(measured[1]) > goal * 60), cell
    ci = re.search(
        r"`\.ci/run` \([^)]*\) takes about (\d+)–(\d+)\s+minutes here; the goal is under (\d+)", text
    )
    assert ci and int(ci[2]) <= int(ci[3]), "the whole .ci/run's time and its goal"


def test_the_serve_page_says_how_long_a_stopping_server_waits():
    from tutor.serve.server import QUIT_GRACE_S, SHUTDOWN_S

    text = " ".join((ROOT / "docs" / "serve.md").read_text(encoding="utf-8").split())
    assert f"the app has {QUIT_GRACE_S:g} s to save its draft" in text
    assert f"the server exits within {SHUTDOWN_S:g} s" in text


def test_the_pages_test_commands_are_the_checks_ci_runs_first():
    ci = (ROOT / ".ci/run").read_text(encoding="utf-8").splitlines()
    checks = ci[ci.index("ruff check . && ruff format --check .") : ci.index("python -m pytest -q") + 1]
    assert checks == ["ruff check . && ruff format --check .", "mypy", "python -m pytest -q"]
    assert _block_after(ROOT / "docs/development.md", "## Tests") == checks
    assert _block_after(ROOT / "README.md", "## Test") == checks


def test_the_pre_commit_hooks_are_cis_lint_format_and_type_check():
    import yaml

    (repo,) = yaml.safe_load((ROOT / ".pre-commit-config.yaml").read_text(encoding="utf-8"))["repos"]
    hooks = {hook["id"]: hook for hook in repo["hooks"]}
    assert [h["entry"] for h in hooks.values()] == ["ruff check", "ruff format --check", "mypy"]
    checked = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["mypy"]["files"]
    named = re.fullmatch(r"mypy \(([^;]+); .*\)", hooks["mypy"]["name"])
    assert named and named[1].split(", ") == checked


def test_the_layout_table_names_every_package_and_module_of_tutor():
    page = (ROOT / "docs/development.md").read_text(encoding="utf-8")
    rows = {m[1]: m[2] for m in re.finditer(r"^\| `([^`]+)` \| (.*) \|$", page, re.M)}
    packages = {f"tutor/{p.parent.name}/" for p in (ROOT / "tutor").glob("*/__init__.py")}
    assert packages <= set(rows), sorted(packages - set(rows))
    modules = {p.stem for p in (ROOT / "tutor").glob("*.py")} - {"__init__", "__main__"}
    named = set(re.findall(r"`(\w+)`", rows["tutor/*.py"]))
    assert modules <= named, sorted(modules - named)


def test_each_part_of_the_figures_page_names_the_command_that_makes_its_figures():
    page = (ROOT / "docs/figures.md").read_text(encoding="utf-8")
    parts = re.split(r"^## ", page, flags=re.M)[1:]
    assert len(parts) >= 5
    for part in parts:
        assert re.search(r"`python benchmarks/\w+\.py[^`]*`", part), part.splitlines()[0]


def _make_screenshots():
    sys.path.insert(0, str(ROOT / "docs"))
    try:
        import make_screenshots
    finally:
        sys.path.remove(str(ROOT / "docs"))
    return make_screenshots


# a grade's or a run's time, and today's date (a review's next one), which differ between runs
TIMES = re.compile(r"\d+(?:\.\d+)? ?(?:ms|s)\b|\d{4}-\d\d-\d\d")


@pytest.mark.slow
@pytest.mark.parametrize("name", ["home", "lesson-heatmap", "lesson-heatmap-zh", "quiz", "exercise"])
def test_a_screenshot_in_docs_is_what_the_app_draws_now(name, tmp_path):
    """docs/*.svg, shot again; the training run's is left out (its curve and ETA are the machine's)."""
    from tests.english import svg_text

    shots = _make_screenshots()
    lang, steps = shots.SHOTS[name]
    fresh = asyncio.run(shots.shoot(name, lang, steps, into=tmp_path))

    def text(path: Path) -> str:  # a section's read mark (✓) comes after seconds on screen: the host's pace
        shown = svg_text(path.read_text(encoding="utf-8")).replace("✓", " ")
        return NOISE.sub("NOISE", TIMES.sub("TIME", shown))

    assert text(ROOT / "docs" / f"{name}.svg") == text(fresh), (
        f"python docs/make_screenshots.py shoots {name} again"
    )


def test_the_readmes_capture_is_what_the_app_draws_now():
    make_screenshots = _make_screenshots()
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    shown = make_screenshots.CAPTURE.search(readme)
    assert shown, "README.md has no capture block"
    drawn = asyncio.run(make_screenshots.capture())
    # python docs/make_screenshots.py writes it again
    assert NOISE.sub("NOISE", shown[2]) == NOISE.sub("NOISE", drawn)
