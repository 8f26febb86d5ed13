"""The view: every value the pages share, declared once (its type, default, bounds and URL name), and the one
way to read it from a link, check it, keep it in the session, bind it to a widget and write it back to the URL.

Nothing else in viz/ touches `st.session_state` or `st.query_params` (tests/test_architecture.py). A page
names a value by its declaration (`view.get(view.TOUR_STEP)`), never by a string key.

The sidebar's values (model, sentence, reference, style, beam, max tokens, language, presenter mode) are
kept twice: in their widget's key, which Streamlit drops whenever a finished run did not draw the widget (a
click on the menu before the sidebar had drawn), and in a key of the view's own that no widget owns, from
which bind() gives the widget its value back. A value that is in neither is read from the link, each value on
its own, so no run can leave one half set.

`View` is the whole view as a plain value: the page and every declared value it holds. It can be compared,
written as URL parameters (`View.query()`), read from them (`View.from_query`) and applied to a session.

Where a value is declared: here, the shared view (every value a link or a class's view carries: each URL value,
since View.from_query must know every URL name in a process that never ran the page) and what two or more modules
keep in the session; in the one module that uses it, a value only it keeps in the session (`Own`: its namespace).

A value's names: its declaration (`view.HEAD`, the only name code uses), its URL name (`Value.name`, "head"), its
session key (`Value.session_key`: the URL name unless `key=` says otherwise) and, for a widget bound to it or to
one of its parts, that key or `key(value, *parts)` ("step-encoder-head": the step-through page's head picker of
the encoder). A head picker's -1 is the mean of the heads (`MEAN_HEAD`; None to a page that reads one head).
"""
from __future__ import annotations

import functools
import inspect
import re
import threading
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any, Callable, Hashable, Mapping
from urllib.parse import urlencode

import streamlit as st

from model.errors import InputError
from viz.core.catalogue import DEFAULT_LANG, LANGS, message
from viz.core.text import plain

MAX_TEXT_CHARS = 5000
MAX_DIGITS = 18   # every number a page takes is far smaller; int() refuses over 4,300 digits (a crash)
_UNSET = object()
_STORE = "view:"  # prefix of the view's own session keys (no widget has one)


@dataclass(frozen=True)
class Value:
    """One value of the view. `name` is its URL parameter (None: kept in the session only) and, unless `key`
    says otherwise, its session and widget key. Bounds a model decides (layers, heads, tokens) are given where
    it is read (`hi=`); `lo`/`hi` here are the widest any model allows."""
    name: str
    type: type = str                   # str, int or bool (bool: "1" in the URL, absent when off)
    default: Any = None
    lo: int | None = None
    hi: int | None = None
    choices: tuple[str, ...] = ()      # a choice among fixed words ("" in the URL is not one of them)
    max_len: int = MAX_TEXT_CHARS
    key: str | None = None             # its session key, when not its name (a widget's existing key)
    url: bool = True                   # False: the session only, never a link
    carried: bool = False              # a link to another page carries it (the sidebar's input, language, mode)
    cut_notice: str | None = None      # the notice (catalogue key) when a link's text was cut to max_len

    @property
    def session_key(self) -> str:
        return self.key or self.name


# -- the sidebar's input, the language and presenter mode: every link carries them --------------------------------
MODEL = Value("model", carried=True)                                   # choices: the models found (services)
TEXT = Value("text", carried=True, cut_notice="notice.text_cut_link")   # default: the model's first example
TARGET = Value("target", default="", carried=True, cut_notice="notice.target_cut_link")
STYLE = Value("style", default="modern", carried=True)                # choices: the model's styles
BEAM = Value("beam", int, 1, 1, 8, carried=False)
MAX_TOKENS = Value("max_tokens", int, 128, 8, 512)                     # the app's bounds: services.models.max_tokens_bounds
LANG = Value("lang", default=DEFAULT_LANG, choices=tuple(LANGS), carried=True)
PRESENT = Value("present", bool, False, key="presenter", carried=True)
SIDEBAR = (MODEL, TEXT, TARGET, STYLE, BEAM, MAX_TOKENS, LANG, PRESENT)

# -- what a page looks at: layer, head, kind, step, token... (each page's own defaults are given where read) ------
PAGE = Value("page", url=False)                                        # the page's url path (viz/elements/nav.PAGES)
LAYER = Value("layer", int, 0, 0, 63)
MEAN_HEAD = -1                                                         # a head picker's "the mean of the heads"
HEAD = Value("head", int, 0, MEAN_HEAD, 63)                            # MEAN_HEAD where a page offers it


