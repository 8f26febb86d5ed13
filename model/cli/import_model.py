"""`import`: a Transformer trained with PyTorch's translation tutorial or the Annotated Transformer, as a
model folder the app opens (docs/byo-model.md)."""
from __future__ import annotations

import argparse
from pathlib import Path

from model.cli import progress
from model.cli.arguments import positive_int
from model.errors import CheckpointError
from model.inference.pipeline import translate
from model.io.checkpoint import Bundle
from model.io.files import read_text_limited
from model.io.importer import SHAPES, Imported, Told, import_model
from model.io.models import models_folders, user_models_folder
from model.nn.config import ACTIVATIONS

MAX_CHECK_BYTES = 1024 * 1024        # a few pairs, one a line
WEIGHTS_CANNOT_TELL = "--heads, --norm-first or --activation may not be what it was trained with"


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(
        description="Import a checkpoint (a state_dict saved with torch.save, or .safetensors) of PyTorch's "
                    "translation tutorial (Seq2SeqTransformer) or the Annotated Transformer (make_model), with "
                    "its vocabularies, as a model folder the app opens.")
    parser.add_argument("checkpoint", help="model.state_dict() saved with torch.save (.pt/.pth) or as .safetensors")
    parser.add_argument("--heads", type=positive_int, required=True,
                        help="attention heads (nhead / h): the weights do not show how d_model was split")
    parser.add_argument("--norm-first", action="store_true", default=None,
                        help="the tutorial's nn.Transformer was built with norm_first=True (pre-norm): the weights do "
                             "not show where the LayerNorms sat")
    parser.add_argument("--activation", choices=ACTIVATIONS, default="relu",
                        help="the tutorial's nn.Transformer activation (default relu): the weights do not show it")
    parser.add_argument("--check-with", metavar="TSV", default=None,
                        help="source<TAB>the greedy output your own model wrote, one pair a line: the import is "
                             "refused unless it writes the same (catches a wrong --heads, --norm-first, --activation)")
    parser.add_argument("--src-vocab", help="the source vocabulary: tokens one a line in id order, or a tokenizers JSON")
    parser.add_argument("--tgt-vocab", help="the target vocabulary, likewise")
    parser.add_argument("--vocab", help="one vocabulary for both sides, instead of --src-vocab and --tgt-vocab")
    parser.add_argument("--shape", choices=SHAPES, default=None, help="which project's model (default: read from "
                        "the weights' names)")
    parser.add_argument("--out", required=True, help="the model folder to write (new, or empty)")
    args = parser.parse_args(argv)
    pairs = read_check_pairs(args.check_with) if args.check_with else None
    told = Told(args.heads, args.norm_first, args.activation)
    progress.step(f"reading and checking {args.checkpoint}" + (f", then decoding its {len(pairs)} check pairs"
                                                                 if pairs else ""))
    out = import_model(args.checkpoint, args.out, told, vocab=args.vocab, src_vocab=args.src_vocab,
                       tgt_vocab=args.tgt_vocab, shape=args.shape,
                       check=(lambda imported: same_outputs(imported, pairs, args.check_with)) if pairs else None)
    print(f"imported {args.checkpoint} -> {out}" + (f" (its {len(pairs)} check pairs agree)" if pairs else ""))
    print(where_the_app_finds(out))


def read_check_pairs(path: str) -> list[tuple[int, str, str]]:
    """(line number, source, expected greedy output) for each non-empty line of `path`."""
    try:
        text = read_text_limited(path, MAX_CHECK_BYTES, "a few pairs take a few hundred bytes")
    except FileNotFoundError:
        raise CheckpointError(f"--check-with {path}: no such file") from None
    pairs = []
    for number, line in enumerate(text.split("\n"), 1):
        if not line.strip():
            continue
        columns = line.split("\t")
        if len(columns) != 2 or not all(c.strip() for c in columns):
            raise CheckpointError(f"--check-with {path} line {number}: not a source, a tab and your model's output")
        pairs.append((number, columns[0].strip(), columns[1].strip()))
    if not pairs:
        raise CheckpointError(f"--check-with {path}: no pairs")
    return pairs


def same_outputs(imported: Imported, pairs: list[tuple[int, str, str]], path: str) -> None:
    """CheckpointError at the first pair whose greedy output differs from the one given."""
    bundle = Bundle(imported.model, imported.tokenizer, imported.model.cfg, Path(path),
                    source_tokenizer=imported.source_tokenizer)
    for number, source, expected in pairs:
        wrote = translate(bundle, source)
        if " ".join(wrote.split()) != " ".join(expected.split()):
            raise CheckpointError(f"--check-with {path} line {number}: your model wrote {expected[:80]!r} for "
                                  f"{source[:60]!r}, the import writes {wrote[:80]!r}: {WEIGHTS_CANNOT_TELL}; "
                                  "nothing written (docs/byo-model.md)")


def where_the_app_finds(out: Path) -> str:
    """Exactly what lists the new folder in the app's model picker."""
    folders, chosen_by = models_folders()
    if out.resolve().parent in folders:
        return f"open it in the app (transformer-viz app): its model picker lists {out.name} ({chosen_by})"
    return (f"the app does not list it there: start it with transformer-viz app --models {out.resolve().parent} "
            f"(that folder's models only), or import into {user_models_folder()}, listed beside the shipped "
            "models (docs/byo-model.md)")


if __name__ == "__main__":
    main()
