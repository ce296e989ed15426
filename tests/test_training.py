"""Tokenizer, checkpoints, the training loop and the train CLI — on real tensors and processes."""

import json
import math
import re
import signal
import subprocess
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
import torch
from conftest import PYTHON, ROOT, run_tutor_env, tutor_here

from tutor.model.baselines import ngram_baselines
from tutor.model.checkpoint import keep_in_meta, load_checkpoint, save_checkpoint, strip_training_state
from tutor.model.corpus import corpus_text, load_tang, save_poems, split_poems
from tutor.model.gpt import GPT, GPTConfig
from tutor.model.tokenizer import UNK, CharTokenizer, UnknownCharacterError
from tutor.model.train import TrainConfig, evaluate, line_starts, lr_at, make_batches, poem_starts, train
from tutor.settings import default_checkpoint

TINY = GPTConfig(vocab_size=1, n_embd=32, n_head=4, n_layer=1, block_size=32)
SAMPLE_POEMS = 418  # a slice of the Tang corpus keeps the tiny training runs and the CLI runs quick
# the CLI's training runs are tiny: one torch thread (on a busy 2-core machine two wait on each other)
ONE_THREAD = ["--threads", "1"]


@pytest.fixture(scope="module")
def tang():
    return load_tang()


@pytest.fixture(scope="module")
def texts(tang):
    train_poems, val_poems = split_poems(tang[:SAMPLE_POEMS])
    return corpus_text(train_poems), corpus_text(val_poems)


@pytest.fixture(scope="module")
def small_corpus(tang, tmp_path_factory) -> str:
    """The first poems of the Tang corpus as a corpus file of our format, for `train --corpus`."""
    path = tmp_path_factory.mktemp("corpus") / "tang-sample.json"
    save_poems(tang[:SAMPLE_POEMS], path)
    return str(path)


def test_tokenizer_round_trip_and_unknown_characters():
    tok = CharTokenizer.from_text("白日依山尽，黄河入海流。")
    assert tok.decode(tok.encode("黄河入海流")) == "黄河入海流"
    assert tok.chars[0] == UNK and tok.vocab_size == 13
    with pytest.raises(UnknownCharacterError, match="'月' at 1"):
        tok.encode("白月")
    assert tok.encode("白月", unknown="unk")[1] == 0
    assert CharTokenizer.from_dict(tok.to_dict()).chars == tok.chars


def test_shipped_checkpoints_use_the_vocabulary_policy_on_the_tang_training_split(tang):
    policy = CharTokenizer.for_training(corpus_text(split_poems(tang)[0]))
    assert policy.vocab_size == 6010
    for name in ("gpt-learned.pt", "gpt-rope-short.pt"):
        ck = load_checkpoint(ROOT / "tutor" / "model" / "checkpoints" / name)
        assert ck.tokenizer.chars == policy.chars, name
        assert ck.meta["corpus"] == "tang" and ck.meta["vocab_min_count"] == 3
        assert ck.optimizer_state is None and "rng" not in ck.meta  # shipped as weights only


def test_baselines_match_a_hand_computation():
    # train ids a b a b a (a=1, b=2, V=3 with the unknown id 0); score a->b and b->0
    got = ngram_baselines(torch.tensor([1, 2, 1, 2, 1]), torch.tensor([1, 2]), torch.tensor([2, 0]), 3)
    # add-one unigram: P(0)=1/8, P(1)=4/8, P(2)=3/8
    assert got.unigram == pytest.approx(-(math.log(3 / 8) + math.log(1 / 8)) / 2)
    # bigram: P(b|a)=1, P(0|b)=0; the loss -(log(3/8 + 5λ/8) + log((1-λ)/8))/2 is lowest at λ = 0.2
    assert got.bigram_lambda == pytest.approx(0.2, abs=1e-3)
    assert got.bigram == pytest.approx(-(math.log(0.5) + math.log(0.1)) / 2, abs=1e-6)
    assert got.uniform == pytest.approx(math.log(3))
    # a previous character never seen in training: the unigram alone, whatever λ
    unseen = ngram_baselines(torch.tensor([1, 2, 1]), torch.tensor([0]), torch.tensor([1]), 3)
    assert unseen.bigram == pytest.approx(unseen.unigram)


