"""The shared sidebar (model, sentence, reference, upload, decoding settings) and the notices above every
page. It fills the Context that pages read (viz/state.current())."""
from __future__ import annotations

from functools import partial

import streamlit as st

from model.io.checkpoint import CheckpointError
from viz.services import get_trace, load_bundle, max_tokens_bounds, preset_groups, presets, trace_npz
from viz.state import MAX_TEXT_CHARS, Context, qp_choice, qp_int, qp_str, set_query
from viz.text import plain
from viz.upload import UploadError, parse_upload

PRESET_GROUPS = {"well": "✓ translates well · ", "struggles": "✗ everyday, struggles · "}


def init_from_url(models: list[str], notices: list[str]) -> None:
    """First run of a session: widgets start from the URL (deep links)."""
    if st.session_state.get("_url_read"):
        return
    st.session_state["_url_read"] = True
    model = qp_choice("model", models, models[0], notices)
    st.session_state["model"] = model
    text = qp_str("text")
    if text is not None and len(text) >= MAX_TEXT_CHARS:
        notices.append(f"The sentence in the link was cut to {MAX_TEXT_CHARS} characters.")
    st.session_state["text"] = text if text is not None else presets(model)[0]
    st.session_state["target"] = qp_str("target", "")
    lo, default, hi = max_tokens_bounds()
    st.session_state["beam"] = qp_int("beam", 1, 1, 8, notices)
    st.session_state["max_tokens"] = qp_int("max_tokens", default, lo, hi, notices)


def _use_preset() -> None:
    st.session_state["text"] = st.session_state["preset"]


def _use_uploaded() -> None:
    st.session_state["text"] = st.session_state["uploaded_sentence"]


def _on_model_change() -> None:
    st.session_state["text"] = presets(st.session_state["model"])[0]
    st.session_state["target"] = ""


def sidebar(models: list[str], notices: list[str]) -> Context | None:
    sb = st.sidebar
    model_id = sb.selectbox("Model", models, key="model", on_change=_on_model_change,
                            help="Folders under pretrained/ (model.safetensors + config.json + tokenizer.json).")
    try:
        bundle = load_bundle(model_id)
    except CheckpointError as e:
        sb.error(plain(f"This model cannot be loaded: {e}", limit=600))
        return None
    text = sb.text_area("Sentence", key="text", height=90, on_change=_cut_long_text,
                        help=f"At most {MAX_TEXT_CHARS:,} characters; a longer paste is cut, and the page says so.")
    translation_slot = sb.container()
    group_of = {s: g for g, sentences in preset_groups(model_id).items() for s in sentences}
    sb.selectbox("Example sentences", list(group_of), key="preset", on_change=_use_preset, index=None,
                 placeholder="Pick an example…", format_func=lambda s: f"{PRESET_GROUPS.get(group_of[s], '')}{s}",
                 help="Chosen by measuring the model (python -m model.cli examples): held-out verses it translates "
                      "well, and everyday sentences where a class can watch it struggle.")
    _upload_picker(sb)
    target = sb.text_input("Reference translation (optional)", key="target",
                           help="Given a reference, the decoder is teacher-forced on it; otherwise it reads its own "
                                "generated output.", max_chars=MAX_TEXT_CHARS)
    lo, _, hi = max_tokens_bounds()
    c1, c2 = sb.columns(2)
    beam = c1.number_input("Beam size", 1, 8, key="beam", help="1 = greedy decoding")
    max_tokens = c2.number_input("Token limit", lo, hi, key="max_tokens", help="Longer inputs are cut.")
    sb.radio("Figure download format", ["PNG", "SVG"], key="image_format", horizontal=True,
             help="Used by the camera button on every chart.")
    download_slot = sb.container()
    set_query(model=model_id, text=text.strip() or None, target=(target or "").strip() or None,
              beam=beam if beam != 1 else None, max_tokens=max_tokens if max_tokens != max_tokens_bounds()[1] else None)
    cut_from = st.session_state.pop("_text_cut_from", None)
    if cut_from:
        notices.append(f"The sentence had {cut_from:,} characters; it was cut to the first {MAX_TEXT_CHARS:,}.")
    ctx = Context(model_id, bundle, text, target or None, int(beam), int(max_tokens), None, notices)
    if not text.strip():
        return ctx
    try:
        ctx.trace = get_trace(model_id, text.strip(), (target or "").strip() or None, int(beam), int(max_tokens))
    except ValueError as e:
        notices.append(f"The model could not read this input: {e}")
        return ctx
    translation_slot.caption("Model translation" + (f" (beam {beam})" if beam > 1 else " (greedy)"))
    translation_slot.text(ctx.trace.meta["translation"] or "(empty output)")
    download_slot.download_button(
        "Download the whole trace (.npz)", key="trace-npz", on_click="ignore", icon=":material/download:",
        data=partial(trace_npz, model_id, text.strip(), (target or "").strip() or None, int(beam), int(max_tokens)),
        file_name=f"trace-{model_id}.npz", mime="application/octet-stream",
        help="Every captured array under its hook name, plus the tokens and config (docs/trace-format.md).")
    return ctx


def _cut_long_text() -> None:
    """A paste longer than the limit is cut here and said on the page (a text box's max_chars would drop it
    silently, keeping the old sentence)."""
    text = st.session_state["text"]
    if len(text) > MAX_TEXT_CHARS:
        st.session_state["text"] = text[:MAX_TEXT_CHARS]
        st.session_state["_text_cut_from"] = len(text)


def _upload_picker(sb) -> None:
    upload = sb.file_uploader("…or pick from a file (.txt, one per line; .csv with a 'text' column)",
                              type=["txt", "csv"], key="upload")
    if upload is None:
        return
    try:
        sentences = parse_upload(upload.name, upload.getvalue())
    except UploadError as e:
        sb.warning(f"{plain(upload.name)}: {e}")
        return
    sb.selectbox(f"{len(sentences)} sentences in the file", sentences, key="uploaded_sentence", index=None,
                 placeholder="Choose one…", on_change=_use_uploaded, format_func=lambda s: s[:80])


def header(ctx: Context) -> None:
    """Notices on top of the page (the translation stays in view in the sidebar, under the sentence)."""
    for notice in ctx.notices:
        st.warning(plain(notice, limit=600))  # notices may quote the user's text
    trace = ctx.trace
    if trace is None:
        if not ctx.text.strip():
            st.info("The sentence is empty: type one in the sidebar, or pick an example.")
        return
    if trace.meta["src_truncated"]:
        model_limit = min(max_tokens_bounds()[2], ctx.bundle.config.max_len)  # the model's max_len may bind first
        hint = (f"raise the token limit in the sidebar, up to {model_limit}" if ctx.max_tokens < model_limit
                else f"this model reads at most {model_limit} tokens")
        st.warning(f"The input has {trace.meta['src_n_tokens']} tokens; only the first "
                   f"{len(trace.meta['src_ids'])} are used ({hint}).")
    if trace.meta["teacher_forced"]:
        st.caption("Decoder maps are teacher-forced on your reference translation.")
