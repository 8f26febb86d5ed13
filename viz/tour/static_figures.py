"""Every figure of a trace as a static file (PDF, SVG, PNG) for slides and papers: the guided tour's pictures, as
the app and the offline lesson draw them (viz/tour/pictures.step_pictures), converted by viz/figures/static.py.

    from viz.tour.static_figures import write_figures
    write_figures(trace, "figures/", model_dir=bundle.path, formats=("pdf", "png"))
"""
from __future__ import annotations

from pathlib import Path
from typing import Callable

import plotly.graph_objects as go

from viz.figures.static import FORMATS, save_figure
from viz.figures.style import Look
from viz.core.i18n import DEFAULT_LANG, LANGS, words
from viz.tour.pictures import step_pictures
from viz.tour.steps import TOUR


def trace_figures(trace, model_dir: Path | None = None, lang: str = DEFAULT_LANG) -> list[tuple[str, go.Figure]]:
    """(file stem, plotly figure) of every picture of the tour, in its order: 01-tokens, 02-positional, ..."""
    if lang not in LANGS:
        raise ValueError(f"unknown language {lang!r}: one of {', '.join(LANGS)}")
    named = []
    for number, step in enumerate(TOUR, start=1):
        for i, picture in enumerate(step_pictures(step, trace, model_dir, Look(words(lang)))):
            named.append((f"{number:02d}-{step.key}{f'-{i + 1}' if i else ''}", picture.figure))
    return named


def write_figures(trace, folder, model_dir: Path | None = None, lang: str = DEFAULT_LANG,
                  formats: tuple[str, ...] = ("pdf",), on_file: Callable[[int, int], None] | None = None) -> list[Path]:
    """Every figure of `trace` into `folder` (made if missing), once per format; returns the files written.
    on_file(written, total) after each file (a command's progress bar)."""
    unknown = [f for f in formats if f not in FORMATS]
    if unknown or not formats:
        raise ValueError(f"formats: {', '.join(unknown) or 'none given'}; choose from {', '.join(FORMATS)}")
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    named = trace_figures(trace, model_dir, lang)
    written = []
    for stem, fig in named:
        for kind in formats:
            written.append(save_figure(fig, folder / f"{stem}.{kind}"))
            if on_file is not None:
                on_file(len(written), len(named) * len(formats))
    return written