def test_early_stopping_keeps_the_best_checkpoint(tmp_path, texts):
    cfg = TrainConfig(steps=200, batch_size=8, context=32, eval_interval=5, eval_batches=2, warmup=5, lr=3e-2)
    result = train(TINY, cfg, *texts, out=tmp_path / "es.pt", patience=2)  # this lr overshoots: val turns up
    assert result.stopped_early and result.steps_done < 200
    best = min(result.curve, key=lambda point: point["val_loss"])
    assert (result.best_step, result.best_val_loss) == (best["step"], best["val_loss"])
    assert result.steps_done == result.curve[-1]["step"] == best["step"] + 2 * cfg.eval_interval
    meta = load_checkpoint(tmp_path / "es.pt").meta
    assert (meta["step"], meta["val_loss"]) == (best["step"], best["val_loss"])
    assert meta["baselines"] == result.baselines.to_dict()
    with pytest.raises(ValueError, match="patience must be at least 1"):
        train(TINY, cfg, *texts, patience=0)


def test_checkpoint_round_trip(tmp_path):
    tok = CharTokenizer.from_text("白日依山尽")
    torch.manual_seed(0)
    model = GPT(GPTConfig(vocab_size=tok.vocab_size, n_embd=32, n_head=4, n_layer=1, pos="rope"))
    save_checkpoint(tmp_path / "m.pt", model, tok, {"note": "x"})
    loaded = load_checkpoint(tmp_path / "m.pt")
    x = torch.tensor([tok.encode("白日依山")])
    assert torch.equal(model.eval()(x)[0], loaded.model(x)[0])
    assert loaded.meta["note"] == "x" and loaded.model.cfg == model.cfg
    assert not list(tmp_path.glob("*.tmp"))


def test_a_shipped_checkpoint_stores_the_tied_matrix_once_and_in_float16(tmp_path):
    tok = CharTokenizer([chr(0x4E00 + i) for i in range(3000)])
    torch.manual_seed(0)
    model = GPT(GPTConfig(vocab_size=tok.vocab_size, n_embd=32, n_head=4, n_layer=1)).eval()
    table = tok.vocab_size * 32 * 4  # bytes of the embedding, which the output layer shares
    save_checkpoint(tmp_path / "m.pt", model, tok)
    full = (tmp_path / "m.pt").stat().st_size
    assert full < 1.5 * table  # once, not twice
    strip_training_state(tmp_path / "m.pt")
    assert (tmp_path / "m.pt").stat().st_size < 0.6 * full
    loaded = load_checkpoint(tmp_path / "m.pt").model
    assert loaded.head.weight is loaded.tok_emb.weight and loaded.tok_emb.weight.dtype == torch.float32
    x = torch.randint(tok.vocab_size, (2, 16))
    assert (loaded(x)[0] - model(x)[0]).abs().max() < 1e-3
    stripped = (tmp_path / "m.pt").stat().st_size
    keep_in_meta(tmp_path / "m.pt", load_checkpoint(tmp_path / "m.pt"), "figures", {"a": 1.5})
    again = load_checkpoint(tmp_path / "m.pt")  # measured figures added, the weights as they were
    assert again.meta["figures"] == {"a": 1.5} and (tmp_path / "m.pt").stat().st_size < stripped + 1000
    assert all(torch.equal(a, b) for a, b in zip(again.model.parameters(), loaded.parameters(), strict=True))


def test_loading_a_foreign_file_says_so(tmp_path):
    bad = tmp_path / "bad.pt"
    bad.write_text("not a checkpoint")
    with pytest.raises(ValueError, match="not a readable checkpoint"):
        load_checkpoint(bad)


def test_lr_schedule_warms_up_then_decays_to_min():
    cfg = TrainConfig(steps=100, warmup=10, lr=1.0, min_lr=0.1)
    assert lr_at(0, cfg) == pytest.approx(0.1)
    assert lr_at(9, cfg) == pytest.approx(1.0)
    assert lr_at(100, cfg) == pytest.approx(0.1)
    assert lr_at(50, cfg) < lr_at(20, cfg)


