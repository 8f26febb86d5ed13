"""The teacher's side of a class: start it, show the join code and QR code large for the projector, see who
follows, ask a question about the sentence on screen, watch the tally, reveal the model's answer (everyone is
taken to the view that proves it; the tally folds to one line so the proof is on the first screen), close the
question, download the questions and tallies, end the class. The teacher's browser keeps the class (a cookie:
viz/classroom/browser.py), so a reload or a new worker resumes teaching; when the store cannot be reached the
class bar says so in large type until it can."""
from __future__ import annotations

import pandas as pd
import streamlit as st

from viz.core import view
from viz.classroom import browser, questions
from viz.classroom.live import (class_store, go_to, handoff_link, is_loopback, join_link, personal_params, qr_png,
                                say)
from viz.classroom.store import ClassGone, NotTeacher, Question, StoreDown
from viz.figures.tally import tally_figure
from viz.core.i18n import t
from viz.core.text import plain
from viz.core.context import current
from viz.elements.ui import look

OWN = view.Own("viz.classroom.teacher")  # this module's own session values
CLASS_HANDOFF = OWN.value("class-handoff")        # the last link made for another device
CLASS_OUTAGE = OWN.value("class-outage")          # the store was unreachable at the last look
CLASS_SHOW_JOIN = OWN.value("class-show-join")    # the big join code and QR shown

PRESENCE_EVERY_S = 2.0
TALLY_EVERY_S = 1.0
QR_PX = 440                  # about a third of a 1280 px projector: readable from the back rows
# The class code on the projector: large, on one line (a fixed string: no user text goes into it).
CODE_CSS = """<style>
.st-key-class-code p { font-size: 4.5rem !important; line-height: 1.1 !important; letter-spacing: 0.12em;
  white-space: nowrap; font-family: "Source Code Pro", monospace; }
.st-key-class-join-screen img { max-width: 100% !important; height: auto !important; }
</style>"""
# The class unreachable: in large type at the top of the teacher's screen (fixed text; the words are the catalogue's).
OUTAGE_CSS = """<style>
.st-key-class-outage p { font-size: 2rem !important; line-height: 1.3 !important; font-weight: 600; }
</style>"""


def take(code: str, secret: str, show_join: bool = True) -> None:
    """This session teaches class `code` from now on (a new class shows its join screen; a resumed one not)."""
    view.put(view.CLASS_CODE, code)
    view.put(view.CLASS_SECRET, secret)
    view.put(CLASS_SHOW_JOIN, show_join)


def resume(code: str, secret: str) -> None:
    """This session goes on teaching `code` (a reload, a killed worker, a restarted Redis): on the view the class
    follows, so no student is pulled anywhere; presenter mode and language are the teacher's own (the URL's)."""
    take(code, secret, show_join=False)
    say(t("class.resumed", code=code))
    try:
        published = class_store().followed(code)
    except (ClassGone, StoreDown):
        return
    if published is not None and (published.page, published.query) != (view.get(view.PAGE),
                                                                        view.shared_view().query()):
        go_to(published.page, published.query, personal_params())


def forget(notice: str | None = None) -> None:
    for value in (view.CLASS_CODE, view.CLASS_SECRET, CLASS_SHOW_JOIN, CLASS_HANDOFF):
        view.pop(value)
    if notice:
        say(notice)


def _start() -> None:
    try:
        take(*class_store().create())
        view.pop(view.CLASS_COOKIES_READ)
    except StoreDown:
        say(t("class.store_down"))


def _end() -> None:
    try:
        class_store().end(view.get(view.CLASS_CODE), view.get(view.CLASS_SECRET))
    except (ClassGone, NotTeacher):
        pass
    except StoreDown:
        say(t("class.store_down"))
        return
    forget(t("class.ended_by_you"))


def start_panel() -> None:
    """Start a class (the join code and QR code then show over the page)."""
    st.caption(t("class.start.help"))
    st.button(t("class.start"), key=view.key(view.CLASS_ASK, "start"), on_click=_start, icon=":material/co_present:")


def sidebar_panel(code: str, secret: str) -> None:
    """In the sidebar (folded away on the projector): the students' link, a link to teach from another device
    (single use), the CSV of the class's answers, the end."""
    with st.sidebar.expander(t("class.sidebar.live", code=code), expanded=False):
        st.caption(t("class.join_link"))
        st.code(join_link(code), language=None)
        st.button(t("class.handoff"), key=view.key(view.CLASS_ASK, "handoff"), on_click=_make_handoff,
                  args=(code, secret), icon=":material/devices:", help=t("class.handoff.help"))
        token = view.get(CLASS_HANDOFF)
        if token:
            st.caption(t("class.handoff.link"))
            st.code(handoff_link(code, token), language=None)
        try:
            st.download_button(t("class.csv"), history_csv(code, secret), file_name=f"class-{code}.csv",
                               mime="text/csv", on_click="ignore", key=view.key(view.CLASS_ASK, "csv"))
        except (ClassGone, NotTeacher, StoreDown):
            pass
        st.button(t("class.end"), key=view.key(view.CLASS_ASK, "end"), on_click=_end, icon=":material/stop_circle:")