def as_head(head: int) -> int | None:
    """A picked head as the builders take it: None for the mean of the heads (MEAN_HEAD)."""
    return None if head == MEAN_HEAD else head


LAYER_B = Value("layer_b", int, 0, 0, 63)
HEAD_B = Value("head_b", int, 0, MEAN_HEAD, 63)
KIND = Value("kind", default="encoder", choices=("encoder", "decoder", "cross"))
STEP = Value("step", int, 0, 0, 10_000)
TOKEN = Value("token", int, 0, 0, 10_000)
QUERY = Value("query", int, 0, 0, 10_000)
TOUR_STEP = Value("tour_step", int, 1, 1, 99, key="tour-step")
# decoding
METHOD = Value("method", default="greedy", choices=("greedy", "beam"))
TOP_K = Value("k", int, 10, 1, 20)
NO_REPEAT = Value("no_repeat", int, 0, 0, 6)        # decoding: block repeated n-grams of this many tokens (0: off)
# step-through, multi-head, LayerNorm, FFN
STACK = Value("stack", default="encoder", choices=("encoder", "decoder"))
NORM = Value("norm", default="norm_attn", choices=("norm_attn", "norm_cross", "norm_ff"))
PART = Value("view", default="ffn")                 # which part of a page: FFN/smoothing/dropout, attribution's section
# positional
OFFSET = Value("offset", int, 3, 1, 10_000)
POSITIONS = Value("positions", int, 2, 2, 10_000)
DIMS = Value("dims", max_len=200)
SWAP = Value("swap", max_len=40)
# heads, compare, attribution, zoo, training
STAT = Value("stat", default="entropy_norm")
ABLATE = Value("ablate", max_len=2000)
ABL_MODE = Value("abl_mode", default="zero")
TAB = Value("tab", default="stats")
MODE = Value("mode", default="sentences", choices=("sentences", "heads"))
TEXT_B = Value("text_b")
METHODS = Value("methods", max_len=200)
STEPS = Value("steps", int, 16, 4, 2000)            # attribution: integrated-gradient steps; training: its steps
ALT = Value("alt", int, 0, 0, 100)
CORRUPT = Value("corrupt")
SOURCE = Value("source", default="model")
SCORE = Value("score", default="scaled")           # the zoo's score; the RNN page's (its own choices)
WEIGHTING = Value("weighting", default="soft")
WINDOW = Value("window", int, 1, 0, 10)
CENTRE = Value("centre", default="argmax")
TASK = Value("task", default="reverse")
SIZE = Value("size", default="small")
EXAMPLE = Value("example", max_len=80)
RNN_INPUT = Value("input", max_len=80)               # the Before-the-Transformer page's symbols

# -- kept in the session only, by more than one module (a module's own values are declared in it: Own, below) -------
IMAGE_FORMAT = Value("image_format", default="PNG", url=False)
PRESET = Value("preset", url=False)
UPLOAD = Value("upload", url=False)                  # the sidebar's uploaded file (Head analysis reads it too)
SENTENCE_EDIT = Value("presenter-sentence", url=False)   # presenter mode's sentence box, over the page
UPLOADED = Value("uploaded_sentence", url=False)

# -- a live class (viz/classroom): the link's class and teacher secret, and what this session is in it -----------
CLASS = Value("class", max_len=12)                   # a student's link: the class code (store.normal_code checks it)
HANDOFF = Value("handoff", max_len=64)               # the teacher's link for another device: a single-use token
CLASS_CODE = Value("class-code", url=False)          # the class this session teaches or follows
CLASS_SECRET = Value("class-secret", url=False)      # the teacher's secret (a teaching session only)
CLASS_FOLLOWING = Value("class-following", url=False)    # a student: following the teacher (else exploring)
CLASS_VERSION = Value("class-version", url=False)    # a student: the teacher's view version last shown
CLASS_COOKIES_READ = Value("class-cookies-read", url=False)   # this session looked at the browser's class cookies
CLASS_NOTICE = Value("class-notice", url=False)      # a notice to show once (the class ended, a bad link)
CLASS_ASK = Value("class-ask", url=False)            # class-ask-<control>: the teacher's question picker
PERSONAL = (LANG, PRESENT, CLASS, HANDOFF)             # each screen's own: a class never publishes these

