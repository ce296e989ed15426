"""Checks for head-count: graded from the learner's stored train-compare runs and their answer file.

Each check gets a RunsContext: `runs` (finished training runs from the progress store) and `answer`
(the parsed head_count.toml). The runs must be comparable: the same model and training settings except
n_head and the seed, n_embd 128, at least 1000 steps, and at least two seeds for each of 1, 4 and 8 heads.

What the lesson teaches, and so what is graded: the head count does not change the parameter count, and a
difference between head counts means something only when it is larger than the difference another seed
makes. Every figure is computed the way the train-compare experiment shows it: the mean final validation
loss of each head count over its seeds, the gap between the best and the worst mean, and the seed spread
(the largest difference between two seeds of the same head count).

A failed check names the learner's value and what it is not, never the figure these runs give for that
key (copying it from the grade would skip the tables the exercise is about), and a passed check names no
figure another key asks for. Each check judges its own key only: runs_done passes once the six runs are
stored, whatever the answer says, and best_heads, same_params and beyond_noise do not wait for loss_gap.
"""

import json

from tutor.grading.kit import CheckFailed, fail, msg
from tutor.grading.runs import answer_value

HEADS = (1, 4, 8)
N_EMBD = 128
MIN_STEPS = 1000
MIN_SEEDS = 2
COMMAND = "python -m tutor experiment train-compare --set vary=heads --set steps=1000 --set seeds=2"
# what each key of head_count.toml must hold (any other TOML value fails its check, saying so)
ANSWER = {
    "best_heads": HEADS,
    "loss_gap": "number",
    "seed_spread": "number",
    "beyond_noise": "boolean",
    "same_params": "boolean",
}


def _comparable(run: dict) -> bool:
    cfg = run.get("config") or {}
    model, train = cfg.get("model") or {}, cfg.get("train") or {}
    return (
        run["key"].startswith("train-compare:")
        and model.get("n_embd") == N_EMBD
        and model.get("n_head") in HEADS
        and (train.get("steps") or 0) >= MIN_STEPS
        and run.get("final_val_loss") is not None
    )


def _groups(runs: list[dict]) -> list[dict[int, dict[int, dict]]]:
    """Comparable runs grouped by everything but the head count and the seed: {n_head: {seed: latest run}}."""
    groups: dict[str, dict[int, dict[int, dict]]] = {}
    for run in runs:
        if not _comparable(run):
            continue
        cfg = json.loads(json.dumps(run["config"]))
        n_head, seed = cfg["model"].pop("n_head"), cfg["train"].pop("seed")
        seeds = groups.setdefault(json.dumps(cfg, sort_keys=True), {}).setdefault(n_head, {})
        if seed not in seeds or run["at"] > seeds[seed]["at"]:
            seeds[seed] = run
    return list(groups.values())


def comparison(runs: list[dict]) -> dict[int, dict[int, dict]] | None:
    """The latest complete set {1: {seed: run}, 4: ..., 8: ...}: runs that differ only in n_head and seed, with
    the same two or more seeds for every head count. None when there is no such set."""
    complete = []
    for group in _groups(runs):
        if set(group) != set(HEADS):
            continue
        common = set.intersection(*(set(group[h]) for h in HEADS))
        if len(common) >= MIN_SEEDS:
            complete.append({h: {s: group[h][s] for s in sorted(common)} for h in HEADS})
    if not complete:
        return None
    return max(complete, key=lambda g: max(r["at"] for seeds in g.values() for r in seeds.values()))


def figures(found: dict[int, dict[int, dict]]) -> dict:
    """Mean final val loss per head count, the gap between the means, the seed spread, and the params."""
    losses = {h: [float(r["final_val_loss"]) for r in found[h].values()] for h in HEADS}
    means = {h: sum(v) / len(v) for h, v in losses.items()}
    spreads = {h: max(v) - min(v) for h, v in losses.items()}
    return {
        "means": means,
        "best": min(means, key=means.get),
        "gap": max(means.values()) - min(means.values()),
        "spread": max(spreads.values()),
        "seeds": sorted(next(iter(found.values()))),
        "params": {h: {r["params"] for r in found[h].values()} for h in HEADS},
    }


def _answer(ctx, key: str):
    """The learner's value for `key`, of the kind ANSWER says; read before the runs are looked at, so a
    value of the wrong kind is named even while runs are missing."""
    return answer_value(ctx.answer, key, ANSWER[key])


