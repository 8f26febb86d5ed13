"""The current Context (model, sentence, trace): what every page looks at.

app.py fills it once per run from the sidebar (models and traces come from viz/services) and keeps it in
the view (viz/core/view.py); pages read it with `current()` and never load models themselves.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from model.capture.trace import Trace
from viz.core import view

OWN = view.Own("viz.core.context")
CONTEXT = OWN.value("_ctx")                  # this run's Context (tests read it: at.session_state["_ctx"])


@dataclass(frozen=True)
class Traced:
    """What a Context's trace_key determines, the model and the trace, compared and hashed by that key alone: a
    shared builder (view.shared_cached) takes it, so it is keyed by what determines it and can read nothing else
    of the Context (not the sentence as typed, nor the notices)."""
    trace_key: tuple
    model: Any = field(compare=False)
    trace: Trace | None = field(compare=False)

    @property
    def model_id(self) -> str:
        return self.trace_key[0]


@dataclass
class Context:
    """What the shared sidebar chose for this run."""
    model_id: str
    model: Any                # what pages may know of the model: viz/services/models.ModelView (no torch module)
    text: str
    target: str | None
    beam: int
    max_tokens: int
    trace: Trace | None
    notices: list[str] = field(default_factory=list)
    style: str | None = None  # which Spanish a two-style model writes ("modern", "bible"); None: one style

    @property
    def source(self) -> str:
        """The sentence as the model reads it: stripped, its style token first for a two-style model."""
        return self.model.tokenizer.styled(self.text.strip(), self.style)

    @property
    def trace_key(self) -> tuple[str, str, str | None, int, int]:
        """What this view's trace is cached by (viz/services get_trace, trace_npz, the lesson, attribution):
        model, the sentence as the model reads it, the reference (stripped; None when empty), beam, max tokens."""
        return self.model_id, self.source, (self.target or "").strip() or None, self.beam, self.max_tokens

    @property
    def traced(self) -> Traced:
        return Traced(self.trace_key, self.model, self.trace)


def set_current(ctx: Context | None) -> None:
    view.put(CONTEXT, ctx)


def current() -> Context | None:
    return view.get(CONTEXT)
