"""Capture a Trace of one sentence to an .npz file: python -m model.cli trace [--model NAME|DIR] --text "..." --out FILE."""
from __future__ import annotations

import argparse

from model.cli import progress
from model.cli.arguments import add_model_argument, add_style_argument, output_file, resolve_models
from model.io.files import write_replacing
from model.inference.pipeline import load_engine, trace_sentence
from model.io.device import add_device_argument


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description="Capture a Trace of one sentence to an .npz file.")
    add_model_argument(parser)
    parser.add_argument("--text", required=True, help="source sentence")
    parser.add_argument("--target", default=None, help="reference target (teacher forcing)")
    add_style_argument(parser)
    parser.add_argument("--names", default=None, help="comma-separated names or glob patterns")
    parser.add_argument("--out", required=True, help="the .npz file to write (written as named: no suffix added)")
    add_device_argument(parser)
    args = parser.parse_args(argv)
    if args.target is not None and not args.target.strip():
        parser.error("argument --target: empty (leave it out to let the model decode)")
    resolve_models(args)
    out = output_file(args.out)           # before the model runs: no device, no pipe, no missing folder
    names = None if args.names is None else [n.strip() for n in args.names.split(",") if n.strip()]
    if names == []:
        parser.error("argument --names: no name or pattern given")
    progress.step(f"loading the model {args.model.name}")
    bundle = load_engine(args.model, device=args.device)
    progress.step("reading the sentence (every value of every layer)")
    trace = trace_sentence(bundle, args.text, target=args.target, names=names, style=args.style)
    unmatched = [n for n in names or [] if not (n in trace or trace.names(n))]
    if unmatched:
        raise ValueError(f"--names: nothing captured matches {', '.join(map(repr, unmatched))} "
                         "(a trace without --names holds every name)")
    write_replacing(out, trace.to_bytes())   # exactly the path given (numpy's savez would add .npz to a bare name)
    print(f"{out}: {len(trace.arrays)} arrays, {trace.nbytes / 1e6:.1f} MB uncompressed; "
          f"output: {trace.meta['tgt_text']}")


if __name__ == "__main__":
    main()
