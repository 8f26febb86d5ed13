"""Build the en-es corpus from the SWORD Bible modules: python -m model.cli data --out data/en-es."""
from __future__ import annotations

import argparse
import json
import shutil
from pathlib import Path

from model.cli.arguments import positive_int
from model.training.corpus import SEED, build_corpus, split_pairs, token_stats, write_tsv


def main(argv: list[str] | None = None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", required=True, help="output folder, e.g. data/en-es")
    ap.add_argument("--test-copy", help="also copy test.tsv here (e.g. pretrained/en-es/test.tsv)")
    ap.add_argument("--vocab-size", type=positive_int, default=8000)
    ap.add_argument("--seed", type=int, default=SEED)
    args = ap.parse_args(argv)

    from model.io.tokenizer import Tokenizer
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    pairs, stats = build_corpus()
    splits = split_pairs(pairs, args.seed)
    for name, split in splits.items():
        write_tsv(out / f"{name}.tsv", split)
    # train-only tokenizer: dev/test text must not shape the vocabulary
    tok = Tokenizer.train_bpe([t for p in splits["train"] for t in p], args.vocab_size)
    tok.save(out / "tokenizer.json")
    stats |= {"split": {s: len(p) for s, p in splits.items()}, "seed": args.seed,
              "tokenizer": {"vocab_size": tok.vocab_size, "mean_tokens": token_stats(tok, splits)}}
    (out / "stats.json").write_text(json.dumps(stats, indent=2, ensure_ascii=False) + "\n",
                                    encoding="utf-8")
    if args.test_copy:
        Path(args.test_copy).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(out / "test.tsv", args.test_copy)
    print_summary(stats, out)
    return stats


def print_summary(stats: dict, out: Path) -> None:
    print(f"pairs kept: {stats['pairs']}  dropped: {stats['dropped']}")
    print(f"split sizes: {stats['split']}  -> {out}")
    for lang, rep in stats["glued_words"].items():
        for when in ("before", "after"):
            r = rep[when]
            print(f"glued words {lang} {when:6s}: camelCase={r['camel_case']:5d} "
                  f"two-known-words={r['two_known_words']:5d}  e.g. {r['examples'][:6]}")
    print(f"tokenizer: vocab {stats['tokenizer']['vocab_size']}, "
          f"mean tokens/pair {stats['tokenizer']['mean_tokens']}")


if __name__ == "__main__":
    main()