def _need(ctx) -> dict:
    found = comparison(ctx.runs)
    if found is None:
        raise CheckFailed(msg("no_set"))
    return figures(found)


def _near(got: float, want: float) -> bool:
    """A figure read off the experiment's tables: within 0.005, or 5 %."""
    return abs(got - want) <= max(0.005, 0.05 * want)


def _number(got: float, key: str, want: float, other: tuple[str, float]) -> str:
    """`got`, the learner's `key`, against `want`, the figure of the runs; a failure names `got` and what
    it is not, never `want`: below 0, the other figure (`other`: its key and value), or not read off."""
    if not _near(got, want):
        said = {"key": key, "got": f"{got:g}", "what": msg(f"{key}_what")}
        if got < 0:
            raise CheckFailed(msg("negative", **said))
        if _near(got, other[1]):
            raise CheckFailed(msg("swapped", other=other[0], **said))
        raise CheckFailed(msg("not_read", **said))
    return f"{want:.4f}"


def reference_answer(runs: list[dict]) -> dict:
    """The answer these runs support (used by the authoring check and the tests)."""
    f = figures(comparison(runs))
    return {
        "best_heads": f["best"],
        "loss_gap": round(f["gap"], 4),
        "seed_spread": round(f["spread"], 4),
        "beyond_noise": f["gap"] > f["spread"],
        "same_params": len(set.union(*f["params"].values())) == 1,
    }


def check_runs_done(ctx) -> str:
    found = comparison(ctx.runs)
    if found is None:
        have = {}
        for group in _groups(ctx.runs):
            for h, seeds in group.items():
                have[h] = max(have.get(h, 0), len(seeds))
        short = [
            msg("one_head_seeds" if h == 1 else "heads_seeds", h=h, n=have.get(h, 0))
            for h in HEADS
            if have.get(h, 0) < MIN_SEEDS
        ]
        raise fail(
            msg(
                "runs_needed",
                heads=", ".join(map(str, HEADS)),
                seeds=MIN_SEEDS,
                n_embd=N_EMBD,
                steps=MIN_STEPS,
            ),
            msg("train_them", short=msg("item_sep").join(short), command=COMMAND),
        )
    return msg("runs_ok", seeds=", ".join(map(str, figures(found)["seeds"])))


def check_best_heads(ctx) -> str:
    got = _answer(ctx, "best_heads")
    f = _need(ctx)
    if got != f["best"]:
        raise CheckFailed(msg("best_not", got=got))
    return msg("best_ok_one" if f["best"] == 1 else "best_ok", best=f["best"])


def check_loss_gap(ctx) -> str:
    got = _answer(ctx, "loss_gap")
    f = _need(ctx)
    return msg("gap_ok", gap=_number(got, "loss_gap", f["gap"], ("seed_spread", f["spread"])))


def check_seed_spread(ctx) -> str:
    got = _answer(ctx, "seed_spread")
    f = _need(ctx)
    return msg("spread_ok", spread=_number(got, "seed_spread", f["spread"], ("loss_gap", f["gap"])))


def check_beyond_noise(ctx) -> str:
    got = _answer(ctx, "beyond_noise")
    f = _need(ctx)
    real = f["gap"] > f["spread"]
    if got is not real:
        raise CheckFailed(msg("noise_not", got=str(got).lower()))
    return msg("noise_real" if real else "noise_within")


def check_same_params(ctx) -> str:
    got = _answer(ctx, "same_params")
    f = _need(ctx)
    same = len(set.union(*f["params"].values())) == 1
    if got is not same:
        raise CheckFailed(msg("same_not", got=str(got).lower()))
    return msg("same_ok" if same else "counts_differ")


def sample_runs(
    losses: dict[int, float],
    params: int = 800_000,
    at: str = "2026-01-01T00:00:00+00:00",
    spread: float = 0.01,
) -> list[dict]:
    """Run records shaped exactly as train-compare stores them (for the authoring check and the tests): two seeds
    per head count, the second `spread` worse than the first."""
    from tutor.experiments.course.training import run_config, run_key
    from tutor.experiments.params import TrainCompareParams

    p = TrainCompareParams()
    runs = []
    for h, loss in losses.items():
        for k in range(MIN_SEEDS):
            config = run_config(p, h, "learned", "sample-corpus", seed=p.seed + k)
            runs.append(
                {
                    "key": run_key(config),
                    "config": config,
                    "final_val_loss": loss + k * spread,
                    "params": params,
                    "at": at,
                }
            )
    return runs
