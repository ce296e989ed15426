"""Line plots have ticks at round values in the language's numbers, and their legend sits above
the plot, right-aligned and measured in terminal cells, never on the start of the curves."""

from __future__ import annotations

from rich.cells import cell_len
from rich.console import Group
from textual.app import App, ComposeResult
from textual.widgets import Static

from tests.ui_helpers import plain
from tutor.content.schema import ExperimentRef
from tutor.experiments.course.training import compare_runs, run_label
from tutor.experiments.params import TrainCompareParams
from tutor.experiments.render import legend_rows, log_ticks, nice_ticks, table, tick_labels
from tutor.experiments.result import Msg, Series, SeriesPanel, TablePanel, columns
from tutor.ui.widgets.experiment_panel import ExperimentPanel
from tutor.ui.widgets.result_view import SeriesPlot


def test_ticks_sit_at_round_values_inside_the_data():
    assert nice_ticks(7.71, 8.71) == [7.8, 8.0, 8.2, 8.4, 8.6]
    assert nice_ticks(1, 133) == [25, 50, 75, 100, 125]
    assert nice_ticks(25.0, 81.2) == [40, 60, 80]
    assert nice_ticks(1, 1000) == [200, 400, 600, 800, 1000]
    assert nice_ticks(0, 1) == [0, 0.25, 0.5, 0.75, 1]
    assert log_ticks(0.0003, 1.0) == [0.001, 0.01, 0.1, 1.0]
    assert nice_ticks(5.0, 5.0) == [5.0]


def test_tick_labels_share_their_decimals_and_write_the_languages_numbers():
    assert tick_labels([7.5, 8.0, 8.5], "en") == ["7.5", "8.0", "8.5"]
    assert tick_labels([7.5, 8.0, 8.5], "de") == ["7,5", "8,0", "8,5"]
    assert tick_labels([0, 500, 1000], "de") == ["0", "500", "1.000"]
    assert tick_labels([0, 0.25, 0.5], "zh") == ["0.00", "0.25", "0.50"]


def test_the_legend_is_packed_in_terminal_cells():
    names = ["1 个头，种子 1337", "4 个头，种子 1337", "8 个头，种子 1337"]  # 17 characters, 28 cells each
    rows = legend_rows(names, 62)
    assert rows == [[0, 1], [2]]  # two entries of 31 cells and a gap would be 64 cells
    for row in legend_rows(names, 40):
        assert sum(3 + cell_len(names[i]) for i in row) + 2 * (len(row) - 1) <= 40


def _panel(lang: str) -> SeriesPanel:
    steps = [float(s) for s in range(50, 1001, 50)]
    return SeriesPanel(
        title=Msg("exp.train-compare.plot"),
        x_label=Msg("exp.train-compare.step"),
        y_label=Msg("exp.train-compare.val_loss"),
        series=[
            Series(
                name=Msg("exp.train-compare.heads", n=n),
                x=steps,
                y=[8.71 - n * 0.01 - s / 400 for s in steps],
            )
            for n in (1, 4, 8)
        ],
    )


class _Plots(App):
    def compose(self) -> ComposeResult:
        for lang in ("en", "de", "zh"):
            yield SeriesPlot(_panel(lang), lang, classes=lang)


async def test_the_legend_sits_above_the_plot_right_aligned_and_the_ticks_are_round():
    app = _Plots()
    app.CSS = "SeriesPlot { height: 16; width: 80; }"
    async with app.run_test(size=(80, 60)) as pilot:
        await pilot.pause()
        for lang in ("en", "de", "zh"):
            plot = app.query_one(f".{lang}", SeriesPlot)
            lines = plain(plot.render(), 80).splitlines()
            assert all(cell_len(line) <= 80 for line in lines)
            frame = next(i for i, line in enumerate(lines) if "┌" in line)
            legend, inside = "\n".join(lines[:frame]), "\n".join(lines[frame:])
            names = [s.name.in_lang(lang) for s in _panel(lang).series]
            assert all(name in legend for name in names) and not any(name in inside for name in names)
            # the legend's first line ends at the right edge, its entries after a wide margin
            assert cell_len(lines[0].rstrip()) == 80 and lines[0].startswith(" " * 20) and "──" in lines[0]
            bottom = next(line for line in lines if "└" in line)
            x_ticks = lines[lines.index(bottom) + 1].split()
            if lang == "de":
                assert x_ticks == ["200", "400", "600", "800", "1.000"]
                assert any(line.startswith("7,0┤") for line in lines)
            else:
                assert x_ticks == ["200", "400", "600", "800", "1,000"]
                assert any(line.startswith("7.0┤") for line in lines)


def _train_compare_table(lang: str) -> str:
    """train-compare's table of six runs, as the panel of an 80-column terminal shows it (72 cells)."""
    p = TrainCompareParams(vary="heads", heads=[1, 4, 8], seeds=2)
    done = [
        {
            "label": run_label(h, "learned", "heads").model_dump(),
            "slug": f"h{h}",
            "seed": seed,
            "val_loss": 5.918 + h / 100,
            "params": 1_570_816,
            "seconds": 93.4,
            "curve": [[500, 6.1, 6.0], [1000, 5.9, 5.918 + h / 100]],
            "stored": False,
        }
        for h in (1, 4, 8)
        for seed in (1337, 1338)
    ]
    return plain(table(compare_runs(p, done).panels[0], lang), 72)


def test_the_german_results_table_keeps_every_number_whole():
    shown = _train_compare_table("de")
    assert "…" not in shown and all(cell_len(line) <= 72 for line in shown.splitlines())
    assert shown.count("1.570.816") == 6 and shown.count("5,928") >= 2 and shown.count("93,4") == 6
    assert "kleinst" in shown and "Schritt" in shown  # headings wrap, never cut


def test_chinese_table_cells_wrap_between_characters_never_cut():
    steps = ["x", "qkv", "split", "view", "transpose", "scores", "softmax", "weighted", "merge", "proj"]
    panel = TablePanel(
        title=Msg("exp.heads.shapes", n_embd=128, n_head=4, chars=6),
        columns=columns("exp.col.", "step", "what", "shape"),
        rows=[
            ["y.transpose(1, 2).contiguous().view(B, T, C)", Msg(f"exp.heads.step.{s}"), "(1, 6, 128)"]
            for s in steps
        ],
    )
    shown = plain(table(panel, "zh"), 60)
    assert "…" not in shown and all(cell_len(line) <= 60 for line in shown.splitlines())
    what = [line.split("│")[2].strip() for line in shown.splitlines() if line.count("│") == 4]
    text = "".join(what)
    for s in steps:  # every description whole, in order, its lines joined
        assert Msg(f"exp.heads.step.{s}").in_lang("zh").replace(" ", "") in text.replace(" ", "")
    assert not any(piece[:1] in "，。、：）" for piece in what if piece)  # no line starts with closing marks


class _Panel(App):
    def compose(self) -> ComposeResult:
        yield ExperimentPanel(ExperimentRef(name="heads"), "zh", None)


async def test_a_panels_chinese_summary_never_starts_a_line_with_closing_punctuation():
    app = _Panel()
    async with app.run_test(size=(100, 24)) as pilot:
        await pilot.pause()
        panel = app.query_one(ExperimentPanel)
        for widget in (panel.query_one(".exp-summary", Static), panel.query_one(".exp-status", Static)):
            for width in range(20, 101):  # the summary is 64 cells wide in a lesson at 100 columns
                lines = plain(Group(widget.content), width).splitlines()
                assert not any(line[:1] in "，。、；：）" for line in lines), (width, lines)
