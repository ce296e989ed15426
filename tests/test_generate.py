"""`python -m tutor generate`: the shared GPT writes a poem in the terminal, through the real CLI, and
tutor.model.sample.write says what it weighed at each step."""

from __future__ import annotations

import json
import subprocess
from concurrent.futures import ThreadPoolExecutor

import pytest

from tests.conftest import PYTHON, run_tutor_env, tutor_here


def tutor(home, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [PYTHON, "-m", "tutor", *args],
        capture_output=True,
        text=True,
        env=run_tutor_env(home),
        timeout=120,
        stdin=subprocess.DEVNULL,
    )


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> dict[str, subprocess.CompletedProcess]:
    """Every CLI run of this module: the real processes at once (each starts Python and torch; nothing
    they share is written), and meanwhile the second seeded poem and the Chinese one in this process."""
    home = tmp_path_factory.mktemp("generate")
    cases = {
        "json-1": ("--prompt", "白日", "--seed", "2", "--json"),
        "temperature": ("--temperature", "0"),
        "top-k": ("--top-k", "-1", "--lang", "de"),
    }
    here = {
        "json-2": ("--prompt", "白日", "--seed", "2", "--json"),
        "zh": ("--prompt", "白日", "--seed", "2", "--top", "--lang", "zh"),
    }
    with ThreadPoolExecutor(max_workers=len(cases)) as pool:
        done = {name: pool.submit(tutor, home, "generate", *args) for name, args in cases.items()}
        ran = {name: tutor_here("generate", *args, home=home) for name, args in here.items()}
        return ran | {name: future.result() for name, future in done.items()}


def test_a_seeded_poem_is_written_the_same_twice_with_its_figures_in_json(runs):
    pair = [runs["json-1"], runs["json-2"]]  # by a process of its own, and by this one
    assert all(r.returncode == 0 for r in pair), pair[0].stderr
    first, second = (json.loads(r.stdout) for r in pair)
    assert first == second
    assert first["text"].startswith("白日") and first["text"] == "白日" + "".join(
        s["char"] for s in first["steps"]
    )
    figures = first["figures"]
    assert figures["characters"] == len(first["steps"]) > 0
    assert 0 <= figures["regular_lines"] <= figures["lines"] >= 1
    for step in first["steps"]:
        probs = [p for _, p in step["top"]]
        assert (
            len(step["top"]) == 5 and probs == sorted(probs, reverse=True) and 0 <= step["prob"] <= probs[0]
        )


def test_the_poem_and_its_figures_are_written_in_the_learners_language(runs):
    out = runs["zh"]
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[0].startswith("白日") and "，" in lines[0]
    assert any("个字" in line and "平均概率" in line for line in lines)
    assert any("←" in line for line in lines)  # --top: each character beside the five it came from


def test_bad_values_exit_2_with_a_message(runs):
    out = runs["temperature"]
    assert (
        out.returncode == 2
        and "--temperature must be above 0" in out.stderr
        and "Traceback" not in out.stderr
    )
    out = runs["top-k"]
    assert out.returncode == 2 and "--top-k muss zwischen 0 (kein Schnitt) und 10.000 liegen" in out.stderr


def test_write_stops_at_the_end_of_a_poem_and_gives_every_heads_attention():
    import torch

    from tutor.model.checkpoint import load_checkpoint
    from tutor.model.sample import POEM_END, write
    from tutor.settings import default_checkpoint

    ck = load_checkpoint(default_checkpoint())
    steps = list(write(ck.model, ck.tokenizer, "白日依山尽，", seed=2, attention=True, max_new=300))
    text = "白日依山尽，" + "".join(s.char for s in steps)
    assert POEM_END not in text and len(steps) < 300  # it ended the poem itself
    cfg = ck.model.cfg
    for s in steps[:5]:
        # the choosing position saw the opening line break, the prompt and what was written before
        assert s.attention.shape == (cfg.n_layer, cfg.n_head, 1 + s.position)
        assert s.context[0] == "\n" and s.context[1:] == text[: s.position]
        assert torch.allclose(s.attention.sum(-1), torch.ones(cfg.n_layer, cfg.n_head), atol=1e-5)


def test_the_write_experiment_streams_the_poem_and_looks_into_any_character():
    from tutor.experiments.runner import run_quick

    events = []
    params = {"prompt": "白日", "seed": 2, "inspect": 5, "layer": 3, "head": 4}
    result = run_quick("write", params, on_event=events.append, use_cache=False)
    texts = [e["text"] for e in events if e["event"] == "writing"]
    assert texts[0] == "白日" + texts[0][2:] and len(texts[0]) == 3  # one character at a time
    assert all(b.startswith(a) and len(b) == len(a) + 1 for a, b in zip(texts, texts[1:], strict=False))
    poem, heat, table = result.panels
    assert (poem.kind, heat.kind, table.kind) == ("text", "heatmap", "table")
    assert result.metrics["characters"] == len(table.rows) == len(texts[-1]) - 2
    assert table.rows[4][1] == texts[-1][2 + 4]  # the fifth character written is the one looked into
    # what it saw: the line break that opens a poem, the prompt and 4 characters
    assert len(heat.values[0]) == len(heat.col_labels) == 1 + 2 + 4 and heat.col_labels[0] == "↵"
    assert abs(sum(heat.values[0]) - 1) < 1e-3
    again = run_quick("write", {**params, "inspect": 1}, use_cache=False)
    assert again.panels[2].rows == table.rows  # the seed keeps the poem


def test_every_character_written_shows_a_probability_above_zero():
    """A hot sampling draws characters of tiny probability: each shows its own, never 0."""
    from tutor.experiments.runner import run_quick

    result = run_quick(
        "write", {"prompt": "白日", "seed": 3, "temperature": 3.0, "max_chars": 60}, use_cache=False
    )
    probs = [row[2] for row in result.panels[2].rows]
    assert min(probs) < 0.0005  # the run did draw an unlikely one
    assert all(p > 0 for p in probs)
    tops = [top for row in result.panels[2].rows for top in row[3].split("  ")]
    assert not any(top.endswith(" 0.00") or top.endswith(" 0") for top in tops)


async def test_the_apps_panel_streams_the_poem_and_shows_where_a_head_looked(home):
    from textual.widgets import Input

    from tests.ui_helpers import make_app, open_experiment, settle

    app = make_app(home)
    async with app.run_test(size=(100, 40)) as pilot:
        await app.course_ready.wait()
        panel = await open_experiment(app, pilot, "multi-head", "write")
        seen = []
        shown = panel._on_event

        def spy(event):
            seen.append(event)
            shown(event)

        panel._on_event = spy
        # a seed no other test writes with: a result this process already holds would come back whole
        await panel.show_params()
        panel.query_one("#p-seed", Input).value = "4242"
        assert panel.run()
        await settle(app, 0.3)
        assert [e for e in seen if e["event"] == "writing"], "the poem was not streamed"
        assert panel.result is not None and panel.result.experiment == "write"
        heat = panel.result.panels[1]
        assert heat.kind == "heatmap" and len(heat.row_labels) == 1
