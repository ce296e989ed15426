"""How well the shipped model writes: metre, where its poems end, and rhyme, beside real poems and a
bigram sampler, measured side by side in one run.

    pip install pypinyin        # the rhyme proxy (MIT); not needed by the tutor itself
    python benchmarks/bench_samples.py [--poems 100] [--temperature 1.0] [--top-k 0]

Three writers, N poems each:
- the shipped model (tutor/model/sample.py write, the generate command's defaults), from the start of a poem;
- the same model started mid-text: the prompt is a real validation poem and the blank line after it, so
  its poem begins wherever that one ended;
- an interpolated bigram sampler (counts from the training split, the baseline of tutor/model/baselines.py),
  at the same temperature and top-k;
and every real validation poem, also with its later couplet ends taken from another poem (rhyme by chance).

Figures per writer:
- metre: the share of lines that are regular verse (tutor.model.sample.regular: a couplet of two clauses of 5 or
  7 characters closed by ，。？！；, as 99.7% of the corpus's lines are);
- one couplet: the share of poems that end after their first line (the corpus: ≈ 0.02);
- rhyme: over poems of two or more couplets, the share of later couplet ends that rhyme with the first
  couplet's end, by Mandarin finals from pypinyin with the medial i/u/ü dropped and the finals that rhyme
  in Mandarin verse grouped (in≈en≈un, ing≈eng≈ong, o≈e, ü≈i, …: `_GROUPS`). A proxy: Tang rhyme follows
  the 平水韵 rhyme books of Middle Chinese, not modern Mandarin; by it the whole validation split scores
  0.789.
"""

from __future__ import annotations

import argparse
import os
import random
import re
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tutor.model.sample import regular  # noqa: E402 - after the path is set


def lines_of(poem: str) -> list[str]:
    return [line.strip() for line in poem.strip().split("\n") if line.strip()]


_MEDIAL = re.compile(r"^[iuv](?=[aeo])")
# finals that rhyme in Mandarin verse, roughly as the 十三辙 rhyme classes group them
_GROUPS = {
    "in": "en",
    "ing": "eng",
    "ong": "eng",
    "un": "en",
    "vn": "en",
    "ui": "ei",
    "iu": "ou",
    "ie": "e",
    "ve": "e",
    "v": "i",
    "uo": "o",
    "o": "e",
}


def final_of(char: str) -> str | None:
    from pypinyin import Style, pinyin

    got = pinyin(char, style=Style.FINALS, strict=False, errors="ignore")
    if not got or not got[0] or not got[0][0]:
        return None
    final = _MEDIAL.sub("", got[0][0])
    return _GROUPS.get(final, final)


def couplet_ends(poem: str) -> list[str]:
    """The last character before the closing mark of each regular line: where a couplet rhymes."""
    return [line.rstrip("，。？！；")[-1:] for line in lines_of(poem) if regular(line)]


def rhyme_pairs(poem: str) -> tuple[int, int]:
    """(later couplet ends that rhyme with the first, later couplet ends) of one poem."""
    ends = couplet_ends(poem)
    if len(ends) < 2 or not ends[0]:
        return 0, 0
    first = final_of(ends[0])
    later = [final_of(e) for e in ends[1:]]
    return sum(1 for f in later if f is not None and f == first), len(later)


def chance_rhyme(poems: list[str], seed: int = 0) -> float:
    """The rhyme figure when each poem's first couplet end meets the later couplet ends of another poem."""
    ends = [e for e in map(couplet_ends, poems) if len(e) >= 2 and e[0]]
    others = ends[1:] + ends[:1]
    random.Random(seed).shuffle(others)
    hits = total = 0
    for mine, other in zip(ends, others, strict=True):
        first = final_of(mine[0])
        later = [final_of(e) for e in other[1:]]
        hits += sum(1 for f in later if f is not None and f == first)
        total += len(later)
    return hits / max(total, 1)


def figures(poems: list[str]) -> dict[str, float]:
    all_lines = [line for p in poems for line in lines_of(p)]
    rhymed = [rhyme_pairs(p) for p in poems]
    pairs = sum(n for _, n in rhymed)
    return {
        "poems": len(poems),
        "metre": sum(regular(line) for line in all_lines) / max(len(all_lines), 1),
        "one_couplet": sum(len(lines_of(p)) <= 1 for p in poems) / max(len(poems), 1),
        "rhyme": sum(r for r, _ in rhymed) / max(pairs, 1),
        "rhyme_pairs": pairs,
        "mean_lines": sum(len(lines_of(p)) for p in poems) / max(len(poems), 1),
    }


