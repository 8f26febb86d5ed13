"""Errors a person causes, as opposed to bugs: what the interfaces turn into a sentence, never a traceback.

InputError: input a person typed that the model cannot read. It carries a message key and values as
well as its English text, so an interface can say it in the reader's language (viz/locales, key
`input.<key>`); scripts and logs read the English.
CheckpointError: a model folder that cannot be loaded, naming the file and the problem (model/io/checkpoint.py).
"""
from __future__ import annotations


class InputError(ValueError):
    def __init__(self, key: str, english: str, **values):
        self.key, self.values = key, values
        super().__init__(english)


class CheckpointError(ValueError):
    """A model folder that cannot be loaded: the message names the file and the problem."""