def _make_handoff(code: str, secret: str) -> None:
    _teacher_call(lambda: view.put(CLASS_HANDOFF, class_store().handoff(code, secret)))


def _teacher_call(call) -> bool:
    """A teacher's store call; False, and said, when the class has ended or the store cannot be reached."""
    try:
        call()
        return True
    except (ClassGone, NotTeacher):
        forget(t("class.ended"))
    except StoreDown:
        say(t("class.store_down"))
    return False


def history_csv(code: str, secret: str) -> bytes:
    """One row per question and choice: the question (in the teacher's language), the choice, its votes, and
    whether it was the model's answer."""
    rows = []
    for question, counts in class_store().history(code, secret):
        prompt = t(questions.prompt_key(question), **question.fields)
        for i, (choice, votes) in enumerate(zip(question.choices, counts)):
            rows.append({"question": question.id, "prompt": spreadsheet_safe(prompt),
                         "choice": spreadsheet_safe(choice), "votes": votes,
                         "model_answer": i == question.answer, "revealed": question.revealed})
    columns = ["question", "prompt", "choice", "votes", "model_answer", "revealed"]
    return pd.DataFrame(rows, columns=columns).to_csv(index=False).encode("utf-8")


def spreadsheet_safe(text: str) -> str:
    """A cell a spreadsheet shows as text, never runs as a formula: one starting = + - @ (or a tab or carriage
    return) gets a leading apostrophe (a token such as '+3+4' was a formula)."""
    text = str(text)
    return "'" + text if text[:1] in ("=", "+", "-", "@", "\t", "\r") else text


def bar(code: str, secret: str, extra=None) -> None:
    """Over the page: the class's code and who is here (or, the store unreachable, that in large type), the join
    screen when shown, the question: its tally while open, one line once revealed. `extra(row)`: more controls
    for the bar's row (the lesson's download: it never covers a class control)."""
    try:
        question = class_store().question(code)
    except (ClassGone, StoreDown):
        question = None                       # the presence line says which
    with st.container(key="class-teacher", border=True):
        row = st.container(horizontal=True, vertical_alignment="center")
        _presence(code, row)
        row.toggle(t("class.show_join"), key=view.key(CLASS_SHOW_JOIN))
        with row.popover(t("class.ask"), icon=":material/quiz:"):
            _ask_form(code, secret)
        if extra is not None:
            extra(row)
        if view.get(CLASS_SHOW_JOIN):
            _join_screen(code)
        if question is not None:
            _question_box(code, secret, question)


def _presence(code: str, where) -> None:
    @st.fragment(run_every=PRESENCE_EVERY_S)
    def live() -> None:
        browser.heartbeat(PRESENCE_EVERY_S, beats=False)   # a worker that lost the page: a whole run
        try:
            here = class_store().presence(code)
        except ClassGone:
            forget(t("class.ended"))
            st.rerun()
        except StoreDown:
            view.put(CLASS_OUTAGE, True)
            st.html(OUTAGE_CSS)
            st.container(key="class-outage").error(t("class.unreachable", code=code), icon=":material/cloud_off:")
            return
        if view.pop(CLASS_OUTAGE):
            st.rerun()                        # back: a full run publishes the view the teacher is on
        st.markdown(t("class.presence", code=code, following=here.following, exploring=here.exploring))

    with where:
        live()


def _join_screen(code: str) -> None:
    """The code in large type, the QR code of the join link, and the link, for the projector. A link only this
    machine can open (the teacher's browser on localhost) is said: no phone can join by it."""
    link = join_link(code)
    with st.container(key="class-join-screen"):
        left, right = st.columns([1, 1], vertical_alignment="center")
        left.markdown(t("class.join_here"))
        st.html(CODE_CSS)
        left.container(key="class-code").markdown(f"**{code}**")   # the store's alphabet only: no Markdown in it
        left.code(link, language=None)
        if is_loopback(link):
            left.warning(t("class.loopback"))
        right.image(qr_png(link), width=QR_PX, caption=t("class.qr"))


def _ask_form(code: str, secret: str) -> None:
    """Pick a question about the sentence on screen; the model's answer comes from its trace."""
    ctx = current()
    if ctx is None or ctx.trace is None:
        st.caption(t("class.ask.no_sentence"))
        return
    kind = st.selectbox(t("class.ask.kind"), list(questions.KINDS), key=view.key(view.CLASS_ASK, "kind"),
                        format_func=lambda k: t(questions.KINDS[k].name))
    question = _build(ctx, kind)
    if question is not None and st.button(t("class.ask.go"), key=view.key(view.CLASS_ASK, "go"), type="primary"):
        _teacher_call(lambda: class_store().ask(code, secret, question))
        st.rerun()


