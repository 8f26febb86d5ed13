"""Write every figure of one sentence's trace as static files for slides and papers (PDF, SVG or PNG; no browser):
the guided tour's pictures, with the app's words and colours (viz/tour/static_figures.py).

    python -m transformer_viz figure --text "The man went to the house." --out figures/
    python -m transformer_viz figure --text "The man went to the house." --out 图/ --lang zh --format svg,png
    python -m transformer_viz figure --model toy-reverse --text "a b c" --out toy/ --format png
"""
from __future__ import annotations

import argparse
import os
import sys
import tempfile

from model.cli import progress
from model.cli.arguments import output_folder
from transformer_viz.sentence import add_sentence_arguments, check_sentence_arguments, traced_sentence

FORMATS = ("pdf", "svg", "png")      # viz/figures/static.FORMATS (imported with matplotlib once the arguments are good)


def formats(text: str) -> tuple[str, ...]:
    chosen = tuple(dict.fromkeys(f.strip().lower() for f in text.split(",") if f.strip()))
    wrong = [f for f in chosen if f not in FORMATS]
    if not chosen or wrong:
        raise argparse.ArgumentTypeError(f"{', '.join(wrong) or 'none given'}: choose from {', '.join(FORMATS)}")
    return chosen


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description="Write every figure of one sentence's guided tour as static files "
                                                 "(PDF, SVG, PNG) for slides and papers.")
    add_sentence_arguments(parser, "the folder to write the figures into (made if missing)",
                           "the figures' language: en or zh")
    parser.add_argument("--format", type=formats, default=("pdf",), help="pdf, svg, png or several: pdf,png")
    args = parser.parse_args(argv)
    check_sentence_arguments(parser, args)
    out = output_folder(args.out)
    from viz.tour.static_figures import write_figures      # matplotlib and the figures: only once the arguments are good
    bundle, trace = traced_sentence(args)
    with tempfile.TemporaryDirectory(prefix=".figures-", dir=out) as staging:   # our own new folder: no link in it
        progress.step("drawing the tour's figures")
        with progress.bar(0, "writing figures") as bar:
            drawn = write_figures(trace, staging, bundle.path, args.lang, args.format, on_file=progress.counted(bar))
        written = [out / path.name for path in drawn]
        for path, target in zip(drawn, written):
            os.replace(path, target)           # a link already at that name is replaced, never followed
    print(f"wrote {len(written)} files to {out}: {', '.join(p.name for p in written[:4])}"
          f"{', ...' if len(written) > 4 else ''}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