DECLARED = {v.name: v for v in globals().values() if isinstance(v, Value) and v.url}
assert len(DECLARED) == len([v for v in globals().values() if isinstance(v, Value) and v.url]), "a URL name twice"


def key(value: Value, *parts) -> str:
    """The session (and widget) key of `value`, or of one of its parts: key(CLASS_ASK, "go") is "class-ask-go"."""
    return "-".join([value.session_key, *map(str, parts)])


# -- a module's own values: declared in the one module that uses them -------------------------------------------
@dataclass(frozen=True)
class Own:
    """The namespace of one module's own values: what that module alone keeps in the session (its widgets' state,
    what it remembers between runs), declared in it, `OWN = view.Own("viz.pages.heads")` and
    `HEADS_TAB = OWN.value("heads-tab")`, and used like any value (view.get(HEADS_TAB)). Never in a link (url=False):
    a link's values are the shared view's, declared above. A key, with its parts (key-...), belongs to one module:
    declaring one that another module's value, or a session value declared here, has or overlaps raises
    (tests/test_architecture.py imports every module, so it raises before any run). `module` is spelled out: a
    page runs as __main__, and runs again (declaring the same keys for the same module) on every run."""
    module: str

    def value(self, key: str, **kwargs) -> Value:
        _claim(key, self.module)
        return Value(key, url=False, **kwargs)


_OWNERS: dict[str, str] = {}               # every session key a value is declared with -> the module declaring it
_owners_lock = threading.Lock()


def _overlap(a: str, b: str) -> bool:
    """Whether one key is the other or one of its parts (key(value, *parts))."""
    return a == b or a.startswith(b + "-") or b.startswith(a + "-")


def _claim(name: str, module: str) -> None:
    with _owners_lock:
        taken = [k for k, owner in _OWNERS.items() if owner != module and _overlap(k, name)]
        if taken:
            raise ValueError(f"session key {name!r} ({module}) overlaps {taken[0]!r} of {_OWNERS[taken[0]]}")
        _OWNERS[name] = module


def owners() -> dict[str, str]:
    """Every session key declared so far and its module (the view's own, and the modules imported or run)."""
    with _owners_lock:
        return dict(_OWNERS)


def _claim_shared_keys(values: list[Value]) -> None:
    """The session keys of the values declared here: the session-only ones, the sidebar's (its widgets) and those
    with a key of their own (a URL value otherwise never sits in the session under its name)."""
    for value in values:
        if not value.url or value in SIDEBAR or value.key:
            _claim(value.session_key, __name__)


_claim_shared_keys([v for v in globals().values() if isinstance(v, Value)])


# -- the session ---------------------------------------------------------------------------------------------------
def get(value: Value, *parts, default: Any = None) -> Any:
    """What the session holds for `value` (a sidebar value: its widget's, else the view's own copy), else
    `default`."""
    name = key(value, *parts)
    if value in SIDEBAR and not parts and name not in st.session_state:
        return st.session_state.get(_STORE + name, default)
    return st.session_state.get(name, default)


def put(value: Value, data: Any, *parts) -> None:
    """Set `value` in the session (a sidebar value: its widget too, which shows it on the next run)."""
    name = key(value, *parts)
    st.session_state[name] = data
    if value in SIDEBAR and not parts:
        st.session_state[_STORE + name] = data


def has(value: Value, *parts) -> bool:
    return _held(key(value, *parts))


def _held(name: str) -> bool:
    try:
        return name in st.session_state
    except (ValueError, OverflowError):        # `in` reads the value: a NaN a browser sent raises there
        return True


def checkpoint() -> None:
    """Where a run gives way to a newer one: a click that came in while it builds (Next to another page) stops it
    here, not after the build (Streamlit stops a run at its next read of the session state, as at its next
    element). A builder of many parts calls it before each part; the parts built are kept (shared_cached), so the
    next run that wants them goes on from where this one stopped."""
    _held("checkpoint")


def seed(value: Value, data: Any, *parts) -> str:
    """Set `value` unless the session already holds it (a widget's first value); its key (seeded())."""
    return seeded(key(value, *parts), data)


