"""What the live class relies on in Streamlit, each checked by its public name and signature: a Streamlit upgrade
that changes one fails here, with a message that says what the class needs it for (the real browser tests,
tests/test_browser_class*.py, then show the behaviour). requirements.txt pins Streamlit; this is the pin's guard."""
from __future__ import annotations

import inspect
import re
from pathlib import Path

import streamlit as st
from streamlit.testing.v1 import AppTest

ROOT = Path(__file__).resolve().parents[1]


def test_streamlit_is_the_pinned_version():
    pin = re.search(r"^streamlit==(\S+)$", (ROOT / "requirements.txt").read_text(), re.M).group(1)
    assert st.__version__ == pin, (f"Streamlit {st.__version__} is installed, requirements.txt pins {pin}: run this "
                                   "file, tests/test_page_class*.py and tests/test_browser_class*.py before moving the pin")


def test_the_browser_facts_a_class_reads_are_public():
    for name, why in {"cookies": "a teacher and a student are resumed from their browser's cookie",
                      "locale": "a student's language comes from their browser",
                      "ip_address": "wrong class codes are counted per address",
                      "headers": "behind the lecture hall's nginx, X-Real-IP names the address",
                      "url": "the join link and QR code are made from the address the teacher reached"}.items():
        assert isinstance(inspect.getattr_static(type(st.context), name), property), f"st.context.{name}: {why}"


def test_custom_components_v2_take_inline_code_data_and_a_trigger_callback():
    params = inspect.signature(st.components.v2.component).parameters
    assert {"name", "html", "css", "js", "isolate_styles"} <= set(params), (
        "viz/classroom/browser.py registers inline components (cookies, a student's poll timer)")
    mount = st.components.v2.component("tviz_contract_probe", html="<span></span>", js="export default function(){}")
    assert {"data", "key"} <= set(inspect.signature(mount).parameters), "a component is mounted with data and a key"
    assert inspect.signature(mount).parameters["on_callbacks"].kind is inspect.Parameter.VAR_KEYWORD, (
        "a trigger is received as on_<name>_change (the poll's beat)")


def test_fragments_rerun_alone_on_a_timer_and_pages_switch_with_a_query():
    assert "run_every" in inspect.signature(st.fragment).parameters, "the teacher's tally and presence rerun on a timer"
    assert "query_params" in inspect.signature(st.switch_page).parameters, (
        "a follower switches to the teacher's page and view in one call (viz/classroom/live.go_to)")
    assert "scope" in inspect.signature(st.rerun).parameters


def test_apptest_can_seed_a_browsers_locale():
    at = AppTest.from_string("import streamlit as st\nst.write(st.context.locale)", default_timeout=30)
    at.context["locale"] = "zh-CN"
    at.run()
    assert at.markdown[0].value == "zh-CN", "tests/test_page_class.py seeds a student's browser language this way"
