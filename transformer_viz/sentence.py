"""The sentence the `lesson` and `figure` commands draw: one set of arguments (model, text, target, beam, token
limit, style, device, language) and one way to trace it."""
from __future__ import annotations

from model.cli import progress
from model.cli.arguments import add_model_argument, add_style_argument, beam_size, int_up_to, resolve_models
from model.inference.pipeline import DEFAULT_MAX_TOKENS, HARD_MAX_TOKENS, trace_sentence
from model.io.checkpoint import load_checkpoint
from model.io.device import add_device_argument
from viz.core.i18n import DEFAULT_LANG, LANGS


def add_sentence_arguments(parser, out_help: str, lang_help: str) -> None:
    add_model_argument(parser)
    parser.add_argument("--text", required=True, help="the source sentence")
    parser.add_argument("--target", default=None, help="a reference translation to teacher-force (optional)")
    parser.add_argument("--out", required=True, help=out_help)
    parser.add_argument("--beam", type=beam_size, default=1, help="beam size (1 = greedy)")
    parser.add_argument("--max-tokens", type=int_up_to(HARD_MAX_TOKENS), default=DEFAULT_MAX_TOKENS,
                        help="longer sentences are cut")
    add_style_argument(parser)
    add_device_argument(parser)
    parser.add_argument("--lang", choices=list(LANGS), default=DEFAULT_LANG, help=lang_help)


def check_sentence_arguments(parser, args) -> None:
    """Said before any work: an empty --target, a model that is not there."""
    if args.target is not None and not args.target.strip():
        parser.error("argument --target: empty (leave it out to let the model decode)")
    resolve_models(args)


def traced_sentence(args):
    """(the loaded model, the sentence's trace): in --style (modern unless said, as the app's tour)."""
    import torch
    from viz.services.models import TORCH_THREADS
    torch.set_num_threads(TORCH_THREADS)   # the app's: float sums differ with the thread count, and the lesson and
                                           # figures written here are the app's byte for byte (tests/test_lesson.py)
    progress.step(f"loading the model {args.model.name}")
    bundle = load_checkpoint(args.model, device=args.device)      # a bad folder or sentence: one line (__main__.py)
    progress.step("reading the sentence (every value of every layer)")
    return bundle, trace_sentence(bundle, args.text, target=args.target, beam=args.beam, max_tokens=args.max_tokens,
                                  style=args.style)
