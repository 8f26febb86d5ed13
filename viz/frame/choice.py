"""From what the reader chose in the sidebar to what every page looks at: build_context loads the chosen
model and traces the sentence once per run (viz/services caches both), and the router hands the Context to
the pages (viz/core/context.set_current; a page reads it with current() or ui.need_context(), since Streamlit runs
a page as a script and cannot pass it arguments)."""
from __future__ import annotations

from dataclasses import dataclass

from viz.core.i18n import error_text, t
from viz.services.models import model_view
from viz.services.traces import get_trace
from viz.core.context import Context


@dataclass(frozen=True)
class Choice:
    """The sidebar's answer: the model, the sentence as typed, the reference (stripped; None when empty), the
    decoding settings and, for a two-style model, which Spanish it writes."""
    model_id: str
    text: str
    target: str | None
    beam: int
    max_tokens: int
    style: str | None = None


def build_context(choice: Choice, notices: list[str]) -> Context:
    """The Context of this run: the loaded model and, when there is a sentence, its trace. A reference the
    model cannot read with the sentence is dropped with a notice; a sentence it cannot read leaves no trace."""
    ctx = Context(choice.model_id, model_view(choice.model_id), choice.text, choice.target, choice.beam,
                  choice.max_tokens, None, notices, choice.style)
    if not choice.text.strip():
        return ctx
    try:
        ctx.trace = get_trace(*ctx.trace_key)
    except ValueError as e:
        ctx.trace = _trace_without_reference(ctx, e)
    return ctx


def _trace_without_reference(ctx: Context, error: ValueError):
    """When the sentence and its reference cannot be read together: if the sentence alone can, the
    reference was the problem: say so and show the sentence without it; else say why the sentence cannot."""
    if ctx.target is not None:
        try:
            trace = get_trace(ctx.model_id, ctx.source, None, ctx.beam, ctx.max_tokens)
        except ValueError:
            trace = None
        if trace is not None:
            ctx.notices.append(t("notice.unreadable_reference", error=error_text(error)))
            ctx.target = None
            return trace
    ctx.notices.append(t("notice.unreadable", error=error_text(error)))
    return None