def seeded(name: str, data: Any) -> str:
    """The key of a page's widget, holding `data` (its first value, from the link) unless the session already
    holds one. A widget bound to the view gets its first value this way, never as index=/value=: Streamlit shows
    a value set through the session in the browser's widget too, while a default loses to what the browser's
    widget of the same key holds. So a view the session is made to show (follow(): a class following its
    teacher) reaches every picker in one run."""
    if not _held(name):
        st.session_state[name] = data
    return name


def pop(value: Value, *parts, default: Any = None) -> Any:
    return st.session_state.pop(key(value, *parts), default)


def drop_all(value: Value) -> None:
    """Forget every part of `value` (abl-...: every head's check box)."""
    prefix = value.session_key + "-"
    for name in [k for k in st.session_state if str(k).startswith(prefix)]:
        del st.session_state[name]


def session_keys() -> list[str]:
    return [str(k) for k in st.session_state]


def raw(name: str) -> Any:
    """A widget's value by its key, for code that walks every widget (the language switch)."""
    return st.session_state[name]


def put_raw(name: str, data: Any) -> None:
    st.session_state[name] = data


def session_memo(name: str, at: Hashable, compute: Callable[[], Any] | None = None) -> Any:
    """This session's result of a slow computation (corpus statistics, head ranking, flow), kept per session
    since it is one student's. With `compute`, it runs when `at` changed; returns the result kept for `at`."""
    name = f"memo:{name}"
    stored = st.session_state.get(name)
    if compute is not None and (stored is None or stored[0] != at):
        stored = (at, compute())
        st.session_state[name] = stored
    return stored[1] if stored is not None and stored[0] == at else None


SHARED_MEMO_SIZE = 32                      # a class's few views at once, in 2-3 languages and type scales
# and, counted apart, the parts whole bodies are built of (shared_part): the zoo's is 72 a sentence and method, the
# dropout view's 72, and counted with the bodies they evicted every other page's from the 32 (a class's page built
# again for each page it went back to)
SHARED_PARTS_SIZE = 512                    # a sentence of every page is ~240 parts (the zoo's ~170 KB each: ~12 MB)
_shared: OrderedDict = OrderedDict()
_parts: set = set()                        # the keys of _shared that are parts
_shared_lock = threading.Lock()
_building: dict[tuple, threading.Lock] = {}


def _evict() -> None:
    """The oldest bodies past SHARED_MEMO_SIZE and the oldest parts past SHARED_PARTS_SIZE (under _shared_lock)."""
    for parts, size in ((False, SHARED_MEMO_SIZE), (True, SHARED_PARTS_SIZE)):
        kept = [key for key in _shared if (key in _parts) == parts]
        for key in kept[:max(0, len(kept) - size)]:
            del _shared[key]
            _parts.discard(key)


def shared_memo(name: Hashable, at: Hashable, compute: Callable[[], Any], part: bool = False) -> Any:
    """A slow result that `at` wholly determines (a figure: its trace key, view values, words and type scale), kept
    for every session of this process, the last SHARED_MEMO_SIZE of them: a class's students drawing the
    teacher's view build it once, not once each, and at once (one builds while the others wait for it). No one
    is given a result but for an `at` of their own (a student's own sentence is in its trace key), so one
    session's exploring reaches no other. The result is shared: nobody may change it (a figure is only drawn).
    `part`: one of the parts a whole body is built of (shared_part), kept among the parts."""
    key = (name, at)
    with _shared_lock:
        if key in _shared:
            _shared.move_to_end(key)
            return _shared[key]
        building = _building.setdefault(key, threading.Lock())
    with building:
        with _shared_lock:
            if key in _shared:
                return _shared[key]
        try:
            result = compute()
            with _shared_lock:                 # kept before the waiters are let in, so none of them builds it again
                _shared[key] = result
                if part:
                    _parts.add(key)
                _evict()
        finally:
            with _shared_lock:
                _building.pop(key, None)
    return result


def shared_part(build: Callable) -> Callable:
    """shared_cached for a part of a whole body (one pick's pictures in a deck: a zoo head, a decoding step), kept
    among the parts (SHARED_PARTS_SIZE), and built after checkpoint(): a click that came in meanwhile stops the run
    before the part, and the parts built are kept for the run that goes on."""
    def built_after_checkpoint(*args, **kwargs):
        checkpoint()
        return build(*args, **kwargs)

    return shared_cached(functools.wraps(build)(built_after_checkpoint), part=True)


