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

from model.cli.arguments import (add_model_argument, add_style_argument, beam_size, fail, int_up_to, output_file,
                                 resolve_models)
from model.inference.pipeline import DEFAULT_MAX_TOKENS, HARD_MAX_TOKENS, trace_sentence
from model.io.checkpoint import load_checkpoint
from model.io.device import add_device_argument
from viz.i18n import DEFAULT_LANG, LANGS


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description="Write a self-contained HTML lesson (the guided tour with "
                                                 "interactive figures) for one sentence.")
    add_model_argument(parser)
    parser.add_argument("--text", required=True, help="the source sentence")
    parser.add_argument("--target", default=None, help="a reference translation to teacher-force (optional)")
    parser.add_argument("--out", required=True, help="the HTML file to write")
    parser.add_argument("--beam", type=beam_size, default=1, help="beam size (1 = greedy)")
    parser.add_argument("--max-tokens", type=int_up_to(HARD_MAX_TOKENS), default=DEFAULT_MAX_TOKENS, help="longer sentences are cut")
    add_style_argument(parser)
    add_device_argument(parser)
    parser.add_argument("--lang", choices=list(LANGS), default=DEFAULT_LANG,
                        help="the lesson's language: en (English, the default) or zh (中文)")
    args = parser.parse_args(argv)
    if args.target is not None and not args.target.strip():
        parser.error("argument --target: empty (leave it out to let the model decode)")
    resolve_models(args)
    output_file(args.out)                 # a device, a FIFO (would block) or a missing folder: refused before the work
    from viz.lesson import write_lesson   # plotly and the figure builders: only once the arguments are good
    bundle = load_checkpoint(args.model, device=args.device)      # a bad folder or sentence: one line (__main__.py)
    trace = trace_sentence(bundle, args.text, target=args.target, beam=args.beam, max_tokens=args.max_tokens,
                           style=args.style)      # modern unless --style says, as the app's tour
    try:
        path = write_lesson(trace, args.out, bundle.path, lang=args.lang)
    except OSError as e:
        if e.filename is not None and e.filename != args.out:
            raise       # a file the lesson reads (say the catalogue, viz/locales/en.json): the dispatcher names it
        return fail(f"cannot write {args.out}: {e.strerror or e}")
    print(f"wrote {path} ({path.stat().st_size:,} bytes)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
