"""What a command is doing, on stderr, while a person watches: a line for each stage that can take seconds (loading
torch and a model took 10-36 s on a loaded machine, a lesson 27-36 s, the figures 54-64 s, all in silence), and a
bar where there is something to count. Only when stderr is a terminal: scripts and tests read clean output."""
from __future__ import annotations

import sys

from tqdm import tqdm


def watching() -> bool:
    return sys.stderr.isatty()


def step(what: str) -> None:
    """One line saying what comes next (`… loading the model en-es`)."""
    if watching():
        print(f"… {what}", file=sys.stderr, flush=True)


def bar(total: int, what: str) -> tqdm:
    """A progress bar of `total` items on stderr (drawn only while a person watches)."""
    return tqdm(total=total, desc=what, disable=not watching(), file=sys.stderr, leave=False)


def counted(shown: tqdm):
    """on_file(done, total) for a bar whose total is known only once the work starts (the figures of a trace)."""
    def on_file(done: int, total: int) -> None:
        shown.total, shown.n = total, done
        shown.refresh()
    return on_file