def test_thirty_steps_lower_the_loss_and_resume_continues(tmp_path, texts):
    out = tmp_path / "run.pt"
    cfg = TrainConfig(steps=30, batch_size=8, context=32, eval_interval=10, eval_batches=2, warmup=5, lr=3e-3)
    seen = []
    result = train(TINY, cfg, *texts, out=out, on_progress=seen.append)
    assert [p.step for p in seen] == list(range(1, 31))
    assert result.curve[-1]["val_loss"] < result.curve[0]["val_loss"]
    assert seen[-1].loss < seen[0].loss
    assert load_checkpoint(out).meta["step"] == 30
    longer = TrainConfig(**{**cfg.__dict__, "steps": 40})
    resumed = train(TINY, longer, *texts, out=out, resume=True)
    assert resumed.steps_done == 40 and len(resumed.curve) == 4
    other = GPTConfig(**{**TINY.to_dict(), "n_head": 2})
    with pytest.raises(ValueError, match="n_head=4 \\(asked 2\\)"):
        train(other, longer, *texts, out=out, resume=True)


def test_should_stop_cancels_between_steps(tmp_path, texts):
    calls = []
    cfg = TrainConfig(steps=50, batch_size=4, context=16, eval_interval=100, eval_batches=1, warmup=1)
    result = train(
        TINY, cfg, *texts, out=tmp_path / "c.pt", should_stop=lambda: len(calls) >= 5 or calls.append(1)
    )
    assert result.cancelled and result.steps_done == 5
    assert not (tmp_path / "c.pt").exists()  # nothing was saved yet: no half-written file either
    assert not list(tmp_path.iterdir())


@pytest.mark.parametrize("pos", ["learned", "none", "rope", "alibi"])
def test_the_steps_own_forward_and_loss_give_the_models_loss_and_gradients(pos):
    """tutor.model.step computes the training loss without the model's forward (its own attention and output
    layer): in float32 the same loss and gradients as GPT.forward's, in bf16 the same loss to 1%; so does
    its validation loss."""
    from tutor.model.step import eval_loss, features, head_loss, step_loss

    torch.manual_seed(0)
    model = GPT(GPTConfig(vocab_size=300, n_embd=32, n_head=4, n_layer=2, block_size=16, pos=pos))
    x, y = torch.randint(300, (2, 3, 16))
    want = model(x, y)[1]
    want.backward()
    grads = [p.grad.clone() for p in model.parameters()]
    model.zero_grad()
    h = features(model, x, explicit=True)
    got = head_loss(h.reshape(-1, 32), model.head.weight, y.reshape(-1), chunk=20)
    got.backward()
    assert got.item() == pytest.approx(want.item(), rel=1e-5)
    for p, g in zip(model.parameters(), grads, strict=True):
        assert torch.allclose(p.grad, g, rtol=1e-4, atol=1e-6)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        assert step_loss(model, x, y, bf16=True).item() == pytest.approx(want.item(), rel=1e-2)
    assert eval_loss(model, x, y, bf16=True).item() == pytest.approx(want.item(), rel=1e-2)
    assert eval_loss(model, x, y).item() == pytest.approx(want.item(), rel=1e-6)


def test_training_is_reproducible_with_a_seed(texts):
    cfg = TrainConfig(
        steps=5, batch_size=4, context=16, eval_interval=5, eval_batches=1, warmup=1, precision="fp32"
    )
    a, b = (train(TINY, cfg, *texts).curve for _ in range(2))
    assert a == b


def test_windows_start_at_line_starts():
    text = "白日依山尽，\n黄河入海流。\n\n欲穷千里目，\n"
    starts = line_starts(text)
    assert [text[i] for i in starts] == ["白", "黄", "欲"]
    tok = CharTokenizer.from_text(text)
    cfg = TrainConfig(batch_size=8, windows="line")
    x, _ = make_batches(tok, text * 3, text * 3, cfg, context=4).train_batch()
    assert {tok.decode(row)[0] for row in x} <= {"白", "黄", "欲"}


def test_windows_start_before_a_poem_by_default():
    """Position 0 of a window is the newline that opens a poem, position 1 its first character: every
    window reads one poem whole, from its start."""
    text = "白日依山尽，黄河入海流。\n欲穷千里目，更上一层楼。\n\n床前明月光，疑是地上霜。\n\n春眠不觉晓，处处闻啼鸟。"
    starts = poem_starts(text)
    assert [text[i : i + 2] for i in starts] == ["\n床", "\n春"]
    tok = CharTokenizer.from_text(text)
    assert TrainConfig().windows == "poem"
    x, _ = make_batches(tok, text * 3, text * 3, TrainConfig(batch_size=8), context=6).train_batch()
    assert {tok.decode(row)[:2] for row in x} <= {"\n床", "\n春", "\n白"}


