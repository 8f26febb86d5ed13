"""Write one sentence's guided lesson as a single HTML file that opens offline (the library traces the
sentence; the app's tour figures and catalogue write the page, so this command lives above both).

    python -m transformer_viz lesson --text "The man went to the house." --out lesson.html        (en-es)
    python -m transformer_viz lesson --text "The man went to the house." --out 课.html --lang zh
    python -m transformer_viz lesson --text "The man went to the house." --out b.html --style bible
    python -m transformer_viz lesson --model toy-reverse --text "a b c" --out toy.html
"""
from __future__ import annotations

import argparse
import sys

from model.cli import progress
from model.cli.arguments import fail, output_file
from model.io.files import write_replacing
from transformer_viz.sentence import add_sentence_arguments, check_sentence_arguments, traced_sentence


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description="Write a self-contained HTML lesson (the guided tour with "
                                                 "interactive figures) for one sentence.")
    add_sentence_arguments(parser, "the HTML file to write",
                           "the lesson's language: en (English, the default) or zh (中文)")
    args = parser.parse_args(argv)
    check_sentence_arguments(parser, args)
    output_file(args.out)                 # a device, a FIFO (would block) or a missing folder: refused before the work
    from viz.tour.lesson import lesson_html   # plotly and the figure builders: only once the arguments are good
    from viz.tour.steps import TOUR
    bundle, trace = traced_sentence(args)
    progress.step(f"drawing the lesson's {len(TOUR)} steps")
    page = lesson_html(trace, bundle.path, args.lang)
    try:
        path = write_replacing(args.out, page)     # a link at --out is replaced, never followed
    except OSError as e:
        if e.filename is not None and e.filename != args.out:
            raise       # a file the lesson reads (say the catalogue, viz/locales/en.json): the dispatcher names it
        return fail(f"cannot write {args.out}: {e.strerror or e}")
    print(f"wrote {path} ({path.stat().st_size:,} bytes)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
