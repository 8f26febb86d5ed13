"""`python -m model.cli COMMAND ...`: the library's command-line tools, and the dispatcher every entry point
shares. `transformer-viz COMMAND` (transformer_viz/__main__.py, above model/ and viz/) runs these and the
commands that need the app as well (lesson)."""
from __future__ import annotations

import importlib
import sys

from model import runtime
from model.cli.arguments import fail

COMMANDS = {   # name -> (module with main(argv), what it does)
    "translate": ("model.cli.translate", "translate text with a model folder"),
    "trace": ("model.cli.trace", "capture a Trace of one sentence to an .npz file"),
    "train": ("model.cli.train", "train a toy task model or the en-es translator"),
    "evaluate": ("model.cli.evaluate", "BLEU and chrF of a model on a test TSV"),
    "export": ("model.cli.export", "export a training run to a shipped model folder"),
    "import": ("model.cli.import_model", "a model trained with PyTorch's tutorial or the Annotated Transformer, "
                                         "as a model folder"),
    "data": ("model.cli.data", "build the en-es corpus from the SWORD Bible modules"),
    "examples": ("model.cli.examples", "choose a model's example sentences by measuring them (presets.txt)"),
    "sweep": ("model.cli.sweep", "train a few settings side by side and rank them on the dev set"),
    "judge": ("model.cli.judge", "should a retrained model replace the shipped one? (dev, test, repeats, everyday, size)"),
    "train-rnn": ("model.cli.train_rnn", "train GRU encoder-decoders with and without attention on a toy task"),
    "fit-zoo": ("model.cli.fit_zoo", "fit the attention zoo's general and additive scores to a model's heads"),
}
USAGE = "python -m model.cli COMMAND [options]   (every command, the app and the lesson too: transformer-viz COMMAND)"


def usage(commands: dict[str, tuple[str, str]], usage_line: str) -> str:
    width = max(map(len, commands))
    listed = "\n".join(f"  {name:<{width}}  {text}" for name, (_module, text) in commands.items())
    return f"usage: {usage_line}\n\ncommands:\n{listed}"


def dispatch(argv: list[str], commands: dict[str, tuple[str, str]], usage_line: str = USAGE,
             program: str = "python -m model.cli") -> int:
    """Run commands[argv[0]]'s main(argv[1:]); a person's mistake (ValueError, OSError) is one line, exit 2.
    Its usage and errors name the program as typed (`transformer-viz lesson`), not Python's `__main__.py`."""
    if not argv or argv[0] not in commands:
        print(usage(commands, usage_line), file=sys.stderr if argv and argv[0] not in ("-h", "--help") else sys.stdout)
        return 0 if argv and argv[0] in ("-h", "--help") else 2
    runtime.configure()     # before a command imports torch: idle OpenMP threads sleep (spinning ones made
    module = importlib.import_module(commands[argv[0]][0])      # evaluate 20x slower on a busy machine)
    sys.argv[0] = f"{program} {argv[0]}"      # argparse's prog: the basename of sys.argv[0]
    try:
        result = module.main(argv[1:])
    except (ValueError, OSError) as e:   # a person's mistake, one line and no traceback: InputError, CheckpointError,
        return fail(e)                   # a file read_tsv refuses and a device pick_device refuses are ValueErrors
    return result if isinstance(result, int) else 0


def main(argv: list[str] | None = None) -> int:
    return dispatch(sys.argv[1:] if argv is None else argv, COMMANDS)


if __name__ == "__main__":
    sys.exit(main())
