"""Latency of the quick experiments and the one-off model load.

    python benchmarks/bench_experiments.py            # quick experiments
    python benchmarks/bench_experiments.py --train    # also: ms/step of train-compare's default run

Per quick experiment: one warm-up run (loads what it needs), then the median of N uncached runs
(goal ≤ 50 ms each on a 2-core CPU, model load excluded). Quick experiments run with one torch
thread, as the runner sets it. --train times the default train-compare configuration (4 layers,
n_embd 128, batch 16, context 64, its `threads`) for a few steps and projects a 1000-step run.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def bench_quick(repeats: int) -> None:
    fresh = "torch" not in sys.modules
    t0 = time.perf_counter()
    import torch

    import_s = time.perf_counter() - t0
    from tutor.experiments import cache
    from tutor.experiments.errors import ExperimentError
    from tutor.experiments.registry import get_registry
    from tutor.experiments.runner import run_quick

    run_quick("alibi")  # sets the one-thread mode
    loads = {}
    for name in (cache.LEARNED, cache.ROPE_SHORT):
        t = time.perf_counter()
        try:
            cache.checkpoint(name)
        except ExperimentError as err:
            print(f"skipping what needs {name}: {err}")
            continue
        loads[name] = time.perf_counter() - t
    print(
        f"torch {torch.__version__}, {torch.get_num_threads()} thread(s), load average {os.getloadavg()[0]:.2f}"
    )
    if fresh:
        print(f"import torch: {import_s * 1000:.0f} ms")
    for name, s in loads.items():
        print(f"load {name}: {s * 1000:.0f} ms")
    print()
    print(
        f"{'experiment':<18}{'first run ms':>14}{'median ms':>12}{'min ms':>10}{'max ms':>10}  goal ≤ 50 ms"
    )
    for name, spec in get_registry().items():
        if spec.long:
            continue
        t = time.perf_counter()
        try:
            run_quick(name, use_cache=False)
        except ExperimentError as err:
            print(f"{name:<18}  n/a: {str(err)[:60]}")
            continue
        first = time.perf_counter() - t
        times = []
        for _ in range(repeats):
            t = time.perf_counter()
            run_quick(name, use_cache=False)
            times.append(time.perf_counter() - t)
        med = statistics.median(times)
        mark = "ok" if med <= 0.05 else "over"
        print(
            f"{name:<18}{first * 1000:>14.1f}{med * 1000:>12.1f}{min(times) * 1000:>10.1f}"
            f"{max(times) * 1000:>10.1f}  {mark}"
        )


def bench_train(steps: int) -> None:

    from tutor.experiments.course.course_text import course_texts
    from tutor.experiments.course.training import run_config
    from tutor.experiments.params import TrainCompareParams
    from tutor.model.gpt import GPTConfig
    from tutor.model.tokenizer import CharTokenizer
    from tutor.model.train import TrainConfig, train

    p = TrainCompareParams()
    tr, va = course_texts()  # the Tang corpus, as train-compare reads it
    tokenizer = CharTokenizer.for_training(tr)
    print()
    print(f"train-compare default ({p.threads} thread(s), load average {os.getloadavg()[0]:.2f})")
    print(f"  model: batch {p.batch}, context {p.context}, {p.n_layer} layers, n_embd {p.n_embd}")
    for label, n_head, pos in [("1 head", 1, "learned"), ("4 heads", 4, "learned"), ("rope", 4, "rope")]:
        cfg = run_config(p, n_head, pos, "bench")
        tcfg = TrainConfig(**{**cfg["train"], "steps": steps, "eval_interval": steps, "threads": p.threads})
        t = time.perf_counter()
        r = train(GPTConfig(**cfg["model"]), tcfg, tr, va, tokenizer=tokenizer)
        total = time.perf_counter() - t
        per_step = r.seconds / steps
        print(
            f"  {label:<8} {per_step * 1000:6.1f} ms/step -> {per_step * p.steps / 60:4.1f} min per {p.steps} steps"
            f"  (run incl. setup {total:.1f} s)"
        )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=15)
    ap.add_argument("--train", action="store_true")
    ap.add_argument("--train-steps", type=int, default=40)
    args = ap.parse_args()
    bench_quick(args.repeats)
    if args.train:
        bench_train(args.train_steps)


if __name__ == "__main__":
    main()