def shared_cached(build: Callable, part: bool = False) -> Callable:
    """`build` made a shared_memo keyed by itself and its arguments: a builder is a plain function of what wholly
    determines its result (a Context's `traced`, a window, a look, a kind, a layer), called with those. Keyed by
    its file and name (a page runs as __main__, and defines its functions again on every run) and every argument
    as given; an argument that cannot be a key (a Context, an array, a dict), or whose class a page defines (it
    is defined again each run, so equal to nothing of the run before), raises TypeError instead of being left out
    of it or missing every time. Keeps shared_memo's one builder at a time per key."""
    origin = inspect.unwrap(build)              # shared_part's: the page's own function
    name = (origin.__code__.co_filename, origin.__qualname__)

    @functools.wraps(build)
    def cached(*args, **kwargs):
        at = (args, tuple(sorted(kwargs.items())))
        redefined = [type(arg).__qualname__ for arg in (*args, *kwargs.values()) if type(arg).__module__ == "__main__"]
        if redefined:     # a page's own class: defined again every run, its instances never equal the last run's
            raise TypeError(f"{build.__qualname__}: {', '.join(redefined)} is defined in a page, which runs as "
                            "__main__: a key of it never matches the next run's; define it in a module")
        try:
            hash(at)
        except TypeError as error:
            raise TypeError(f"{build.__qualname__}: pass what determines the result, each hashable ({error})") \
                from None
        return shared_memo(name, at, lambda: build(*args, **kwargs), part)

    return cached


# -- the URL --------------------------------------------------------------------------------------------------
def _notice(text: str, notices: list[str] | None) -> None:
    """Collect for the header (sidebar values) or show in place (a page's values)."""
    if notices is None:
        st.warning(plain(text, limit=600))     # quotes the raw parameter: no Markdown links from a URL
    else:
        notices.append(text)


def _lang() -> str:
    lang = get(LANG, default=DEFAULT_LANG)
    return lang if lang in LANGS else DEFAULT_LANG


def check(value: Value, raw_value: Any, notices: list[str] | None = None, *, default: Any = _UNSET,
          lo: int | None = None, hi: int | None = None, choices: list[str] | tuple[str, ...] | None = None) -> Any:
    """`raw_value` (a URL's text) as `value`'s type within its bounds; anything else is the default, said."""
    default = value.default if default is _UNSET else default
    if raw_value is None:
        return default
    if value.type is int:
        lo = value.lo if lo is None else lo
        hi = value.hi if hi is None else hi
        number = whole_number(str(raw_value))
        if number is None or not lo <= number <= hi:
            _notice(message(_lang(), "url.not_int", name=value.name, raw=repr(str(raw_value)[:40]), lo=lo, hi=hi,
                            default=default), notices)
            return default
        return number
    if value.type is bool:
        if str(raw_value) not in ("0", "1"):
            _notice(message(_lang(), "url.not_choice", name=value.name, raw=repr(str(raw_value)[:40]),
                            choices="0, 1", default="1" if default else "0"), notices)
            return default
        return raw_value == "1"
    choices = value.choices if choices is None else tuple(choices)
    if choices:
        if raw_value not in choices:
            _notice(message(_lang(), "url.not_choice", name=value.name, raw=repr(str(raw_value)[:40]),
                            choices=", ".join(choices), default=default), notices)
            return default
        return raw_value
    if value.cut_notice and len(str(raw_value)) >= value.max_len:
        _notice(message(_lang(), value.cut_notice, limit=value.max_len), notices)
    return str(raw_value)[:value.max_len]


def read(value: Value, notices: list[str] | None = None, **bounds) -> Any:
    """`value` from this page's URL, checked (check()); its default when the URL does not have it."""
    return check(value, st.query_params.get(value.name), notices, **bounds)


def in_url(value: Value) -> bool:
    return value.name in st.query_params


def url_text(value: Value) -> str | None:
    """The URL's text for `value` as sent (None when absent), before cutting: to tell a cut sentence."""
    data = st.query_params.get(value.name)
    return None if data is None else str(data)


def write_url(values: Mapping[Value, Any]) -> None:
    """Write values of the view into the URL under their declared URL names (None or "" removes one)."""
    for value, data in values.items():
        name = value.name
        if DECLARED.get(name) is not value:
            raise KeyError(f"{name!r} is not a declared value of the view (viz/core/view.py)")
        if data is None or data == "":
            if name in st.query_params:
                del st.query_params[name]
        elif st.query_params.get(name) != _url_form(data):
            st.query_params[name] = _url_form(data)


