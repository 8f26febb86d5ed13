"""The shared sidebar (model, sentence, reference, upload, decoding settings) and the notices above every
page. sidebar() draws the widgets and returns what was chosen (viz/frame/choice.Choice) and where its results go;
viz/frame/choice.build_context makes the pages' Context from the choice; show_result writes the translation and
the trace download into the sidebar."""
from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from typing import Any

import streamlit as st

from model.io.checkpoint import CheckpointError
from model.io.language import not_english
from viz.frame.choice import Choice
from viz.services.models import DEFAULT_STYLE, device_label, max_tokens_bounds, model_view
from viz.services.presets import preset_groups, presets, presets_refused, reference_of
from viz.services.traces import trace_npz
from viz.core import view
from viz.core.context import Context
from viz.core.view import MAX_TEXT_CHARS, whole_number_box
from viz.core.i18n import DEFAULT_LANG, LANGS, STYLE_KEYS, catalogue_keys, error_text, t, tn
from viz.core.text import plain
from viz.core.upload import UploadError, parse_upload

OWN = view.Own("viz.frame.sidebar")  # this module's own session values
TEXT_CUT_FROM = OWN.value("_text_cut_from")       # the sentence a link's too long text was cut from
LANG_DRAWN = OWN.value("_lang_drawn")             # the language the sidebar was last drawn in

PRESET_GROUPS = ("everyday", "well", "struggles")   # groups of presets.txt with a mark in the picker


# Catalogue keys (viz/locales), written out so that a test finds every key in use.
SIDEBAR_EXAMPLES_KEYS = catalogue_keys("sidebar.examples", "everyday", "struggles", "well")


def start_view(models: list[str], notices: list[str]) -> None:
    """The sidebar's values the view does not hold yet come from the link (deep links), each checked once; a
    value the view holds is kept (also when its widget's state was dropped)."""
    view.start(view.LANG, notices, default=browser_lang())
    if not models:
        return
    model = view.start(view.MODEL, notices, choices=models, default=models[0])
    view.start(view.TEXT, notices, default=presets(model)[0])
    view.start(view.TARGET, notices)
    lo, default, hi = max_tokens_bounds()
    view.start(view.BEAM, notices)
    view.start(view.MAX_TOKENS, notices, default=default, lo=lo, hi=hi)
    view.start(view.STYLE, notices, choices=list(STYLE_KEYS), default=DEFAULT_STYLE)


def browser_lang() -> str:
    """The reader's language when the link names none: their browser's (st.context.locale, e.g. zh-CN), if the
    app speaks it, else English."""
    locale = st.context.locale
    lang = locale.split("-")[0].lower() if isinstance(locale, str) else ""
    return lang if lang in LANGS else DEFAULT_LANG


def _use_preset() -> None:
    """The example becomes the sentence; a test-split verse brings its reference (teacher forcing shows at
    once), any other example clears the reference of the sentence before."""
    sentence = view.get(view.PRESET)
    if sentence is None:                               # the picker emptied: the sentence stays
        return
    view.put(view.TEXT, sentence)
    view.put(view.TARGET, reference_of(view.get(view.MODEL), sentence) or "")


def _use_uploaded() -> None:
    if view.get(view.UPLOADED) is None:
        return
    view.put(view.TEXT, view.get(view.UPLOADED))
    _cut_long_text()                                   # a file's line obeys the limit a paste does


def _on_model_change() -> None:
    view.put(view.TEXT, presets(view.get(view.MODEL))[0])
    view.put(view.TARGET, "")


@dataclass
class Slots:
    """Places in the sidebar filled once the sentence is traced (show_result)."""
    translation: Any
    download: Any


def sidebar(models: list[str], notices: list[str]) -> tuple[Choice, Slots] | None:
    """The widgets, synced with the URL; what was chosen and where its results go, or None (with the error
    shown) when the chosen model does not load."""
    sb = st.sidebar
    model_id = sb.selectbox(t("sidebar.model"), models, key=view.bind(view.MODEL), on_change=_on_model_change,
                            help=t("sidebar.model.help"))
    view.keep(view.MODEL, model_id)
    try:
        with st.spinner(t("spinner.load")):
            model = model_view(model_id)
    except CheckpointError as e:
        sb.error(plain(t("sidebar.model.broken", error=e), limit=600))
        return None
    text = sb.text_area(t("sidebar.sentence"), key=view.bind(view.TEXT), height=90, on_change=_cut_long_text,
                        help=t("sidebar.sentence.help", limit=f"{MAX_TEXT_CHARS:,}")) or ""
    view.keep(view.TEXT, text)
    style = _style_picker(sb, model.tokenizer)
    translation_slot = sb.container()
    group_of = {s: g for g, sentences in preset_groups(model_id).items() for s in sentences}
    marks = {g: t(SIDEBAR_EXAMPLES_KEYS[g]) for g in PRESET_GROUPS}
    sb.selectbox(t("sidebar.examples"), list(group_of), key=view.key(view.PRESET), on_change=_use_preset, index=None,
                 placeholder=t("sidebar.examples.placeholder"), format_func=lambda s: marks.get(group_of[s], "") + s,
                 help=t("sidebar.examples.help"))
    refused = presets_refused(model_id)
    if refused:
        sb.caption(plain(t("sidebar.examples.refused", error=refused), limit=400))
    _upload_picker(sb)
    target = sb.text_input(t("sidebar.reference"), key=view.bind(view.TARGET), help=t("sidebar.reference.help"),
                           max_chars=MAX_TEXT_CHARS) or ""
    view.keep(view.TARGET, target)
    lo, default_max, hi = max_tokens_bounds()
    c1, c2 = sb.columns(2)                     # NaN or 64 sent for a box: said, neither a crash nor greedy
    view.bind(view.BEAM)
    beam = whole_number_box(c1, t("sidebar.beam"), 1, 8, view.BEAM, 1, notices, help=t("sidebar.beam.help"))
    view.keep(view.BEAM, beam)
    view.bind(view.MAX_TOKENS)
    max_tokens = whole_number_box(c2, t("sidebar.max_tokens"), lo, hi, view.MAX_TOKENS, default_max, notices,
                                  help=t("sidebar.max_tokens.help"))
    view.keep(view.MAX_TOKENS, max_tokens)
    sb.radio(t("sidebar.image_format"), ["PNG", "SVG"], key=view.key(view.IMAGE_FORMAT), horizontal=True,
             help=t("sidebar.image_format.help"))
    download_slot = sb.container()
    sb.caption(t("sidebar.device", device=device_label(model_id)))
    view.write_url({view.MODEL: model_id, view.TEXT: text.strip() or None, view.TARGET: (target or "").strip() or None,
                    view.BEAM: beam if beam != 1 else None,
                    view.MAX_TOKENS: max_tokens if max_tokens != default_max else None,
                    view.STYLE: style if style not in (None, DEFAULT_STYLE) else None})
    cut_from = view.pop(TEXT_CUT_FROM)
    if cut_from:
        notices.append(t("notice.text_cut_paste", n=f"{cut_from:,}", limit=f"{MAX_TEXT_CHARS:,}"))
    if _not_english_notice(model.tokenizer, text):
        notices.append(_not_english_notice(model.tokenizer, text))
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
    view.bind(view.STYLE)
    if view.get(view.STYLE) not in styles:
        view.put(view.STYLE, tokenizer.default_style)
    style = sb.segmented_control(t("sidebar.style"), styles, key=view.key(view.STYLE), required=True,
                                 format_func=lambda s: t(STYLE_KEYS[s]), help=t("sidebar.style.help"))
    view.keep(view.STYLE, style)
    return style