def _build(ctx, kind: str) -> Question | None:
    """The question of `kind` the form's choices describe, built from the trace on screen. Each picker's key
    names the model and the sentence's length, so a choice made for a longer sentence is never offered to a
    shorter one (a target index past its end)."""
    cfg, trace = ctx.model.config, ctx.trace
    sentence = {k: v for k, v in view.shared_view().query().items() if view.DECLARED[k] in view.SIDEBAR}
    targets = list(range(len(trace.meta["tgt_out_tokens"])))
    written = questions.maths.token_choices(trace.meta["tgt_out_tokens"])

    def key(*parts) -> str:
        return view.key(view.CLASS_ASK, *parts, ctx.model_id, len(targets))

    layers = {"cross_look": cfg.n_decoder_layers, "next_token": 0, "positional_head": cfg.n_encoder_layers}[kind]
    layer = 0
    if layers:
        first = (questions.clearest_previous_layer(trace) if kind == "positional_head"
                 else min(view.read(view.LAYER, [], hi=63), layers - 1))
        layer = st.selectbox(t("ui.layer"), range(layers), key=key(kind, "layer"), index=first,
                             format_func=lambda i: t("ui.layer_n", i=i))
    if kind == "positional_head":
        return questions.positional_head(trace, sentence, layer)
    if kind == "cross_look":
        head = st.selectbox(t("ui.head"), range(cfg.n_heads), key=key("head"),
                            index=min(max(0, view.read(view.HEAD, [], lo=-1, hi=63)), cfg.n_heads - 1),
                            format_func=lambda h: t("ui.head_n", h=h))
        target = st.selectbox(t("class.ask.target"), targets, key=key("target", layer, head),
                              index=questions.default_target(trace, layer, head), format_func=written.__getitem__)
        return questions.cross_look(trace, sentence, layer, head, target)
    step = st.selectbox(t("class.ask.step"), targets, key=key("step"), index=min(1, len(targets) - 1),
                        format_func=lambda i: t("class.ask.step_n", i=i, token=written[i]))
    return questions.next_token(trace, sentence, ctx.model.tokenizer.token_strings, step)


def prompt_text(question: Question) -> str:
    """The question in the reader's language, as Markdown (its tokens shown as written, not as Markdown)."""
    fields = {k: plain(v, limit=120) if isinstance(v, str) else v for k, v in question.fields.items()}
    return t("class.question", text=t(questions.prompt_key(question), **fields))


def choice_label(question: Question, i: int) -> str:
    choice = question.choices[i]
    return t("ui.head_n", h=choice) if question.key in questions.HEAD_CHOICES else choice


def _question_box(code: str, secret: str, question: Question) -> None:
    """The open question and its live tally, with Reveal and Close; once revealed, one line (the proof below it
    is the page) and Close. The buttons run the whole page, never a fragment alone: the reveal switches pages."""
    st.markdown(prompt_text(question))
    if question.revealed:
        counts = _tally(code, question)
        st.markdown(t("class.revealed.line", answer=plain(choice_label(question, question.answer), limit=60),
                      right=counts[question.answer] if counts else 0, n=sum(counts)))
    else:
        _live_tally(code, question)
    row = st.container(horizontal=True)
    if not question.revealed and row.button(t("class.reveal"), key=view.key(view.CLASS_ASK, "reveal"),
                                            type="primary", icon=":material/visibility:"):
        _reveal(code, secret, question)
    row.button(t("class.close"), key=view.key(view.CLASS_ASK, "close"), on_click=_close, args=(code, secret, question.id),
               icon=":material/close:")


def _tally(code: str, question: Question) -> list[int]:
    try:
        return class_store().tally(code, question.id)
    except (ClassGone, StoreDown):
        return []


def _live_tally(code: str, question: Question) -> None:
    @st.fragment(run_every=TALLY_EVERY_S)
    def live() -> None:
        counts = _tally(code, question)
        if not counts:
            return
        labels = [choice_label(question, i) for i in range(len(question.choices))]
        fig = tally_figure(labels, counts, look(), None)
        st.plotly_chart(fig, key=view.key(view.CLASS_ASK, "tally"), config={"displaylogo": False})

    live()


def _close(code: str, secret: str, question_id: str) -> None:
    """No more answers; the question and its tally leave every screen (the CSV keeps them)."""
    _teacher_call(lambda: class_store().close(code, secret, question_id))


def _reveal(code: str, secret: str, question: Question) -> None:
    """Everyone sees the model's answer; the teacher's screen, and with it every follower's, goes to the view
    that proves it. A whole run's button (not a fragment's): the switch happens before the page draws."""
    if not _teacher_call(lambda: class_store().reveal(code, secret, question.id)):
        st.rerun()                            # the notice says why, over the same page
    view.pop(CLASS_SHOW_JOIN)            # the toggle is drawn: its state can go, not change
    go_to(question.page, question.query, personal_params())   # the view asked about, in every picker too
