"""Page state: the current Context (model, sentence, trace) and the view's URL query parameters.

Everything a page needs about "what is being looked at" comes from `current()`, which app.py fills
once per run from the sidebar (models and traces come from viz/services.py). Pages read it; they
never load models themselves.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Callable, Hashable

import streamlit as st

from model.capture.trace import Trace
from model.errors import InputError
from viz.i18n import DEFAULT_LANG, t
from viz.text import plain

MAX_TEXT_CHARS = 5000

@dataclass
class Context:
    """What the shared sidebar chose for this run."""
    model_id: str
    bundle: Any               # a model.inference.pipeline.Engine (viz/services.load_bundle)
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
        return self.bundle.tokenizer.styled(self.text.strip(), self.style)

    @property
    def trace_key(self) -> tuple[str, str, str | None, int, int]:
        """What this view's trace is cached by (viz/services get_trace, trace_npz, the lesson, attribution):
        model, the sentence as the model reads it, the reference (stripped; None when empty), beam, max tokens."""
        return self.model_id, self.source, (self.target or "").strip() or None, self.beam, self.max_tokens


def set_current(ctx: Context | None) -> None:
    st.session_state["_ctx"] = ctx


def current() -> Context | None:
    return st.session_state.get("_ctx")


# -- URL query parameters -------------------------------------------------------------------------
def carried_params() -> dict:
    """What a link to another page carries so that it opens on the same input (also in a new tab): the sidebar's
    model, sentence and reference, the style when not the model's default (as the sidebar writes it in the URL),
    the language when not English, and presenter mode."""
    lang = st.session_state.get("lang")
    params = {"model": st.session_state.get("model"), "text": (st.session_state.get("text") or "").strip(),
              "target": (st.session_state.get("target") or "").strip(), "style": st.query_params.get("style"),
              "lang": lang if lang != DEFAULT_LANG else None,
              "present": "1" if st.session_state.get("presenter") else None}
    return {k: v for k, v in params.items() if v}


def qp_str(name: str, default: str | None = None, max_len: int = MAX_TEXT_CHARS) -> str | None:
    value = st.query_params.get(name)
    if value is None:
        return default
    return str(value)[:max_len]


def _notice(message: str, notices: list[str] | None) -> None:
    """Collect for the header (sidebar parameters) or show in place (page parameters)."""
    if notices is None:
        st.warning(plain(message, limit=600))  # quotes the raw parameter: no Markdown links from a URL
    else:
        notices.append(message)


MAX_DIGITS = 18   # every number a page takes is far smaller; int() refuses over 4,300 digits (a crash)


def whole_number(text: str) -> int | None:
    """'12', '-3' -> int; None for anything else, including what int() also takes ('1_0', '１', '٣') and
    more than MAX_DIGITS digits (no page takes such a number; int() would raise on 4,301)."""
    text = text.strip()
    if not re.fullmatch(r"[+-]?[0-9]{1,%d}" % MAX_DIGITS, text):
        return None
    return int(text)


def qp_int(name: str, default: int, lo: int, hi: int, notices: list[str] | None = None) -> int:
    """An integer parameter in [lo, hi]; anything else falls back to the default with a notice."""
    raw = st.query_params.get(name)
    if raw is None:
        return default
    value = whole_number(str(raw))
    if value is None or not lo <= value <= hi:
        _notice(t("url.not_int", name=name, raw=repr(str(raw)[:40]), lo=lo, hi=hi, default=default), notices)
        return default
    return value


def qp_choice(name: str, choices: list[str], default: str, notices: list[str] | None = None) -> str:
    raw = st.query_params.get(name)
    if raw is None:
        return default
    if raw not in choices:
        _notice(t("url.not_choice", name=name, raw=repr(str(raw)[:40]), choices=", ".join(choices), default=default),
                notices)
        return default
    return raw


def set_query(**params) -> None:
    """Write the current view into the URL (None removes a parameter)."""
    for key, value in params.items():
        if value is None or value == "":
            if key in st.query_params:
                del st.query_params[key]
        elif st.query_params.get(key) != str(value):
            st.query_params[key] = str(value)


def session_memo(name: str, key: Hashable, compute: Callable[[], Any] | None = None) -> Any:
    """This session's result of a slow computation with a progress bar (corpus statistics, head ranking,
    flow), kept per session since it is one student's. With `compute`, it runs when `key` changed;
    returns the result kept for `key`, or None."""
    stored = st.session_state.get(name)
    if compute is not None and (stored is None or stored[0] != key):
        stored = (key, compute())
        st.session_state[name] = stored
    return stored[1] if stored is not None and stored[0] == key else None


def parse_index_list(raw: str, lo: int, hi: int, max_items: int = 8) -> list[int]:
    """'0,1,8,9' -> [0, 1, 8, 9]; each in [lo, hi], unique, at most max_items. InputError otherwise."""
    parts = [p.strip() for p in str(raw).split(",") if p.strip()]
    if not parts:
        raise InputError("no_numbers", "no numbers given")
    if len(parts) > max_items:
        raise InputError("too_many_numbers", f"at most {max_items} numbers, got {len(parts)}", limit=max_items,
                         n=len(parts))
    values = [whole_number(p) for p in parts]
    if None in values:
        raise InputError("not_numbers", f"{raw[:40]!r} is not a comma-separated list of whole numbers",
                         raw=repr(raw[:40]))
    bad = [v for v in values if not lo <= v <= hi]
    if bad:
        raise InputError("out_of_range", f"{bad[0]} is outside {lo}…{hi}", value=bad[0], lo=lo, hi=hi)
    return list(dict.fromkeys(values))


# -- whole-number boxes: what a browser sends is checked like a URL value ---------------------------------------
def number_box_value(key: str, lo: int, hi: int) -> int | None:
    """The whole number a number box keyed `key` holds, or None when the browser sent something outside
    lo..hi: NaN and infinity (Streamlit's int() raised on them: the page crashed) or a number out of range
    (Streamlit quietly used the box's default: beam 64 became greedy). Only a client that skips the page's
    own box sends one. Boxes built with value=None hold None for out of range, so it can be told apart."""
    try:
        value = st.session_state.get(key)
    except (ValueError, OverflowError):
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value != value or value % 1:
        return None
    return int(value) if lo <= value <= hi else None


def whole_number_box(container, label: str, lo: int, hi: int, key: str, default: int,
                     notices: list[str] | None = None, **kwargs) -> int:
    """st.number_input for a whole number in lo..hi that no browser can break: a float box (value=None,
    step 1, shown without decimals) so that Streamlit itself never calls int() on NaN, and what it sent
    outside lo..hi is replaced by the last good value with a notice (check_number_box)."""
    check_number_box(key, label, lo, hi, default, notices)
    value = container.number_input(label, float(lo), float(hi), value=None, step=1.0, format="%.0f", key=key,
                                   **kwargs)
    value = default if value is None else int(value)
    remember_number_box(key, value)
    return value


def check_number_box(key: str, name: str, lo: int, hi: int, default: int, notices: list[str] | None = None) -> None:
    """Before the number box keyed `key` (built with value=None): a value the browser sent outside lo..hi is
    replaced by the box's last good value (else `default`) and said with the same notice as a URL value."""
    good = f"_good:{key}"
    try:
        present = key in st.session_state
    except (ValueError, OverflowError):        # `in` reads the value: NaN raised there too
        present = True
    if present and number_box_value(key, lo, hi) is None:
        kept = st.session_state.get(good, default)
        st.session_state[key] = kept
        _notice(t("url.not_int_box", name=name, lo=lo, hi=hi, default=kept), notices)


def remember_number_box(key: str, value) -> None:
    """After the box: its value is the last good one (check_number_box restores it)."""
    st.session_state[f"_good:{key}"] = value