def _cut_long_text() -> None:
    """A paste longer than the limit is cut here and said on the page (a text box's max_chars would drop it
    silently, keeping the old sentence)."""
    text = view.get(view.TEXT) or ""
    if len(text) > MAX_TEXT_CHARS:
        view.put(view.TEXT, text[:MAX_TEXT_CHARS])
        view.put(TEXT_CUT_FROM, len(text))


def _upload_picker(sb) -> None:
    upload = sb.file_uploader(t("sidebar.upload"), type=["txt", "csv"], key=view.key(view.UPLOAD))
    if upload is None:
        return
    try:
        sentences = parse_upload(upload.name, upload.getvalue())
    except UploadError as e:
        sb.warning(f"{plain(upload.name)}: {plain(error_text(e))}")
        return
    chosen = sb.selectbox(tn("sidebar.upload.count", len(sentences)), sentences, key=view.key(view.UPLOADED),
                          index=None, placeholder=t("sidebar.upload.placeholder"), on_change=_use_uploaded,
                          format_func=lambda s: s[:80])
    if chosen is None:                  # nothing changes until a sentence is picked: say so where the eye is
        sb.info(t("sidebar.upload.pick"))


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
        model_limit = min(max_tokens_bounds()[2], ctx.model.config.max_len)  # the model's max_len may bind first
        hint = (t("notice.truncated.raise", limit=model_limit) if ctx.max_tokens < model_limit
                else t("notice.truncated.max", limit=model_limit))
        st.warning(t("notice.truncated", n=trace.meta["src_n_tokens"], used=len(trace.meta["src_ids"]), hint=hint))
    if trace.meta["teacher_forced"]:
        st.caption(t("notice.teacher_forced"))


def language_picker() -> None:
    """English / 中文 at the top of the sidebar; `lang=zh` in the URL (English, the default, is left out)."""
    view.bind(view.LANG)
    if view.get(view.LANG) not in LANGS:
        view.put(view.LANG, DEFAULT_LANG)
    lang = st.sidebar.segmented_control(t("lang.label"), list(LANGS), key=view.key(view.LANG), format_func=LANGS.get,
                                        required=True, label_visibility="collapsed")
    view.keep(view.LANG, lang)
    if view.get(LANG_DRAWN, default=lang) != lang:
        keep_choices_across_languages()
    view.put(LANG_DRAWN, lang)
    view.write_url({view.LANG: None if lang == DEFAULT_LANG else lang})


def keep_choices_across_languages() -> None:
    """Streamlit keeps a radio's or select box's choice as the text of its label, so after a switch to 中文 the
    radio groups showed no selection (the English label is not among the Chinese ones), though the chart kept
    its view. Each widget's choice is read back (an option id, through the last run's labels) and set again,
    so the widget sends it in the new language's labels. Buttons, uploads and anything else that cannot be
    set are left alone."""
    for key in view.session_keys():
        if key == view.key(view.LANG) or key.startswith(("_", "$$", "view:", "memo:")):
            continue
        try:
            value = view.raw(key)
            if isinstance(value, (str, int)) and not isinstance(value, bool):
                view.put_raw(key, value)
        except Exception:   # noqa: BLE001 - a widget whose value cannot be read or set keeps its own
            continue


NOT_ENGLISH_KEYS = catalogue_keys("notice.not_english", "cjk", "emoji", "other")   # language.KINDS


def _not_english_notice(tokenizer, text: str) -> str | None:
    """A model that reads English given Chinese or emoji translates it anyway, into nonsense: said, not refused."""
    kind = not_english(text) if tokenizer.reads_english else None
    return None if kind is None else t("notice.not_english", what=t(NOT_ENGLISH_KEYS[kind]))