def _readme_row(name: str) -> list[str]:
    readme = (ROOT / "docs" / "model.md").read_text(encoding="utf-8")
    row = next(line for line in readme.splitlines() if line.startswith(f"| `tutor/model/checkpoints/{name}`"))
    return [cell.strip() for cell in row.strip("|").split("|")]


def test_shipped_learned_model_beats_the_bigram_by_0_3_nats_on_its_validation_windows(tang):
    """What the shipped model is for, from the shipped files alone: the checkpoint, the corpus and
    the trainer's split."""
    ck = load_checkpoint(default_checkpoint())
    assert ck.model.cfg.n_embd == 128 and ck.model.cfg.n_head == 4 and ck.model.cfg.pos == "learned"
    train_text, val_text = (corpus_text(p) for p in split_poems(tang))
    cfg = TrainConfig(**ck.meta["train"])
    batches = make_batches(ck.tokenizer, train_text, val_text, cfg, ck.model.cfg.block_size)
    val_set = batches.val_batches(cfg.eval_batches)
    val = evaluate(ck.model, val_set)
    assert val == pytest.approx(ck.meta["val_loss"], abs=1e-3)
    x, y = torch.cat([x for x, _ in val_set]), torch.cat([y for _, y in val_set])
    base = ngram_baselines(batches.train_ids, x, y, ck.tokenizer.vocab_size)
    assert base.to_dict() == pytest.approx(ck.meta["baselines"], abs=1e-6)
    assert val <= base.bigram - 0.3, (val, base.bigram)
    # docs/model.md's table states the same figures
    _, _, stated_val, stated_bigram, *_ = _readme_row("gpt-learned.pt")
    assert float(stated_val) == pytest.approx(val, abs=5e-4)
    assert float(stated_bigram) == pytest.approx(base.bigram, abs=5e-4)


def test_shipped_rope_model_beats_the_bigram_on_its_validation_windows(tang):
    ck = load_checkpoint(ROOT / "tutor" / "model" / "checkpoints" / "gpt-rope-short.pt")
    assert ck.model.cfg.pos == "rope" and ck.model.cfg.block_size == 32
    assert ck.meta["val_loss"] < ck.meta["baselines"]["bigram"]
    _, _, stated_val, stated_bigram, *_ = _readme_row("gpt-rope-short.pt")
    assert float(stated_val) == pytest.approx(ck.meta["val_loss"], abs=5e-4)
    assert float(stated_bigram) == pytest.approx(ck.meta["baselines"]["bigram"], abs=5e-4)


@pytest.mark.slow
def test_shipped_learned_model_beats_the_bigram_by_0_3_nats_on_the_whole_validation_split(tang):
    from tutor.model.score import split_scores, trained_windows

    ck = load_checkpoint(default_checkpoint())
    train_text, val_text = (corpus_text(p) for p in split_poems(tang))
    scores = split_scores(ck.model, ck.tokenizer, train_text, val_text, windows=trained_windows(ck.meta))
    assert scores["targets"] == len(val_text) - 1  # every character after the first, once
    assert scores["model"] <= scores["bigram"] - 0.3, scores
    readme = (ROOT / "docs" / "model.md").read_text(encoding="utf-8")
    assert f"model {scores['model']:.4f}  |  bigram {scores['bigram']:.4f}" in readme


def test_shipped_checkpoint_writes_regular_verse():
    """Written as `generate` writes (tutor.model.sample.write at its defaults), from 白日 and from a poem start:
    nine lines in ten or more are regular verse (eight seeded poems here; bench_samples measures the
    same on 100)."""
    from tutor.model.sample import regular, write

    ck = load_checkpoint(default_checkpoint())
    lines = []
    for seed in range(4):
        for prompt in ("白日", ""):
            poem = prompt + "".join(step.char for step in write(ck.model, ck.tokenizer, prompt, seed=seed))
            lines += [line for line in poem.split("\n") if line.strip()]
    assert sum(regular(line) for line in lines) >= 0.9 * len(lines), lines


def test_readme_samples_are_what_the_shipped_model_writes():
    """docs/model.md's samples are `python -m tutor generate --prompt 白日 --seed S` at its defaults, whole poems."""
    from tutor.model.sample import write

    ck = load_checkpoint(default_checkpoint())
    readme = (ROOT / "docs" / "model.md").read_text(encoding="utf-8")
    for seed in range(3):
        poem = "白日" + "".join(step.char for step in write(ck.model, ck.tokenizer, "白日", seed=seed))
        assert poem.strip() in readme, (seed, poem)