def forget_url(*values: Value) -> None:
    """Take values out of the URL (a page's view changed: the old layer does not belong to the new stack)."""
    write_url({v: None for v in values})


def _url_form(data: Any) -> str:
    if isinstance(data, bool):
        return "1" if data else "0"
    return str(data)


# -- the sidebar's values: bound to widgets, kept by the view ------------------------------------------------------
def start(value: Value, notices: list[str] | None = None, **bounds) -> Any:
    """The view's value of a sidebar value: kept from before, else read from the link (checked), once."""
    name = _STORE + value.session_key
    if name not in st.session_state:
        st.session_state[name] = read(value, notices, **bounds)
    return st.session_state[name]


def bind(value: Value, notices: list[str] | None = None, **bounds) -> str:
    """Before drawing the widget of a sidebar value: the widget's key, holding the view's value (given back when
    Streamlit dropped the widget's state)."""
    data = start(value, notices, **bounds)
    if not has(value):
        st.session_state[value.session_key] = data
    return value.session_key


def keep(value: Value, data: Any) -> None:
    """After drawing the widget: what it holds is the view's value."""
    st.session_state[_STORE + value.session_key] = data


def link_params(**own) -> dict[str, str]:
    """What a link to another page carries so that it opens on the same input (also in a new tab): the model,
    sentence and reference, the style as the URL has it, the language when not English, presenter mode; and
    the page's own values in `own`. Values as the page's URL holds them: the link encodes them once."""
    lang = get(LANG)
    params = {"model": get(MODEL), "text": (get(TEXT) or "").strip(), "target": (get(TARGET) or "").strip(),
              "style": st.query_params.get(STYLE.name), "lang": lang if lang != DEFAULT_LANG else None,
              "present": "1" if get(PRESENT) else None}
    return {k: str(v) for k, v in {**params, **own}.items() if v}


# -- the whole view as a value ------------------------------------------------------------------------------------
@dataclass(frozen=True)
class View:
    """One screen's view: its page and every declared value its URL holds (checked), as a comparable value."""
    page: str
    values: tuple[tuple[str, Any], ...] = field(default_factory=tuple)

    def get(self, value: Value, default: Any = _UNSET) -> Any:
        found = dict(self.values)
        if value.name in found:
            return found[value.name]
        return value.default if default is _UNSET else default

    def query(self) -> dict[str, str]:
        """Its URL parameters (a value at its declared default left out, as the pages write them)."""
        return {name: _url_form(data) for name, data in self.values if data is not None and data != ""}

    def url(self) -> str:
        query = urlencode(self.query())
        return f"/{self.page}" + (f"?{query}" if query else "")

    @classmethod
    def from_query(cls, page: str, query: Mapping[str, str], notices: list[str] | None = None) -> "View":
        """The view a link opens: every declared value of `query` checked against its declaration; names the
        view does not declare are left out."""
        notices = [] if notices is None else notices
        values = {name: check(DECLARED[name], data, notices) for name, data in query.items() if name in DECLARED}
        return cls(page, tuple(sorted(values.items())))


def current_view() -> View:
    """This session's view now: its page and its URL's declared values, the sidebar's from the view's store."""
    values = {name: st.query_params.get(name) for name in st.query_params if name in DECLARED}
    for value in SIDEBAR:
        data = get(value)
        if value.type is int and isinstance(data, float) and data.is_integer():
            data = int(data)                   # a number box holds 1.0: the URL and the view say 1
        if data is not None:
            values[value.name] = data
    return View(get(PAGE) or "", tuple(sorted((k, v) for k, v in values.items())))


def shared_view() -> View:
    """This session's view without what each screen keeps its own (language, presenter mode, the class link):
    what a teacher publishes."""
    personal = {v.name for v in PERSONAL}
    now = current_view()
    return View(now.page, tuple((k, v) for k, v in now.values if k not in personal))


FOLLOW_KEEPS = (_STORE, "memo:", "class-", "$$", PRESET.session_key, UPLOAD.session_key, UPLOADED.session_key,
                SENTENCE_EDIT.session_key, IMAGE_FORMAT.session_key)