def model_poems(ck, prompts: list[str], temperature: float, top_k: int) -> list[str]:
    from tutor.model.sample import write

    poems = []
    for seed, prompt in enumerate(prompts):
        steps = write(
            ck.model, ck.tokenizer, prompt, max_new=300, temperature=temperature, top_k=top_k, seed=seed
        )
        poems.append("".join(s.char for s in steps))
    return poems


def bigram_poems(train_text: str, n: int, temperature: float, top_k: int, seed: int = 0) -> list[str]:
    """Poems from an interpolated bigram of the training text (λ 0.77, the baseline's), started after a
    blank line and ended at the next one (or at 300 characters)."""
    import torch

    from tutor.model.tokenizer import CharTokenizer

    tok = CharTokenizer.for_training(train_text)
    ids = torch.tensor(tok.encode(train_text, unknown="unk"))
    V = tok.vocab_size
    uni = (torch.bincount(ids, minlength=V).double() + 1) / (len(ids) + V)
    pair = torch.zeros(V, V, dtype=torch.float64)
    pair.index_put_((ids[:-1], ids[1:]), torch.ones(len(ids) - 1, dtype=torch.float64), accumulate=True)
    cond = pair / pair.sum(1, keepdim=True).clamp(min=1)
    lam, gen, nl = 0.77, torch.Generator().manual_seed(seed), tok.stoi["\n"]
    poems = []
    for _ in range(n):
        prev, out = nl, []
        for _ in range(300):
            p = (lam * cond[prev] + (1 - lam) * uni if pair[prev].sum() else uni).log() / temperature
            if top_k:  # 0: no cut
                p = p.masked_fill(p < torch.topk(p, top_k).values[-1], float("-inf"))
            p = p.softmax(-1)
            nxt = int(torch.multinomial(p, 1, generator=gen))
            if nxt == nl and out and out[-1] == "\n":
                break
            out.append(tok.decode([nxt]))
            prev = nxt
        poems.append("".join(out))
    return poems


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--poems", type=int, default=100)
    parser.add_argument("--temperature", type=float, default=1.0)
    parser.add_argument("--top-k", type=int, default=0, help="0: no cut (the generate command's default)")
    args = parser.parse_args()

    from tutor.model.checkpoint import load_checkpoint
    from tutor.model.corpus import tang_texts
    from tutor.settings import default_checkpoint

    ck = load_checkpoint(default_checkpoint())
    train_text, val_text = tang_texts()
    real = [p for p in val_text.split("\n\n") if p.strip()]
    picked = random.Random(0).sample(real, args.poems)
    print(
        f"{args.poems} poems per writer, temperature {args.temperature}, top-k {args.top_k}; "
        f"load average {os.getloadavg()[0]:.2f}"
    )
    t0 = time.perf_counter()
    rows = {
        "real validation poems": figures(real),
        "model, poem start": figures(model_poems(ck, [""] * args.poems, args.temperature, args.top_k)),
        "model, mid-text": figures(
            model_poems(ck, [p + "\n\n" for p in picked], args.temperature, args.top_k)
        ),
        "bigram sampler": figures(bigram_poems(train_text, args.poems, args.temperature, args.top_k)),
    }
    print(
        f"{'writer':<24} {'poems':>6} {'metre':>7} {'1 couplet':>10} {'rhyme':>7} {'pairs':>6} {'lines':>6}"
    )
    for name, f in rows.items():
        print(
            f"{name:<24} {f['poems']:>6} {f['metre']:>7.3f} {f['one_couplet']:>10.3f} {f['rhyme']:>7.3f} "
            f"{f['rhyme_pairs']:>6} {f['mean_lines']:>6.2f}"
        )
    print(
        f"rhyme by chance (each first couplet end against another poem's later ends): {chance_rhyme(real):.3f}"
    )
    print(f"({time.perf_counter() - t0:.0f} s; the real poems are the whole validation split)")


if __name__ == "__main__":
    main()
