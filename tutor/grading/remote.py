"""The judge's view of a submission: a proxy that turns calls into probes for the sandboxed worker.

A check never holds the learner's objects. `need(sub, "split_heads")(x, 3)` sends x as bytes, the
worker calls the learner's function, and what comes back is plain data rebuilt with the judge's own
torch. A module is built in the worker from a config (`sub.new`), loaded with weights the judge drew
(`.load`), and run on inputs the judge chose (`.run`, `.grads`).
"""

from __future__ import annotations

import ast
from typing import Any, Protocol

from tutor.errors import CheckFailure


class LearnerError(CheckFailure):
    """The learner's code raised while answering a probe; `type_name` is the exception's class name."""

    def __init__(self, type_name: str, text: str):
        super().__init__(text)
        self.type_name, self.text = type_name, text

    @classmethod
    def from_reply(cls, error: Any, lang: str) -> LearnerError:
        """The worker's description of an exception (tutor.grading.worker.describe), told in `lang`.
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
        frames = err.get("at") if isinstance(err.get("at"), list) else []
        where = [
            say("grade.code.frame", lang, line=str(f[0])[:20], name=str(f[1])[:200], code=str(f[2])[:300])
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
    def probe(self, op: str, args: list | None = None, kwargs: dict | None = None, **fields: Any) -> Any: ...


class RemoteModule:
    """A module the learner's code built in the worker; `params` maps parameter names to shapes."""

    def __init__(self, channel: Prober, ref: int, info: dict):
        self._channel, self.ref = channel, ref
        self.class_name: str = str(info.get("class", "?"))
        params = info.get("params")
        self.is_module = isinstance(params, dict)
        self.params: dict[str, tuple[int, ...]] = (
            {str(k): tuple(v) for k, v in params.items()} if isinstance(params, dict) else {}
        )
        # (dotted name, class name, defined in the learner's file)
        self.modules: list[tuple[str, str, bool]] = [
            (str(m[0]), str(m[1]), m[2] is True)
            for m in info.get("modules", [])
            if isinstance(m, list) and len(m) == 3
        ]

    def load(self, state: dict) -> None:
        """Load the judge's weights; every one must land in a parameter of the same name."""
        from tutor.grading.kit import CheckFailed, tell

        result = self._channel.probe("load", ref=self.ref, args=[state])
        unexpected = result.get("unexpected") if isinstance(result, dict) else ["?"]
        if unexpected:
            raise CheckFailed(
                tell("grade.check.weights_by_name", cls=self.class_name, names=list(unexpected)[:4])
            )

    def run(self, *args: Any, method: str = "__call__", **kwargs: Any) -> Any:
        return self._channel.probe("run", ref=self.ref, method=method, args=list(args), kwargs=kwargs)

    def trace(self, function: str, *args: Any, **kwargs: Any) -> dict:
        """{"output", "calls": [[args after the first, kwargs]]}: a run that records each call the
        module makes to the file's function `function`."""
        return self._channel.probe("trace", ref=self.ref, function=function, method="__call__", args=list(args),
                                   kwargs=kwargs)  # fmt: skip

    def grads(self, *args: Any) -> dict:
        return self._channel.probe("grads", ref=self.ref, args=list(args))


class Submission:
    """The learner's file as the checks see it: its names, its source, and probes into its code."""

    def __init__(self, channel: Prober, names: dict[str, str], source: str, display: str):
        self._channel, self.names, self.source, self.display = channel, names, source, display
        self._refs = 0
        try:
            self.tree: ast.Module | None = ast.parse(source)
        except (SyntaxError, ValueError, RecursionError):
            self.tree = None

    def _ref(self) -> int:
        self._refs += 1
        return self._refs

    def call(self, name: str, *args: Any, **kwargs: Any) -> Any:
        return self._channel.probe("call", name=name, args=list(args), kwargs=kwargs)

    def call_kept(self, name: str, *args: Any, **kwargs: Any) -> tuple[Any, dict]:
        """Call, and keep the result in the worker: pass the returned reference on to feed the
        learner's own object (not a copy) into the next call."""
        ref = self._ref()
        value = self._channel.probe("call", name=name, keep=ref, args=list(args), kwargs=kwargs)
        return value, {"__ref__": ref}

    def new(self, name: str, cfg: dict) -> RemoteModule:
        ref = self._ref()
        info = self._channel.probe("new", name=name, cfg=cfg, keep=ref)
        return RemoteModule(self._channel, ref, info if isinstance(info, dict) else {})

    def imports(self) -> set[str]:
        """Every `module` and `module.name` the file imports (statically, from its source)."""
        found: set[str] = set()
        for node in ast.walk(self.tree) if self.tree else ():
            if isinstance(node, ast.Import):
                found |= {a.name for a in node.names}
            elif isinstance(node, ast.ImportFrom) and node.module:
                found.add(node.module)
                found |= {f"{node.module}.{a.name}" for a in node.names}
        return found

    def strings(self) -> set[str]:
        return (
            {n.value for n in ast.walk(self.tree) if isinstance(n, ast.Constant) and isinstance(n.value, str)}
            if self.tree
            else set()
        )