@pytest.mark.slow  # 6-9 s: in the slow run, which CI runs too
def test_train_cli_streams_json_lines_and_stops_on_sigterm(tmp_path, small_corpus):
    out = tmp_path / "cli.pt"
    cmd = [PYTHON, "-m", "tutor", "train", "--embd", "32", "--layers", "1", "--block", "32", "--batch", "4"]
    cmd += ["--steps", "100000", "--eval-interval", "5", "--out", str(out), "--jsonl"]
    cmd += ["--corpus", small_corpus, *ONE_THREAD]
    proc = subprocess.Popen(
        cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=run_tutor_env(tmp_path)
    )
    events = []
    deadline = time.time() + 60
    for line in proc.stdout:
        events.append(json.loads(line))
        if events[-1]["event"] == "progress" and events[-1]["step"] >= 12:
            proc.send_signal(signal.SIGTERM)
            break
        assert time.time() < deadline
    rest, err = proc.communicate(timeout=30)
    events += [json.loads(line) for line in rest.splitlines()]
    assert proc.returncode == 1, err
    assert events[0]["event"] == "start" and events[-1]["event"] == "cancelled"
    assert load_checkpoint(out).meta["step"] % 5 == 0
    assert "Traceback" not in err


def test_train_cli_rejects_bad_settings_with_exit_2(tmp_path):
    # in this process: the real `train` processes above and below end with their exit codes
    proc = tutor_here("train", "--embd", "30", "--heads", "4", "--steps", "1", home=tmp_path)
    assert proc.returncode == 2
    assert "divisible" in proc.stderr and "Traceback" not in proc.stderr


@pytest.mark.parametrize(
    "extra, needle",
    [(["--out", "{tmp}"], "is a folder"), (["--threads", "-1"], "threads must be at least 1")],
    ids=["out-is-a-folder", "negative-threads"],
)
def test_train_cli_refuses_a_folder_as_out_and_negative_threads_before_training(
    tmp_path, capsys, extra, needle
):
    from tutor.cli import main

    argv = ["--home", str(tmp_path), "train", "--embd", "32", "--layers", "1", "--steps", "1"]
    code = main(argv + [a.format(tmp=tmp_path) for a in extra])
    assert code == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and needle in err
    assert not list(tmp_path.iterdir())  # nothing written


@pytest.mark.slow  # 6-9 s: in the slow run, which CI runs too
def test_default_checkpoint_names_keep_runs_with_other_settings_apart(tmp_path, small_corpus):
    base = ["train", "--embd", "32", "--layers", "1", "--block", "16", "--steps", "2"]
    base += ["--eval-interval", "2", "--home", str(tmp_path), "--corpus", small_corpus, *ONE_THREAD]
    # three runs that share only the home: one as a real process, meanwhile two in this process
    with ThreadPoolExecutor(max_workers=1) as pool:
        first = pool.submit(
            subprocess.run,
            [PYTHON, "-m", "tutor", *base],
            capture_output=True,
            text=True,
            env=run_tutor_env(tmp_path),
        )
        procs = [tutor_here(*base, *extra) for extra in (["--seed", "2"], ["--lr", "0.001"])]
        procs.append(first.result())
    for proc in procs:
        assert proc.returncode == 0, proc.stderr
    assert len(list((tmp_path / "runs").glob("learned-h4-l1-e32-s2-*.pt"))) == 3


@pytest.fixture(scope="module")
def reports(small_corpus, tmp_path_factory) -> dict[str, tuple[subprocess.CompletedProcess, Path]]:
    """One short `train` run in each language: (its output, its checkpoint). English as a real process,
    German and Chinese meanwhile in this one (the same command; the process's own edges are English's)."""
    folders = {lang: tmp_path_factory.mktemp(f"report-{lang}") for lang in ("en", "de", "zh")}

    def args(lang: str) -> list[str]:
        cmd = ["train", "--embd", "32", "--layers", "1", "--block", "16", "--batch", "4", "--steps", "4"]
        cmd += ["--eval-interval", "2", "--corpus", small_corpus, "--out", str(folders[lang] / "m.pt")]
        return [*cmd, *ONE_THREAD, "--lang", lang]

    with ThreadPoolExecutor(max_workers=1) as pool:
        en = pool.submit(
            subprocess.run,
            [PYTHON, "-m", "tutor", *args("en")],
            capture_output=True,
            text=True,
            env=run_tutor_env(folders["en"]),
        )
        done = {lang: tutor_here(*args(lang), home=folders[lang]) for lang in ("de", "zh")}
        done["en"] = en.result()
    return {lang: (done[lang], folder / "m.pt") for lang, folder in folders.items()}


