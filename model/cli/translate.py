"""Translate from the command line.

    python -m model.cli translate "The man went to the house."             (en-es, modern Spanish)
    python -m model.cli translate --model toy-reverse "a b c"
    python -m model.cli translate --input sentences.txt --beam 4 --style bible
    python -m model.cli translate --model runs/mix/shipped --input docs/examples/everyday.tsv

A file (one sentence a line, or the en column of an en/es TSV) is translated in length-sorted batches (model/inference/batch_translate.py); its output has one
line per input line, in order, blank for blank.
"""
from __future__ import annotations

import argparse
import sys

from model.cli import progress
from model.cli.arguments import (add_model_argument, add_no_repeat_argument, add_style_argument, beam_size, int_up_to,
                                 positive_int, resolve_models)
from model.inference.batch_translate import DEFAULT_BATCH_TOKENS, translate_many
from model.inference.pipeline import DEFAULT_MAX_TOKENS, HARD_MAX_TOKENS, translate
from model.io.checkpoint import load_checkpoint
from model.io.device import add_device_argument
from model.io.files import MiB, read_text_limited
from model.io.language import english_notice
from model.training.corpus import HEADER, read_tsv


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description="Translate text with a checkpoint folder.")
    parser.add_argument("text", nargs="?", help="a sentence (or use --input)")
    add_model_argument(parser)
    parser.add_argument("--input", help="a UTF-8 file, one sentence per line (or an en<TAB>es TSV: its en column); "
                        "output one line per line")
    parser.add_argument("--beam", type=beam_size, default=1, help="beam size (1 = greedy)")
    add_style_argument(parser)
    add_no_repeat_argument(parser)
    parser.add_argument("--max-tokens", type=int_up_to(HARD_MAX_TOKENS), default=DEFAULT_MAX_TOKENS,
                        help=f"source tokens read, at most {HARD_MAX_TOKENS} (default {DEFAULT_MAX_TOKENS}): a longer "
                             "sentence is cut, keeping its end token")
    parser.add_argument("--batch-tokens", type=positive_int, default=None,
                        help=f"--input: padded source tokens per batch, each beam row counted (default "
                             f"{DEFAULT_BATCH_TOKENS} on the CPU, 16 times that on a GPU)")
    add_device_argument(parser)
    args = parser.parse_args(argv)
    if (args.text is None) == (args.input is None):
        parser.error("give either a sentence or --input FILE")
    resolve_models(args)
    lines = [args.text] if args.input is None else read_lines(args.input)   # a mistake: one line (model/cli/__main__.py)
    progress.step(f"loading the model {args.model.name}")
    bundle = load_checkpoint(args.model, device=args.device)
    if bundle.encoder_tokenizer.reads_english:
        note_not_english(lines)
    if args.input is None:
        print(translate(bundle, args.text, beam=args.beam, max_tokens=args.max_tokens, style=args.style,
                        no_repeat_ngram=args.no_repeat_ngram))
        return 0
    with progress.bar(len(lines), "translating") as bar:
        translated = translate_many(bundle, lines, args.beam, args.batch_tokens, args.max_tokens, style=args.style,
                                    no_repeat_ngram=args.no_repeat_ngram, on_batch=bar.update)
    for line in translated:
        print(line)
    return 0


def note_not_english(lines: list[str]) -> None:
    """One line on stderr when sentences are not in English's alphabet (model/io/language.py); they are translated."""
    noted = [(number, note) for number, line in enumerate(lines, 1) if (note := english_notice(line))]
    if len(lines) == 1 and noted:
        print(f"note: {noted[0][1]}", file=sys.stderr)
    elif noted:
        print(f"note: {len(noted)} of {len(lines)} lines are not English, the first line {noted[0][0]}: "
              f"{noted[0][1]}", file=sys.stderr)


MAX_INPUT_BYTES = 64 * MiB   # --input: hours of decoding on a CPU; /dev/zero or a FIFO is refused unread


def read_lines(path: str) -> list[str]:
    """The lines of a UTF-8 text file, or the English column of an `en<TAB>es` file (a test set, the
    everyday sentences); OSError / ValueError with a one-line message otherwise."""
    try:
        lines = read_text_limited(path, MAX_INPUT_BYTES, "translate long files in parts").splitlines()
        if not lines:
            raise ValueError(f"{path}: an empty file, nothing to translate")
        return [en for en, _ in read_tsv(path)] if lines[:1] == [HEADER] else lines
    except FileNotFoundError:
        raise OSError(f"{path}: no such file") from None
    except UnicodeDecodeError:
        raise ValueError(f"{path}: not UTF-8 text") from None


if __name__ == "__main__":
    sys.exit(main())
