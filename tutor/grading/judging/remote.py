"""The judge's view of a submission: a proxy that turns calls into probes for the sandboxed worker.

A check never holds the learner's objects. `learner.split_heads(x, 3)` (tutor.grading.kit.Learner)
sends x as bytes, the worker calls the learner's function, and what comes back is plain data rebuilt
with the judge's own torch. A module is built in the worker from a config (`sub.new`), loaded with
weights the judge drew (`.load`), and run on inputs the judge chose (`.run`, `.grads`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

from tutor.errors import CheckFailure
from tutor.grading.judging.voice import CheckFailed, tell


class LearnerError(CheckFailure):
    """The learner's code raised while answering a probe; `type_name` is the exception's class name."""

    message: str  # set by kit's calls (learner.f(...)): the exception's own text

    def __init__(self, type_name: str, text: str):
        super().__init__(text)
        self.type_name, self.text = type_name, text

    @classmethod
    def from_reply(cls, error: Any, lang: str) -> LearnerError:
        """The worker's description of an exception (tutor.grading.box.worker.describe_error), told in `lang`.
        The worker is untrusted: every field is taken as plain text, of bounded length. The
        exception's own text (the learner's words, or Python's) is kept as it is, and comes last."""
        from tutor.texts import say

        err = error if isinstance(error, dict) else {}

        def field(name: str, limit: int = 1500) -> str:
            return str(err.get(name, ""))[:limit]

        type_name, kind = field("type", 80) or "Exception", field("kind", 20)
        if kind == "exit":
            return cls(type_name, say("grade.code.exit", lang, code=field("code", 200)))
        if kind == "syntax":
            return cls(type_name, say("grade.code.syntax", lang, line=field("line", 20), error=field("text")))
        text = field("text")
        if kind == "memory":
            text = say("grade.code.memory", lang, mb=field("limit_mb", 20), error=text)
        elif kind == "fsize":
            text = say("grade.code.too_much_written", lang, error=text)
        elif kind == "threads":
            text = say("grade.code.threads", lang, n=field("max_tasks", 20), error=text)
        at = err.get("at")
        frames = at if isinstance(at, list) else []
        said = field("text").removeprefix(f"{type_name}:").strip()  # the exception's own words

        def frame(line: str, name: str, code: str) -> str:
            if code.startswith("raise") and said and said in code:  # the line would say the text again
                return say("grade.code.frame_line", lang, line=line, name=name)
            return say("grade.code.frame", lang, line=line, name=name, code=code)

        where = [
            frame(str(f[0])[:20], str(f[1])[:200], str(f[2])[:300].strip())
            for f in frames[-3:]
            if isinstance(f, list) and len(f) == 3
        ]
        if where:
            text = say("grade.code.at", lang, error=text, where=say("grade.code.frame_sep", lang).join(where))
        return cls(type_name, text[:2000])


class Stopped(Exception):
    """The worker can answer no more probes: time ran out, it died, or it broke the protocol."""

    def __init__(self, status: str, reason: str):
        super().__init__(reason)
        self.status, self.reason = status, reason


class Prober(Protocol):
    """The judge's channel to a worker (tutor.grading.judging.judge.Channel)."""

    def probe(self, op: str, args: list | None = None, kwargs: dict | None = None, **fields: Any) -> Any: ...

    def send(self, op: str, args: list | None = None, kwargs: dict | None = None, **fields: Any) -> None: ...

    def answer(self) -> Any: ...

    def kill(self) -> None: ...

    def say(self, key: str, **values: Any) -> str: ...


def _is_shape(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(n, int) and not isinstance(n, bool) for n in value)


def _is_strings(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(v, str) for v in value)


def well_formed(channel: Prober, op: str, reply: Any, valid) -> Any:
    """`reply` if `valid(reply)`; otherwise the run is void: the worker answered something that is not
    an answer to `op` (its process is the learner's, so it can send anything)."""
    if valid(reply):
        return reply
    channel.kill()
    raise Stopped("error", channel.say("grade.stop.malformed_answer", op=op))