@pytest.mark.parametrize(
    ("lang", "expected"),
    [
        (
            "en",
            [
                r"^corpus: .*tang-sample\.json: read 418 poems, [\d,]+ characters, [\d,]+ distinct",
                r"vocabulary [\d,]+: characters seen 3\+ times in training",
                r"^validation loss \(nats/char\): model [\d.]+ last, [\d.]+ best \(step \d\) +\| +bigram [\d.]+ "
                r"\(λ 0\.\d+\) +unigram [\d.]+ +uniform [\d.]+$",
                r"^done: 4 steps in [\d.]+s$",
                r"^checkpoint: .*m\.pt \(the last evaluation\)$",
            ],
        ),
        (
            "de",
            [
                r"^Korpus: .*: 418 Gedichte gelesen",
                r"^Training auf [\d.]+ Gedichten, Validierung auf",
                r"Vokabular [\d.]+: Zeichen, die im Training mindestens 3-mal vorkommen",
                r"^Validierungsverlust \(Nats/Zeichen\): Modell \d+,\d{4} zuletzt, \d+,\d{4} am besten",
                r"^fertig: 4 Schritte in \d+,\d s$",
                r"^Checkpoint: .*m\.pt \(die letzte Messung\)$",
            ],
        ),
        (
            "zh",
            [
                r"^语料：.*：读入 418 首诗",
                r"^用 [\d,]+ 首诗训练，用 [\d,]+ 首验证",
                r"词表 [\d,]+ 个：训练中出现至少 3 次的字",
                r"^验证损失（奈特/字）：模型最后 \d+\.\d{4}，最好",
                r"^完成：4 步，用时 \d+\.\d 秒$",
                r"^检查点：.*m\.pt（最后一次测量）$",
            ],
        ),
    ],
)
def test_train_cli_reports_the_corpus_vocabulary_and_loss_beside_both_baselines_in_the_learners_language(
    reports, lang, expected
):
    proc, checkpoint = reports[lang]
    assert proc.returncode == 0, proc.stderr
    for pattern in expected:
        assert re.search(pattern, proc.stdout, re.M), (pattern, proc.stdout)
    words = re.sub(r"/\S+", " ", proc.stdout)  # without the file paths
    assert lang == "en" or not re.search(r"validation|training|corpus|steps in", words), proc.stdout
    assert load_checkpoint(checkpoint).meta["vocab_min_count"] == 3


def test_a_traditional_script_poetry_file_from_outside_imports_as_simplified_and_trains(tmp_path, tang):
    """A chinese-poetry style file in traditional script (written here with OpenCC's s2t from 120 Tang poems,
    with `paragraphs`, and one entry without text) trains through `train` on simplified characters (run
    in this process; the tests above run `train` as a real process)."""
    from opencc import OpenCC

    to_trad = OpenCC("s2t").convert
    entries = [
        {"title": to_trad(p.title), "author": to_trad(p.author), "paragraphs": [to_trad(x) for x in p.lines]}
        for p in tang[:120]
    ]
    entries.append({"title": "無題", "author": "佚名", "paragraphs": []})
    text = json.dumps(entries, ensure_ascii=False)
    simplified = OpenCC("t2s").convert
    assert sum(simplified(c) != c for c in set(text)) > 50  # it really is in traditional script
    src = tmp_path / "poet.tang.99000.json"
    src.write_text(text, encoding="utf-8")
    cmd = ["train", "--embd", "32", "--layers", "1", "--block", "16", "--batch", "4", "--steps", "4"]
    cmd += ["--eval-interval", "2", "--corpus", str(src), "--out", str(tmp_path / "t.pt"), *ONE_THREAD]
    proc = tutor_here(*cmd, home=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "read 120 poems" in proc.stdout and "(traditional converted to simplified)" in proc.stdout
    assert re.search(r"skipped 1: .*", proc.stdout)
    chars = set(load_checkpoint(tmp_path / "t.pt").tokenizer.chars[1:])
    assert chars and all(simplified(c) == c for c in chars)  # no traditional form left in the vocabulary
    assert {"风", "来"} & chars
