"""What every command shares about a person's mistakes: argument types that refuse nonsense (argparse then
prints its usage, `error: argument --beam: ...` and exits 2) and the one-line error of a command that fails."""
from __future__ import annotations

import argparse
import math
import os
import stat
import sys
import tempfile
from pathlib import Path

from model.io.files import describe_kind
from model.io.models import DEFAULT_MODEL, MODELS_ENV, find_model
from model.io.tokenizer import DEFAULT_STYLE, STYLE_TOKENS


MAX_WHOLE_NUMBER = 10 ** 9    # no count a command takes comes near it; 5,000 digits would not even print


def whole_number(text: str, least: int) -> int:
    """A whole number from `least` to MAX_WHOLE_NUMBER. Only the first 20 characters of a refused value are quoted."""
    shown = repr(text) if len(text) <= 20 else repr(text[:20]) + f"… ({len(text):,} characters)"
    if len(text.strip().lstrip("+-")) > 12:                  # int() of 4,301 digits raises; 4,300 would not print
        raise argparse.ArgumentTypeError(f"{shown} is not a whole number from {least} to {MAX_WHOLE_NUMBER:,}")
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{shown} is not a whole number") from None
    if value < least:
        raise argparse.ArgumentTypeError(f"must be {least} or more, got {value}")
    if value > MAX_WHOLE_NUMBER:
        raise argparse.ArgumentTypeError(f"at most {MAX_WHOLE_NUMBER:,}, got {value}")
    return value


def positive_int(text: str) -> int:
    """A whole number from 1: --beam, --limit, --pairs, --average, --batch-tokens, ..."""
    return whole_number(text, 1)


def non_negative_int(text: str) -> int:
    """A whole number from 0: --no-repeat-ngram (0: off)."""
    return whole_number(text, 0)


def int_up_to(most: int):
    """An argparse type: a whole number from 1 to `most`."""
    def parse(text: str) -> int:
        value = positive_int(text)
        if value > most:
            raise argparse.ArgumentTypeError(f"at most {most}, got {value}")
        return value
    return parse


MAX_BEAM = 16       # the app offers 8; wider searches multiply memory by the beam for little gain
beam_size = int_up_to(MAX_BEAM)
MAX_THREADS = 256   # --threads 100000 made OpenMP run out of memory ("libgomp: Out of memory") before any work
thread_count = int_up_to(MAX_THREADS)
MAX_TOY_STEPS = 1_000_000   # the shipped toys train 800 steps in minutes; a million is days


def _number(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"must be a finite number, got {text!r}")
    return value


def probability(text: str) -> float:
    """--dropout, --smoothing: 0 <= p < 1."""
    value = _number(text)
    if not 0 <= value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 0 and below 1, got {value:g}")
    return value


def learning_rate(text: str) -> float:
    """--lr: above 0 and at most 1."""
    value = _number(text)
    if not 0 < value <= 1:
        raise argparse.ArgumentTypeError(f"must be above 0 and at most 1, got {value:g}")
    return value


def minutes(text: str) -> float:
    """A finite number of minutes >= 0 (0: stop at the first chance)."""
    value = _number(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be a number of minutes, 0 or more, got {text!r}")
    return value


def output_file(path: str, flag: str = "--out") -> Path:
    """A file a command will write, checked before its work: not empty, not a symbolic link (write it with
    files.write_replacing, which never follows one), not a device, pipe or folder (writing /dev/full fails, a
    FIFO blocks until someone reads), in a folder that exists. ValueError else."""
    if not path.strip():
        raise ValueError(f"{flag}: empty; give a file name")
    out = Path(path)
    if out.is_symlink():
        raise ValueError(f"{flag} {path}: a symbolic link; not written (it would overwrite the file it points to): "
                         "give the file's own name")
    if out.exists():
        mode = os.stat(out).st_mode
        if not stat.S_ISREG(mode):
            raise ValueError(f"{flag} {path}: {describe_kind(mode)}, not a regular file; not written")
    elif not out.parent.is_dir():
        raise ValueError(f"{flag} {path}: cannot write it, no folder {out.parent}")
    return out


def output_folder(path: str, flag: str = "--out") -> Path:
    """A folder a command will fill, made (with its parents) and tried with a file before any work, so a
    folder that cannot be written fails now, not after an hour of training. ValueError / OSError else."""
    if not path.strip():
        raise ValueError(f"{flag}: empty; give a folder")
    out = Path(path)
    if out.is_symlink():
        raise ValueError(f"{flag} {path}: a symbolic link; not written into (its files would land where it points): "
                         "give the folder's own name")
    if out.exists() and not out.is_dir():
        raise ValueError(f"{flag} {path}: {describe_kind(os.stat(out).st_mode)}, not a folder")
    try:
        out.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=out):
            pass
    except OSError as e:
        raise OSError(f"{flag} {path}: cannot write there ({e.strerror or e})") from None
    return out


def fail(error: Exception | str) -> int:
    """One line on stderr and exit status 2, as argparse does for bad arguments."""
    print(f"error: {' '.join(str(error).split())}", file=sys.stderr)
    return 2


def add_style_argument(parser) -> None:
    """--style: which Spanish a two-style model writes (its style token leads the source); a one-style
    model ignores it."""
    parser.add_argument("--style", choices=tuple(STYLE_TOKENS), default=None,
                        help=f"a two-style model: write modern Spanish or the 1909 Bible's (default: {DEFAULT_STYLE})")


def add_model_argument(parser, flag: str = "--model", default: str | None = DEFAULT_MODEL, with_models: bool = True,
                       what: str = "the model") -> None:
    """--model (or another flag): a model's name in the models folder or a model folder; and --models, the
    folder that holds the models. resolve_models turns the names into folders once the arguments are parsed."""
    parser.add_argument(flag, default=default, required=default is None,
                        help=f"{what}: a name (en-es, toy-reverse, ... in the models folder) or a model folder"
                             + (f" (default: {default})" if default else ""))
    if with_models:
        parser.add_argument("--models", default=None, metavar="DIR",
                            help=f"the folder that holds the models (default: ${MODELS_ENV}, else the shipped models and "
                                 "yours in ~/.local/share/transformer-viz/models)")


def resolve_models(args, *dests: str) -> None:
    """Each named argument (default: model), a name or a folder, becomes its folder (model/io/models.find_model);
    a CheckpointError names what was looked for and where, before any work."""
    for dest in dests or ("model",):
        if getattr(args, dest) is not None:
            setattr(args, dest, find_model(getattr(args, dest), args.models))


def add_no_repeat_argument(parser) -> None:
    """--no-repeat-ngram N: decoding never repeats an n-gram of N tokens (off by default: a loop shows)."""
    parser.add_argument("--no-repeat-ngram", type=non_negative_int, default=0, metavar="N",
                        help="block any repeated n-gram of N output tokens while decoding, e.g. 3 (default 0: off)")

