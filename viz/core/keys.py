"""What pages' shared builders (view.shared_cached) are keyed by, besides a Context's `traced`: classes a page cannot
define itself. A page runs as __main__ and defines its classes again every run, so an instance of one equals nothing
of the run before and its builders would build again every run (view.shared_cached refuses them)."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class DecodingSettings:
    """What the decoding page's step pictures are made with besides the step: its server widgets."""
    method: str
    beam: int
    layer: int
    k: int


@dataclass(frozen=True)
class Decoded:
    """A decoding as the decoding page's deck is built from it, compared and hashed by get_decoding's arguments alone
    (the model, the source, method, beam, limit, no-repeat): a shared builder takes it, so it is keyed by what
    determines the decoding (as a Context's `traced` by its trace key)."""
    args: tuple
    model: Any = field(compare=False, repr=False)     # viz/services/models.ModelView
    dec: Any = field(compare=False, repr=False)       # model.analysis.decoding.Decoding

    @property
    def model_id(self) -> str:
        return self.args[0]


@dataclass(frozen=True)
class FollowedQuery:
    """What the step-through page's deck (every head's nine steps) is built for besides the sentence: the page's
    server-side pickers (the kind, the query followed) and how many tokens the pictures show (window_size: this
    run's picture column)."""
    kind: str
    query: int
    size: int

    def head(self, layer: int, head: int) -> FollowedHead:
        return FollowedHead(self.kind, layer, head, self.query, self.size)


@dataclass(frozen=True)
class FollowedHead:
    """What one head's nine steps on the step-through page are built for besides the sentence: a FollowedQuery's
    kind, query and size, and the head (its layer and index) the deck picks."""
    kind: str
    layer: int
    head: int
    query: int
    size: int