def _module_info(info: Any) -> bool:
    return (
        isinstance(info, dict)
        and isinstance(info.get("class"), str)
        and (
            info.get("params") is None
            or isinstance(info.get("params"), dict)
            and all(isinstance(k, str) and _is_shape(v) for k, v in info["params"].items())
        )
        and isinstance(info.get("modules"), list)
        and all(
            isinstance(m, list)
            and len(m) == 3
            and isinstance(m[0], str)
            and isinstance(m[1], str)
            and isinstance(m[2], bool)
            for m in info["modules"]
        )
    )


class RemoteModule:
    """A module the learner's code built in the worker; `params` maps parameter names to shapes."""

    def __init__(self, channel: Prober, ref: int, info: dict):
        self._channel, self.ref = channel, ref
        self.class_name: str = info["class"]
        params = info["params"]
        self.is_module = params is not None
        self.params: dict[str, tuple[int, ...]] = {k: tuple(v) for k, v in (params or {}).items()}
        # (dotted name, class name, defined in the learner's file)
        self.modules: list[tuple[str, str, bool]] = [(m[0], m[1], m[2]) for m in info["modules"]]

    def load(self, state: dict) -> None:
        """Load the judge's weights; every one must land in a parameter of the same name."""
        result = well_formed(
            self._channel,
            "load",
            self._channel.probe("load", ref=self.ref, args=[state]),
            lambda r: (
                isinstance(r, dict) and _is_strings(r.get("missing")) and _is_strings(r.get("unexpected"))
            ),
        )
        unexpected = result["unexpected"]
        if unexpected:
            raise CheckFailed(
                tell("grade.check.weights_by_name", cls=self.class_name, names=list(unexpected)[:4])
            )

    def run(self, *args: Any, method: str = "__call__", **kwargs: Any) -> Any:
        return self._channel.probe("run", ref=self.ref, method=method, args=list(args), kwargs=kwargs)

    def logits(self, *args: Any) -> Any:
        """The logits of one forward pass in eval mode, without gradients or targets (float32)."""
        return self._channel.probe("logits", ref=self.ref, args=list(args))

    def grads(self, *args: Any, keep_logits: bool = False) -> dict:
        """{"loss", "grads": {parameter name: gradient}}: one training step's backward pass; with
        `keep_logits` the worker keeps that forward pass's logits for `step_logits`."""
        reply = self._channel.probe("grads", ref=self.ref, args=list(args), keep_logits=keep_logits)
        return well_formed(
            self._channel,
            "grads",
            reply,
            lambda r: isinstance(r, dict) and "loss" in r and isinstance(r.get("grads"), dict),
        )

    def step_logits(self, start: int, stop: int) -> Any:
        """Rows [start, stop) of the logits of the last `grads(..., keep_logits=True)` (float32)."""
        return self._channel.probe("step_logits", ref=self.ref, rows=[start, stop])


class Submission:
    """The learner's file as the checks see it: its names, and probes into its code."""

    def __init__(self, channel: Prober, names: dict[str, str], display: str):
        self._channel, self.names, self.display = channel, names, display
        self._refs = 0

    @classmethod
    def load(cls, channel: Prober, source: str, display: str) -> Submission:
        """Have the worker import the file from its text; what it defines, by kind. The grade's seed is
        not sent: the worker seeds the file's own draws from its text (worker.op_submit)."""
        reply = channel.probe("submit", source=source, display=display)
        kinds = ("class", "function", "value")
        reply = well_formed(
            channel,
            "submit",
            reply,
            lambda r: (
                isinstance(r, dict)
                and isinstance(r.get("names"), dict)
                and all(isinstance(k, str) and v in kinds for k, v in r["names"].items())
            ),
        )
        return cls(channel, reply["names"], display)

    def _ref(self) -> int:
        self._refs += 1
        return self._refs

    def call(self, name: str, *args: Any, **kwargs: Any) -> Any:
        return self._channel.probe("call", name=name, args=list(args), kwargs=kwargs)

    def call_later(self, name: str, *args: Any, **kwargs: Any) -> Callable[[], Any]:
        """Start the call and return at once, so the judge computes its own value while the worker
        computes the learner's; what this returns waits for the answer."""
        self._channel.send("call", name=name, args=list(args), kwargs=kwargs)
        return self._channel.answer

    def new(self, name: str, cfg: dict) -> RemoteModule:
        ref = self._ref()
        info = well_formed(
            self._channel, "new", self._channel.probe("new", name=name, cfg=cfg, keep=ref), _module_info
        )
        return RemoteModule(self._channel, ref, info)
