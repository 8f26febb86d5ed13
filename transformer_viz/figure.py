"""Write every figure of one sentence's trace as static files for slides and papers (PDF, SVG or PNG; no browser):
the guided tour's pictures, with the app's words and colours (viz/static_figures.py).

    python -m transformer_viz figure --text "The man went to the house." --out figures/
    python -m transformer_viz figure --text "The man went to the house." --out 图/ --lang zh --format svg,png
    python -m transformer_viz figure --model toy-reverse --text "a b c" --out toy/ --format png
"""
from __future__ import annotations

import argparse
import sys

from model.cli.arguments import add_model_argument, add_style_argument, beam_size, output_folder, resolve_models
from model.inference.pipeline import trace_sentence
from model.io.checkpoint import load_checkpoint
from model.io.device import add_device_argument
from viz.i18n import DEFAULT_LANG, LANGS

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
    add_model_argument(parser)
    parser.add_argument("--text", required=True, help="the source sentence")
    parser.add_argument("--target", default=None, help="a reference translation to teacher-force (optional)")
    parser.add_argument("--out", required=True, help="the folder to write the figures into (made if missing)")
    parser.add_argument("--format", type=formats, default=("pdf",), help="pdf, svg, png or several: pdf,png")
    parser.add_argument("--beam", type=beam_size, default=1, help="beam size (1 = greedy)")
    add_style_argument(parser)
    add_device_argument(parser)
    parser.add_argument("--lang", choices=list(LANGS), default=DEFAULT_LANG, help="the figures' language: en or zh")
    args = parser.parse_args(argv)
    if args.target is not None and not args.target.strip():
        parser.error("argument --target: empty (leave it out to let the model decode)")
    resolve_models(args)
    out = output_folder(args.out)
    from viz.static_figures import write_figures      # matplotlib and the figures: only once the arguments are good
    bundle = load_checkpoint(args.model, device=args.device)
    trace = trace_sentence(bundle, args.text, target=args.target, beam=args.beam, style=args.style)
    written = write_figures(trace, out, bundle.path, args.lang, args.format)
    print(f"wrote {len(written)} files to {out}: {', '.join(p.name for p in written[:4])}"
          f"{', ...' if len(written) > 4 else ''}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
