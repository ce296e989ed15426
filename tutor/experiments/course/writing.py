"""The shared GPT writes a poem, and the learner looks into any character it wrote.

`write` streams the poem as it is written ({"event": "writing", "text"} for each character, so a panel
or the terminal shows it growing; cancellable between characters). The result holds the poem with its
figures (characters, lines, lines of regular verse, the mean probability of the characters chosen), a
table of every written character beside the five likeliest it was chosen from, and, for the character
`inspect`, the attention of one head from the position that chose it over everything before it. The
same seed writes the same poem, so a learner reruns with another `inspect`, `layer` or `head` to look
at another character of the same poem.
"""

from __future__ import annotations

from typing import Any

from tutor.experiments import cache
from tutor.experiments.errors import ExperimentError
from tutor.experiments.params import WriteParams
from tutor.experiments.result import HeatmapPanel, Msg, Result, TablePanel, TextPanel, columns, result
from tutor.experiments.run_context import RunContext

TEXT = "exp.write."
COL = "exp.col."


def _shown(char: str) -> str:
    return {"\n": "↵", " ": "␠"}.get(char, char)


def run_write(p: WriteParams, ctx: RunContext) -> Result:
    from tutor.model.sample import figures, write

    ck = cache.checkpoint()
    cfg = ck.model.cfg
    if p.layer > cfg.n_layer or p.head > cfg.n_head:
        raise ExperimentError("err.experiment.no_head", layers=cfg.n_layer, heads=cfg.n_head)
    steps = []
    settings: dict[str, Any] = {
        "temperature": p.temperature,
        "top_k": p.top_k,
        "seed": p.seed,
        "attention": True,
    }
    for step in write(ck.model, ck.tokenizer, p.prompt, max_new=p.max_chars, **settings):
        steps.append(step)
        ctx.emit({"event": "writing", "text": p.prompt + "".join(s.char for s in steps)})
        ctx.check()
    if not steps:
        raise ExperimentError("err.experiment.nothing_written")
    text = p.prompt + "".join(s.char for s in steps)
    found = figures(text, [s.prob for s in steps])
    # by default the last character of verse it wrote (the rhyme, when the poem ends properly)
    verse = [i for i, s in enumerate(steps, 1) if s.char not in "，。？！；\n"]
    n = min(p.inspect, len(steps)) if p.inspect else (verse[-1] if verse else len(steps))
    chosen = steps[n - 1]
    assert chosen.attention is not None  # written with attention=True
    weights = chosen.attention[p.layer - 1, p.head - 1].tolist()
    # three significant digits, not places: a character drawn at 0.0004 is not shown as drawn at 0
    rows = [
        [i, _shown(s.char), float(f"{s.prob:.3g}"), "  ".join(f"{_shown(c)} {q:.2g}" for c, q in s.top)]
        for i, s in enumerate(steps, 1)
    ]
    panels = [
        TextPanel(
            title=Msg(f"{TEXT}poem"),
            text=Msg(
                f"{TEXT}written",
                text=text,
                characters=Msg(f"{TEXT}characters", n=found["characters"]),
                lines=Msg(f"{TEXT}lines", n=found["lines"]),
                regular_lines=found["regular_lines"],
                mean_prob=found["mean_prob"],
            ),
        ),
        HeatmapPanel(
            title=Msg(f"{TEXT}attention", n=n, char=_shown(chosen.char), layer=p.layer, head=p.head),
            row_labels=[_shown(chosen.char)],
            col_labels=[_shown(c) for c in chosen.context],
            values=[[round(w, 4) for w in weights]],
            vmin=0.0,
        ),
        TablePanel(
            title=Msg(f"{TEXT}choices"),
            columns=columns(COL, "index", "char", "prob", "top"),
            rows=rows,
        ),
    ]
    metrics = {name: found[name] for name in ("characters", "lines", "regular_lines", "mean_prob")}
    return result("write", p, metrics, panels)
