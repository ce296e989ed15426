"""Parameter models of the experiments: types, ranges, defaults and help text (pydantic only, no torch).

Lesson files embed these names (```experiment NAME``` blocks), the CLI sets them with `--set KEY=VALUE`
and the UI builds its form from them, so names are a contract: add optional ones, never rename.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from tutor.experiments.errors import InvalidParams

PosMode = Literal["learned", "none", "rope", "alibi"]


class Params(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


def _divides(d: int, h: int, what: str) -> None:
    if d % h:
        raise InvalidParams("err.params.divisible", what=what, d=d, h=h)


class HeadsParams(Params):
    n_embd: int = Field(32, ge=2, le=512, description="vector width C for the shape walk-through")
    n_head: int = Field(4, ge=1, le=64, description="number of heads h for the shape walk-through")
    text: str = Field(
        "白日依山尽",
        min_length=1,
        max_length=64,
        description="a line the shipped model reads (after the line break ↵ that opens every poem in training); "
        "its attention heatmaps are shown per head",
    )
    layer: int | None = Field(
        None, ge=1, le=32, description="show heatmaps of this layer only (1 = first); default all"
    )
    seed: int = Field(0, ge=0, description="seed for the random input of the walk-through")

    @model_validator(mode="after")
    def _check(self) -> HeadsParams:
        _divides(self.n_embd, self.n_head, "n_embd")
        return self


class ParamCountParams(Params):
    d_model: int = Field(512, ge=1, le=8192, description="model width d_model")
    heads: list[Annotated[int, Field(ge=1, le=1024)]] = Field(
        [1, 2, 4, 8, 16], min_length=1, max_length=16, description="head counts to compare"
    )

    @model_validator(mode="after")
    def _check(self) -> ParamCountParams:
        for h in self.heads:
            _divides(self.d_model, h, "d_model")
        return self


class DkScalingParams(Params):
    dims: list[Annotated[int, Field(ge=1, le=4096)]] = Field(
        [4, 16, 64, 256],
        min_length=1,
        max_length=12,
        description="head dimensions d_k to sample (64 is always added)",
    )
    samples: int = Field(4000, ge=1000, le=200000, description="random (q, k) pairs per d_k")
    T: int = Field(16, ge=2, le=512, description="keys per softmax row for the saturation measurement")
    seed: int = Field(0, ge=0, description="random seed")


# train-compare's two defaults that need a reason, as their fields' descriptions say it
_BATCH_DEFAULT = (
    "sequences per step (10 keeps a 1000-step run of 8 heads under 2 minutes on one thread of a 2-core CPU)"
)
_DROPOUT_DEFAULT = (
    "dropout while training (a default run reads 23% of the Tang training text once, so there is nothing to "
    "memorise yet and dropout would only slow learning)"
)


class TrainCompareParams(Params):
    vary: Literal["heads", "pos"] = Field("heads", description="what changes between the runs")
    heads: list[Annotated[int, Field(ge=1, le=128)]] = Field(
        [1, 4, 8], min_length=1, max_length=8, description="head counts to train (vary = heads)"
    )
    pos: list[PosMode] = Field(
        ["learned", "none", "rope", "alibi"],
        min_length=1,
        max_length=4,
        description="position modes to train (vary = pos)",
    )
    steps: int = Field(1000, ge=1, le=50000, description="training steps per run")
    batch: int = Field(10, ge=1, le=256, description=_BATCH_DEFAULT)
    context: int = Field(64, ge=4, le=512, description="training window in characters")
    n_layer: int = Field(4, ge=1, le=12, description="blocks")
    n_embd: int = Field(128, ge=8, le=512, description="vector width")
    n_head: int = Field(4, ge=1, le=128, description="heads when vary = pos")
    base_pos: PosMode = Field("learned", description="position mode when vary = heads")
    lr: float = Field(2e-3, gt=0, le=1.0, description="peak learning rate")
    dropout: float = Field(0.0, ge=0.0, lt=1.0, description=_DROPOUT_DEFAULT)
    eval_interval: int = Field(50, ge=1, le=10000, description="steps between validation losses")
    seed: int = Field(1337, ge=0, description="random seed of the first run of each setting")
    seeds: int = Field(
        2,
        ge=1,
        le=5,
        description="runs per setting, with seeds seed, seed+1, ...: a difference between settings smaller "
        "than the spread between seeds is noise",
    )
    threads: int | None = Field(
        1,
        ge=1,
        le=64,
        description="torch threads for training; not part of a run's key. 1 by default: on a busy 2-core CPU "
        "two threads wait on each other (measured 5-10x slower), one runs steadily",
    )

    def runs(self) -> list[tuple[str, int, str]]:
        """(slug, n_head, pos) per run, in order; the slug names the run in metric names ("h4", "rope")."""
        if self.vary == "heads":
            return [(f"h{h}", h, self.base_pos) for h in dict.fromkeys(self.heads)]
        return [(p, self.n_head, p) for p in dict.fromkeys(self.pos)]

    @model_validator(mode="after")
    def _check(self) -> TrainCompareParams:
        for _, h, pos in self.runs():
            _divides(self.n_embd, h, "n_embd")
            if pos == "rope" and (self.n_embd // h) % 2:
                raise InvalidParams("err.params.rope_even", n_embd=self.n_embd, h=h)
        return self


class ShuffleParams(Params):
    seq: int = Field(6, ge=2, le=64, description="sequence length")
    d: int = Field(16, ge=1, le=256, description="vector width")
    seed: int = Field(0, ge=0, description="random seed for inputs, weights and the permutation")


class PermutationParams(Params):
    layers: list[Annotated[int, Field(ge=1, le=8)]] = Field(
        [1, 2, 3], min_length=1, max_length=8, description="model depths to try"
    )
    modes: list[PosMode] = Field(
        ["none", "learned"], min_length=1, max_length=4, description="position modes to try"
    )
    seed: int = Field(0, ge=0, description="seed of the fresh (untrained) models")
    text: str = Field("白日依山尽", min_length=2, max_length=64, description="the line in order")
    other: str = Field("山依日白尽", min_length=2, max_length=64, description="the same characters reordered")

    @model_validator(mode="after")
    def _check(self) -> PermutationParams:
        if sorted(self.text) != sorted(self.other):
            raise InvalidParams("err.params.same_chars", other=repr(self.other), text=repr(self.text))
        return self


class RopeRelativeParams(Params):
    d: int = Field(16, ge=2, le=1024, multiple_of=2, description="vector width (even: RoPE rotates pairs)")
    base: float = Field(10000.0, gt=1.0, le=1e9, description="RoPE base")
    max_pos: int = Field(128, ge=2, le=8192, description="positions 0 … max_pos−1 to place q and k at")
    dtype: Literal["float32", "float64"] = Field("float32", description="precision of the rotation")
    offsets: list[Annotated[int, Field(ge=0)]] = Field(
        [0, 1, 2, 4, 8, 16, 32, 64],
        min_length=1,
        max_length=16,
        description="position differences n − m to check",
    )
    seed: int = Field(0, ge=0, description="seed for the random q and k")

    @model_validator(mode="after")
    def _check(self) -> RopeRelativeParams:
        too_far = [o for o in self.offsets if o >= self.max_pos]
        if too_far:
            raise InvalidParams("err.params.offsets", offsets=str(too_far), max_pos=self.max_pos)
        return self


class RopeFrequenciesParams(Params):
    d: int = Field(32, ge=2, le=1024, multiple_of=2, description="head dimension (even)")
    base: float = Field(10000.0, gt=1.0, le=1e9, description="RoPE base")


class AlibiParams(Params):
    n_head: int = Field(8, ge=1, le=64, description="number of heads")
    T: int = Field(8, ge=1, le=64, description="sequence length of the bias matrix")


class WriteParams(Params):
    prompt: str = Field("", max_length=64, description="the start of the poem (empty: the model begins one)")
    temperature: float = Field(
        1.0, gt=0.0, le=3.0, description="1: as the model learned; below 1 sharper, above 1 more adventurous"
    )
    top_k: int = Field(
        0, ge=0, le=500, description="choose only among the k likeliest characters (0: all of them)"
    )
    seed: int = Field(1, ge=0, le=2**31 - 1, description="the same seed writes the same poem")
    max_chars: int = Field(120, ge=1, le=300, description="write at most this many characters")
    inspect: int | None = Field(
        None,
        ge=1,
        le=300,
        description="which written character to look into (1 = the first; default: the last)",
    )
    layer: int = Field(4, ge=1, le=16, description="the layer of the head whose attention is shown")
    head: int = Field(2, ge=1, le=64, description="the head whose attention is shown")


class ContextScalingParams(Params):
    scale: float = Field(4.0, ge=1.0, le=64.0, description="context scale s for the frequency table")
    windows: int = Field(
        2048,
        ge=1,
        le=4096,
        description="validation windows of the longest length, from the start of the validation split (2048: 85% of it); every length "
        "scores the same text. The shipped model's figures for scales 2, 4 and 8 at 2048 windows are stored in "
        "its checkpoint; other settings are measured when asked (seconds to minutes)",
    )
    bucket: int = Field(8, ge=1, le=64, description="positions per bucket in the loss-by-position plot")


class ContextFinetuneParams(Params):
    scale: float = Field(
        4.0, ge=1.0, le=8.0, description="context scale s: fine-tune and read at s × the trained length"
    )
    methods: list[Literal["none", "pi", "ntk", "yarn"]] = Field(
        ["none", "pi", "ntk", "yarn"], min_length=1, max_length=4, description="frequency tables to fine-tune"
    )
    steps: int = Field(100, ge=1, le=5000, description="fine-tuning steps per method")
    batch: int = Field(16, ge=1, le=128, description="windows of s × the trained length per step")
    lr: float = Field(1e-3, gt=0, le=1.0, description="peak learning rate of the fine-tune")
    windows: int = Field(
        256, ge=1, le=4096, description="validation windows of the longest length, before and after"
    )
    seed: int = Field(1337, ge=0, description="random seed (the same for every method)")
    threads: int | None = Field(
        1, ge=1, le=64, description="torch threads for the fine-tune (1 runs steadily on a busy 2-core CPU)"
    )
