"""Checks for head-count: graded from the learner's stored train-compare runs and their answer file.

Each check gets a RunsContext: `runs` (finished training runs from the progress store) and `answer`
(the parsed head_count.toml). The three runs must be comparable: the same model and training settings
except n_head, n_embd 128, at least 1000 steps.
"""

import json
import math

from tutor.grading.kit import CheckFailed, fail

HEADS = (1, 4, 8)
N_EMBD = 128
MIN_STEPS = 1000
COMMAND = "python -m tutor experiment train-compare --set vary=heads --set steps=1000"


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


def comparison(runs: list[dict]) -> dict[int, dict] | None:
    """The latest complete set {1: run, 4: run, 8: run} of runs that differ only in n_head, or None."""
    groups: dict[str, dict[int, dict]] = {}
    for run in runs:
        if not _comparable(run):
            continue
        cfg = json.loads(json.dumps(run["config"]))
        n_head = cfg["model"].pop("n_head")
        group = groups.setdefault(json.dumps(cfg, sort_keys=True), {})
        if n_head not in group or run["at"] > group[n_head]["at"]:
            group[n_head] = run
    complete = [g for g in groups.values() if set(g) == set(HEADS)]
    if not complete:
        return None
    return max(complete, key=lambda g: max(r["at"] for r in g.values()))


def _need_runs(ctx) -> dict[int, dict]:
    found = comparison(ctx.runs)
    if found is None:
        raise CheckFailed("no complete set of runs to compare with yet (see the first check)")
    return found


def _losses(found: dict[int, dict]) -> dict[int, float]:
    return {h: float(found[h]["final_val_loss"]) for h in HEADS}


def _show(losses: dict[int, float]) -> str:
    return ", ".join(f"{h} head{'s' * (h != 1)}: {v:.4f}" for h, v in losses.items())


def reference_answer(runs: list[dict]) -> dict:
    """The answer these runs support (used by the authoring check and the tests)."""
    found = comparison(runs)
    losses = _losses(found)
    params = {found[h]["params"] for h in HEADS}
    return {
        "best_heads": min(losses, key=losses.get),
        "loss_gap": round(max(losses.values()) - min(losses.values()), 4),
        "same_params": len(params) == 1,
    }


def check_runs_done(ctx) -> str:
    found = comparison(ctx.runs)
    if found is None:
        have = sorted({r["config"]["model"]["n_head"] for r in ctx.runs if _comparable(r)})
        missing = [h for h in HEADS if h not in have]
        raise fail(
            f"finished runs with {', '.join(map(str, HEADS))} heads (n_embd {N_EMBD}, ≥ {MIN_STEPS} steps, "
            "same settings otherwise)",
            (f"runs with {', '.join(map(str, have))} heads only" if have else "no such runs")
            + f"; missing {', '.join(map(str, missing))}. Train them: {COMMAND}",
        )
    return _show(_losses(found))


def check_best_heads(ctx) -> str:
    losses = _losses(_need_runs(ctx))
    best = min(losses, key=losses.get)
    got = ctx.answer.get("best_heads")
    if got != best:
        raise fail(
            f"best_heads = {best}, the head count with the lowest final val loss in your runs",
            f"best_heads = {got!r}",
        )
    return f"{best} heads did best in your runs ({_show(losses)})"


def check_loss_gap(ctx) -> str:
    losses = _losses(_need_runs(ctx))
    gap = max(losses.values()) - min(losses.values())
    got = ctx.answer.get("loss_gap")
    if isinstance(got, bool) or not isinstance(got, int | float) or not math.isfinite(got):
        raise fail(f"loss_gap as a finite number (yours: {gap:.4f})", repr(got)[:60])
    if abs(got - gap) > max(0.005, 0.05 * gap):
        raise fail(f"loss_gap ≈ {gap:.4f} (worst minus best final val loss)", f"{got}")
    return f"the spread is {gap:.4f}"


def check_same_params(ctx) -> str:
    found = _need_runs(ctx)
    params = {h: found[h]["params"] for h in HEADS}
    same = len(set(params.values())) == 1
    got = ctx.answer.get("same_params")
    if got is not same:
        raise fail(
            f"same_params = {str(same).lower()} (your runs: "
            + ", ".join(f"{h} heads {p:,}" for h, p in params.items())
            + ")",
            repr(got),
        )
    return "the parameter count does not depend on the head count" if same else "the counts differ"


def sample_runs(
    losses: dict[int, float], params: int = 800_000, at: str = "2026-01-01T00:00:00+00:00"
) -> list[dict]:
    """Run records shaped exactly as train-compare stores them (for the authoring check and the tests)."""
    from tutor.experiments.params import TrainCompareParams
    from tutor.experiments.training import run_config, run_key

    runs = []
    for h, loss in losses.items():
        config = run_config(TrainCompareParams(), h, "learned", "sample-corpus")
        runs.append(
            {"key": run_key(config), "config": config, "final_val_loss": loss, "params": params, "at": at}
        )
    return runs