def follow(view: View) -> None:
    """Make this session show `view` (a class following its teacher): the sidebar's values go to the view's own
    copies, and the state of every widget that shows a value of the view is dropped, so each is seeded from the
    view or from the URL again (bind(), seeded()), and the browser's widgets are given those values: a widget that
    kept its state would outvote the followed layer, head or step. Kept: the view's copies, memos, the class's
    values, Streamlit's own keys, and the sidebar's pickers that only act when used (an example, an upload, the
    presenter's sentence box, the image format): dropped, the browser sent their old value again as a change,
    and the example picker's callback put no sentence (None) into the view. Callable while a fragment runs or
    before the page draws. The URL is the caller's to set (st.switch_page's query_params)."""
    for value in SIDEBAR:
        if value.name in dict(view.values):
            st.session_state[_STORE + value.session_key] = view.get(value)
    for name in [k for k in session_keys() if not k.startswith(FOLLOW_KEEPS)]:
        st.session_state.pop(name, None)


# -- checking numbers -------------------------------------------------------------------------------------------
def whole_number(text: str) -> int | None:
    """'12', '-3' -> int; None for anything else, including what int() also takes ('1_0', '１', '٣') and
    more than MAX_DIGITS digits (no page takes such a number; int() would raise on 4,301)."""
    text = text.strip()
    if not re.fullmatch(r"[+-]?[0-9]{1,%d}" % MAX_DIGITS, text):
        return None
    return int(text)


def parse_index_list(text: str, lo: int, hi: int, max_items: int = 8) -> list[int]:
    """'0,1,8,9' -> [0, 1, 8, 9]; each in [lo, hi], unique, at most max_items. InputError otherwise."""
    parts = [p.strip() for p in str(text).split(",") if p.strip()]
    if not parts:
        raise InputError("no_numbers", "no numbers given")
    if len(parts) > max_items:
        raise InputError("too_many_numbers", f"at most {max_items} numbers, got {len(parts)}", limit=max_items,
                         n=len(parts))
    values = [whole_number(p) for p in parts]
    if None in values:
        raise InputError("not_numbers", f"{text[:40]!r} is not a comma-separated list of whole numbers",
                         raw=repr(text[:40]))
    bad = [v for v in values if not lo <= v <= hi]
    if bad:
        raise InputError("out_of_range", f"{bad[0]} is outside {lo}…{hi}", value=bad[0], lo=lo, hi=hi)
    return list(dict.fromkeys(values))


# -- whole-number boxes: what a browser sends is checked like a URL value ---------------------------------------
def number_box_value(value: Value, lo: int, hi: int) -> int | None:
    """The whole number the number box of `value` holds, or None when the browser sent something outside
    lo..hi: NaN and infinity (Streamlit's int() raised on them: the page crashed) or a number out of range
    (Streamlit quietly used the box's default: beam 64 became greedy). Only a client that skips the page's
    own box sends one. Boxes built with value=None hold None for out of range, so it can be told apart."""
    try:
        data = st.session_state.get(value.session_key)
    except (ValueError, OverflowError):
        return None
    if isinstance(data, bool) or not isinstance(data, (int, float)) or data != data or data % 1:
        return None
    return int(data) if lo <= data <= hi else None


def whole_number_box(container, label: str, lo: int, hi: int, value: Value, default: int,
                     notices: list[str] | None = None, **kwargs) -> int:
    """st.number_input for a whole number in lo..hi that no browser can break: a float box (value=None,
    step 1, shown without decimals) so that Streamlit itself never calls int() on NaN, and what it sent
    outside lo..hi is replaced by the last good value with a notice."""
    _check_number_box(value, label, lo, hi, default, notices)
    data = container.number_input(label, float(lo), float(hi), value=None, step=1.0, format="%.0f",
                                  key=value.session_key, **kwargs)
    data = default if data is None else int(data)
    st.session_state[f"_good:{value.session_key}"] = data
    return data


def _check_number_box(value: Value, name: str, lo: int, hi: int, default: int, notices: list[str] | None) -> None:
    """Before the box: a value the browser sent outside lo..hi is replaced by the box's last good value (else
    `default`) and said with the same notice as a URL value."""
    if has(value) and number_box_value(value, lo, hi) is None:
        kept = st.session_state.get(f"_good:{value.session_key}", default)
        st.session_state[value.session_key] = kept
        if value in SIDEBAR:
            keep(value, kept)
        _notice(message(_lang(), "url.not_int_box", name=name, lo=lo, hi=hi, default=kept), notices)


# -- a page's own values, by URL name (checked against the declarations) ------------------------------------------
