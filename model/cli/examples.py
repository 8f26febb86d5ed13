"""Choose a model's example sentences by measuring them (model/training/examples.py) and write its presets.txt:

    python -m model.cli examples --model pretrained/en-es --test pretrained/en-es/test.tsv \
        --everyday docs/examples/everyday.tsv
"""
from __future__ import annotations

import argparse
from pathlib import Path

from model.cli import progress
from model.cli.arguments import add_model_argument, output_file, positive_int, resolve_models
from model.errors import InputError
from model.inference.pipeline import encode_text, load_engine
from model.training.corpus import read_tsv
from model.training.examples import choose, measure, presets_text


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description="Choose example sentences by measuring them; write presets.txt.")
    add_model_argument(parser)
    parser.add_argument("--test", required=True, help="held-out TSV (en, es)")
    parser.add_argument("--everyday", required=True, help="everyday sentences: an en<TAB>es TSV (its en column)")
    parser.add_argument("--pairs", type=positive_int, default=300, help="held-out pairs to measure")
    parser.add_argument("--max-words", type=positive_int, default=12, help="only short held-out sentences")
    parser.add_argument("-n", type=positive_int, default=6, help="sentences per group")
    parser.add_argument("--start", default="The man went to the house.",
                        help="the app's default sentence, first ('' for none)")
    args = parser.parse_args(argv)
    resolve_models(args)
    progress.step(f"loading the model {args.model.name}")
    bundle = load_engine(args.model, device="cpu")           # "no such model folder" first
    presets_file = presets_target(args.model)
    pairs = [(s, t) for s, t in read_tsv(args.test)[: args.pairs] if len(s.split()) <= args.max_words]
    if not pairs:
        raise ValueError(f"{args.test}: none of the first {args.pairs} pairs has {args.max_words} words or fewer "
                         "(--pairs, --max-words)")
    everyday_pairs = read_tsv(args.everyday)
    check_start(parser, bundle, args.start)
    with progress.bar(len(pairs) + len(everyday_pairs), "measuring sentences") as bar:
        well = [measured(bar, measure(bundle, s, t, style="bible")) for s, t in pairs]
        everyday = [measured(bar, measure(bundle, s, t, style="modern")) for s, t in everyday_pairs]
    chosen = choose(well, everyday, args.n)
    for group, items in chosen.items():
        print(f"-- {group}")
        for m in items:
            score = f"chrF {m.chrf:5.1f}" if m.chrf is not None else f"conf {m.confidence:.2f}{' repeats' if m.repeats else ''}"
            print(f"{score}  {m.source}  ->  {m.output}")
    everyday_repeats = sum(m.repeats for m in everyday)
    print(f"everyday: {everyday_repeats} of {len(everyday)} outputs repeat a word three times; "
          f"mean confidence {sum(m.confidence for m in everyday) / len(everyday):.2f} "
          f"(held-out: {sum(m.confidence for m in well) / len(well):.2f})")
    presets_file.write_text(presets_text(chosen, args.start), encoding="utf-8")
    return 0


def presets_target(model: str) -> Path:
    """MODEL/presets.txt, checked before minutes of measuring: a regular file of the folder's own or none yet (a
    FIFO would block the write, a device fail it, a link write outside the folder). ValueError naming it else."""
    path = Path(model) / "presets.txt"
    if path.is_symlink():
        raise ValueError(f"{path}: a symbolic link, not a file of its folder itself; not written")
    return output_file(str(path), "--model")


def check_start(parser, bundle, start: str) -> None:
    """The app opens on --start: a sentence the model must read (a toy model reads only its symbols)."""
    if start:
        try:
            encode_text(bundle, start)
        except InputError as e:
            parser.error(f"argument --start: {e} (give a sentence this model reads, or --start '')")



def measured(bar, measurement):
    """One more sentence measured: the bar moves."""
    bar.update()
    return measurement


if __name__ == "__main__":
    raise SystemExit(main())
