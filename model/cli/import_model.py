"""`import`: a Transformer trained with PyTorch's translation tutorial or the Annotated Transformer, as a
model folder the app opens (docs/byo-model.md)."""
from __future__ import annotations

import argparse

from model.cli.arguments import positive_int
from model.io.importer import SHAPES, import_model


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(
        description="Import a checkpoint (a state_dict saved with torch.save, or .safetensors) of PyTorch's "
                    "translation tutorial (Seq2SeqTransformer) or the Annotated Transformer (make_model), with "
                    "its vocabularies, as a model folder the app opens.")
    parser.add_argument("checkpoint", help="model.state_dict() saved with torch.save (.pt/.pth) or as .safetensors")
    parser.add_argument("--heads", type=positive_int, required=True,
                        help="attention heads (nhead / h): the weights do not show how d_model was split")
    parser.add_argument("--src-vocab", help="the source vocabulary: tokens one a line in id order, or a tokenizers JSON")
    parser.add_argument("--tgt-vocab", help="the target vocabulary, likewise")
    parser.add_argument("--vocab", help="one vocabulary for both sides, instead of --src-vocab and --tgt-vocab")
    parser.add_argument("--shape", choices=SHAPES, default=None, help="which project's model (default: read from "
                        "the weights' names)")
    parser.add_argument("--out", required=True, help="the model folder to write (new, or empty); put it under "
                        "pretrained/ for the app to list it")
    args = parser.parse_args(argv)
    out = import_model(args.checkpoint, args.out, args.heads, vocab=args.vocab, src_vocab=args.src_vocab,
                       tgt_vocab=args.tgt_vocab, shape=args.shape)
    print(f"imported {args.checkpoint} -> {out} (open it in the app: its model picker lists the folders of "
          f"{out.parent})")


if __name__ == "__main__":
    main()
