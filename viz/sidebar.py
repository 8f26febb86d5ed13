"""The shared sidebar (model, sentence, reference, upload, decoding settings) and the notices above every
page. sidebar() draws the widgets and returns what was chosen (viz/context.Choice) and where its results go;
viz/context.build_context makes the pages' Context from the choice; show_result writes the translation and
the trace download into the sidebar."""
from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from typing import Any

import streamlit as st

from model.io.checkpoint import CheckpointError
from viz.context import Choice
from viz.services import (DEFAULT_STYLE, device_label, load_bundle, max_tokens_bounds, preset_groups, presets,
                          reference_of, trace_npz)
from viz.state import MAX_TEXT_CHARS, Context, qp_choice, qp_int, qp_str, set_query, whole_number_box
from viz.i18n import DEFAULT_LANG, LANGS, STYLE_KEYS, error_text, t, tn
from viz.text import plain
from viz.upload import UploadError, parse_upload

PRESET_GROUPS = ("everyday", "well", "struggles")   # groups of presets.txt with a mark in the picker


# Catalogue keys (viz/locales), written out so that a test finds every key in use.
SIDEBAR_EXAMPLES_KEYS = {
    "everyday": "sidebar.examples.everyday", "struggles": "sidebar.examples.struggles",
    "well": "sidebar.examples.well"
}


def init_from_url(models: list[str], notices: list[str]) -> None:
    """First run of a session: widgets start from the URL (deep links)."""
    if st.session_state.get("_url_read"):
        return
    st.session_state["_url_read"] = True
    st.session_state["lang"] = qp_choice("lang", list(LANGS), DEFAULT_LANG, notices)
    if not models:
        return
    model = qp_choice("model", models, models[0], notices)
    st.session_state["model"] = model
    text = _url_text("text", "notice.text_cut_link", notices)
    st.session_state["text"] = text if text is not None else presets(model)[0]
    st.session_state["target"] = _url_text("target", "notice.target_cut_link", notices) or ""
    lo, default, hi = max_tokens_bounds()
    st.session_state["beam"] = qp_int("beam", 1, 1, 8, notices)
    st.session_state["max_tokens"] = qp_int("max_tokens", default, lo, hi, notices)
    st.session_state["style"] = qp_choice("style", list(STYLE_KEYS), DEFAULT_STYLE, notices)


def _url_text(name: str, cut_notice: str, notices: list[str]) -> str | None:
    """A sentence from the link (None when absent), cut to MAX_TEXT_CHARS; a cut one is said."""
    text = qp_str(name)
    if text is not None and len(text) >= MAX_TEXT_CHARS:
        notices.append(t(cut_notice, limit=MAX_TEXT_CHARS))
    return text


def _use_preset() -> None:
    """The example becomes the sentence; a test-split verse brings its reference (teacher forcing shows at
    once), any other example clears the reference of the sentence before."""
    sentence = st.session_state["preset"]
    st.session_state["text"] = sentence
    if sentence is not None:
        st.session_state["target"] = reference_of(st.session_state["model"], sentence) or ""


def _use_uploaded() -> None:
    st.session_state["text"] = st.session_state["uploaded_sentence"]
    _cut_long_text()                                   # a file's line obeys the limit a paste does


def _on_model_change() -> None:
    st.session_state["text"] = presets(st.session_state["model"])[0]
    st.session_state["target"] = ""


@dataclass
class Slots:
    """Places in the sidebar filled once the sentence is traced (show_result)."""
    translation: Any
    download: Any


def sidebar(models: list[str], notices: list[str]) -> tuple[Choice, Slots] | None:
    """The widgets, synced with the URL; what was chosen and where its results go, or None (with the error
    shown) when the chosen model does not load."""
    sb = st.sidebar
    model_id = sb.selectbox(t("sidebar.model"), models, key="model", on_change=_on_model_change,
                            help=t("sidebar.model.help"))
    try:
        with st.spinner(t("spinner.load")):
            bundle = load_bundle(model_id)
    except CheckpointError as e:
        sb.error(plain(t("sidebar.model.broken", error=e), limit=600))
        return None
    text = sb.text_area(t("sidebar.sentence"), key="text", height=90, on_change=_cut_long_text,
                        help=t("sidebar.sentence.help", limit=f"{MAX_TEXT_CHARS:,}"))
    style = _style_picker(sb, bundle.tokenizer)
    translation_slot = sb.container()
    group_of = {s: g for g, sentences in preset_groups(model_id).items() for s in sentences}
    marks = {g: t(SIDEBAR_EXAMPLES_KEYS[g]) for g in PRESET_GROUPS}
    sb.selectbox(t("sidebar.examples"), list(group_of), key="preset", on_change=_use_preset, index=None,
                 placeholder=t("sidebar.examples.placeholder"), format_func=lambda s: marks.get(group_of[s], "") + s,
                 help=t("sidebar.examples.help"))
    _upload_picker(sb)
    target = sb.text_input(t("sidebar.reference"), key="target", help=t("sidebar.reference.help"),
                           max_chars=MAX_TEXT_CHARS)
    lo, _, hi = max_tokens_bounds()
    c1, c2 = sb.columns(2)                     # NaN or 64 sent for a box: said, neither a crash nor greedy
    beam = whole_number_box(c1, t("sidebar.beam"), 1, 8, "beam", 1, notices, help=t("sidebar.beam.help"))
    max_tokens = whole_number_box(c2, t("sidebar.max_tokens"), lo, hi, "max_tokens", max_tokens_bounds()[1], notices,
                                  help=t("sidebar.max_tokens.help"))
    sb.radio(t("sidebar.image_format"), ["PNG", "SVG"], key="image_format", horizontal=True,
             help=t("sidebar.image_format.help"))
    download_slot = sb.container()
    sb.caption(t("sidebar.device", device=device_label(model_id)))
    set_query(model=model_id, text=text.strip() or None, target=(target or "").strip() or None,
              beam=beam if beam != 1 else None, max_tokens=max_tokens if max_tokens != max_tokens_bounds()[1] else None,
              style=style if style not in (None, DEFAULT_STYLE) else None)
    cut_from = st.session_state.pop("_text_cut_from", None)
    if cut_from:
        notices.append(t("notice.text_cut_paste", n=f"{cut_from:,}", limit=f"{MAX_TEXT_CHARS:,}"))
    choice = Choice(model_id, text, (target or "").strip() or None, int(beam), int(max_tokens), style)
    return choice, Slots(translation_slot, download_slot)


