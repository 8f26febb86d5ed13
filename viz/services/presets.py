"""What a model folder ships beside the model: its example sentences (presets.txt) and the reference
translations of its test splits."""
from __future__ import annotations

import streamlit as st

from viz.services.models import model_file_text


@st.cache_data(max_entries=8, show_spinner=False)
def preset_groups(model_id: str) -> dict[str, list[str]]:
    """Example sentences shipped with the model (presets.txt: '# group' lines, then one sentence a line;
    written by `python -m model.cli examples`, which measures them). Lines before any group are 'start'."""
    try:
        text = model_file_text(model_id, "presets.txt")
    except ValueError:                                   # too big, or not a file: the default sentence
        text = None
    if text is None:
        return {"start": ["The man went to the house."]}
    groups: dict[str, list[str]] = {}
    group = "start"
    for line in text.splitlines():   # a bad byte costs one line, not the page
        line = line.strip()
        if line.startswith("# "):
            group = line[2:].strip() if len(line[2:].split()) == 1 else group   # a one-word header names a group
        elif line:
            groups.setdefault(group, []).append(line)
    return groups or {"start": ["The man went to the house."]}


TEST_SPLITS = ("test.tsv", "everyday_test.tsv")    # held-out pairs a model folder may ship: 'en<TAB>es' a line


@st.cache_data(max_entries=8, show_spinner=False)
def split_references(model_id: str) -> dict[str, str]:
    """Source sentence -> its reference translation, from the model folder's test splits (TEST_SPLITS; the
    first line is the header). Empty for a model without them; an unreadable file is skipped."""
    references: dict[str, str] = {}
    for name in TEST_SPLITS:
        try:
            text = model_file_text(model_id, name)
        except ValueError:
            continue
        for line in (text or "").splitlines()[1:]:
            source, tab, reference = line.partition("\t")
            if tab and source.strip() and reference.strip():
                references.setdefault(source.strip(), reference.strip())
    return references


def reference_of(model_id: str, sentence: str) -> str | None:
    """The test split's reference translation of this sentence, or None (not a test-split source)."""
    return split_references(model_id).get(sentence.strip())


def presets_refused(model_id: str) -> str | None:
    """Why the model folder's presets.txt was not read (a link, a FIFO, a device, too big), naming it; None when
    it was read or is absent. The sidebar says it, so the default sentence is not a silent fallback."""
    try:
        model_file_text(model_id, "presets.txt")
    except ValueError as e:
        return str(e)
    return None


def presets(model_id: str) -> list[str]:
    """Every example sentence, the default (the first) first."""
    return [s for group in preset_groups(model_id).values() for s in group]
