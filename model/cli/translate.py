"""Translate from the command line.

    python -m model.cli translate --model pretrained/en-es "The man went to the house."
    python -m model.cli translate --model pretrained/en-es --input sentences.txt --beam 4
"""
from __future__ import annotations

import argparse
import sys

from model.inference.pipeline import DEFAULT_MAX_TOKENS, translate
from model.io.checkpoint import CheckpointError, load_checkpoint


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description="Translate text with a checkpoint folder.")
    parser.add_argument("text", nargs="?", help="a sentence (or use --input)")
    parser.add_argument("--model", required=True, help="checkpoint folder")
    parser.add_argument("--input", help="a UTF-8 file, one sentence per line; output one line per line")
    parser.add_argument("--beam", type=int, default=1, help="beam size (1 = greedy)")
    parser.add_argument("--max-tokens", type=int, default=DEFAULT_MAX_TOKENS)
    parser.add_argument("--device", default=None, help="cpu or cuda (default: cuda if available)")
    args = parser.parse_args(argv)
    if (args.text is None) == (args.input is None):
        parser.error("give either a sentence or --input FILE")
    try:
        bundle = load_checkpoint(args.model, device=args.device)
    except CheckpointError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    lines = [args.text] if args.text is not None else open(args.input, encoding="utf-8").read().splitlines()
    for line in lines:
        print(translate(bundle, line, beam=args.beam, max_tokens=args.max_tokens) if line.strip() else "")
    return 0


if __name__ == "__main__":
    sys.exit(main())