def show_result(ctx: Context, slots: Slots) -> None:
    """The model's translation under the sentence and the trace's download, once the sentence is traced."""
    if ctx.trace is None:
        return
    slots.translation.caption(t("sidebar.translation.beam", beam=ctx.beam) if ctx.beam > 1
                              else t("sidebar.translation.greedy"))
    slots.translation.text(ctx.trace.meta["translation"] or t("sidebar.translation.empty"))
    slots.download.download_button(
        t("sidebar.npz"), key="trace-npz", on_click="ignore", icon=":material/download:",
        data=partial(trace_npz, *ctx.trace_key),
        file_name=f"trace-{ctx.model_id}.npz", mime="application/octet-stream",
        help=t("sidebar.npz.help"))


def _style_picker(sb, tokenizer) -> str | None:
    """Which Spanish a two-style model writes (its style token leads the source); None for a one-style model."""
    styles = tokenizer.styles
    if not styles:
        return None
    if st.session_state.get("style") not in styles:
        st.session_state["style"] = tokenizer.default_style
    return sb.segmented_control(t("sidebar.style"), styles, key="style", required=True,
                                format_func=lambda s: t(STYLE_KEYS[s]), help=t("sidebar.style.help"))


def _cut_long_text() -> None:
    """A paste longer than the limit is cut here and said on the page (a text box's max_chars would drop it
    silently, keeping the old sentence)."""
    text = st.session_state["text"]
    if len(text) > MAX_TEXT_CHARS:
        st.session_state["text"] = text[:MAX_TEXT_CHARS]
        st.session_state["_text_cut_from"] = len(text)


def _upload_picker(sb) -> None:
    upload = sb.file_uploader(t("sidebar.upload"), type=["txt", "csv"], key="upload")
    if upload is None:
        return
    try:
        sentences = parse_upload(upload.name, upload.getvalue())
    except UploadError as e:
        sb.warning(f"{plain(upload.name)}: {plain(error_text(e))}")
        return
    chosen = sb.selectbox(tn("sidebar.upload.count", len(sentences)), sentences, key="uploaded_sentence", index=None,
                          placeholder=t("sidebar.upload.placeholder"), on_change=_use_uploaded,
                          format_func=lambda s: s[:80])
    if chosen is None:                  # nothing changes until a sentence is picked: say so where the eye is
        sb.info(t("sidebar.upload.pick"))


def uploaded_file():
    """The file uploaded in the sidebar (a Streamlit UploadedFile), or None: Head analysis averages over it."""
    return st.session_state.get("upload")


def header(ctx: Context) -> None:
    """Notices on top of the page (the translation stays in view in the sidebar, under the sentence)."""
    for notice in ctx.notices:
        st.warning(plain(notice, limit=600))  # notices may quote the user's text
    trace = ctx.trace
    if trace is None:
        if not ctx.text.strip():
            st.info(t("notice.empty"))
        return
    if trace.meta["src_truncated"]:
        model_limit = min(max_tokens_bounds()[2], ctx.bundle.config.max_len)  # the model's max_len may bind first
        hint = (t("notice.truncated.raise", limit=model_limit) if ctx.max_tokens < model_limit
                else t("notice.truncated.max", limit=model_limit))
        st.warning(t("notice.truncated", n=trace.meta["src_n_tokens"], used=len(trace.meta["src_ids"]), hint=hint))
    if trace.meta["teacher_forced"]:
        st.caption(t("notice.teacher_forced"))


def language_picker() -> None:
    """English / 中文 at the top of the sidebar; `lang=zh` in the URL (English, the default, is left out)."""
    if st.session_state.get("lang") not in LANGS:
        st.session_state["lang"] = DEFAULT_LANG
    lang = st.sidebar.segmented_control(t("lang.label"), list(LANGS), key="lang", format_func=LANGS.get,
                                        required=True, label_visibility="collapsed")
    if st.session_state.get("_lang_drawn", lang) != lang:
        keep_choices_across_languages()
    st.session_state["_lang_drawn"] = lang
    set_query(lang=None if lang == DEFAULT_LANG else lang)


def keep_choices_across_languages() -> None:
    """Streamlit keeps a radio's or select box's choice as the text of its label, so after a switch to 中文 the
    radio groups showed no selection (the English label is not among the Chinese ones), though the chart kept
    its view. Each widget's choice is read back (an option id, through the last run's labels) and set again,
    so the widget sends it in the new language's labels. Buttons, uploads and anything else that cannot be
    set are left alone."""
    for key in list(st.session_state):
        key = str(key)
        if key == "lang" or key.startswith(("_", "$$")):
            continue
        try:
            value = st.session_state[key]
            if isinstance(value, (str, int)) and not isinstance(value, bool):
                st.session_state[key] = value
        except Exception:   # noqa: BLE001 - a widget whose value cannot be read or set keeps its own
            continue
