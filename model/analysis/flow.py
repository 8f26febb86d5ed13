"""Attention rollout and attention flow (Abnar & Zuidema, 2020): how much each output position of
a self-attention stack draws on each input position, through every layer and the residual path.
Pure numpy."""
from __future__ import annotations

from collections import deque
from typing import Callable

import numpy as np

MAX_FLOW_TOKENS = 32
Progress = Callable[[int, int], None]


def residual_attention(patterns, residual: float = 0.5) -> np.ndarray:
    """[L,S,S]: per layer, heads averaged, Â = (1-r)·A + r·I (the residual path), rows renormalised."""
    a = np.asarray(patterns, dtype=np.float64)
    if a.ndim != 4 or a.shape[2] != a.shape[3] or 0 in a.shape:
        raise ValueError(f"expected self-attention patterns [layer, head, S, S], got shape {a.shape}")
    mixed = (1 - residual) * a.mean(1) + residual * np.eye(a.shape[2])[None]      # [L,S,S]
    return mixed / mixed.sum(-1, keepdims=True)


def attention_rollout(patterns, residual: float = 0.5) -> np.ndarray:
    """[S,S]: row i = how much the last layer's position i draws on input token j, R = Â_L ··· Â_1."""
    layers = residual_attention(patterns, residual)
    rollout = layers[0]
    for a in layers[1:]:
        rollout = a @ rollout                                                      # [S,S]
    return rollout


class FlowNetwork:
    """A directed graph with real capacities; max_flow by Dinic's algorithm (BFS levels + DFS)."""

    EPS = 1e-12

    def __init__(self, n_nodes: int):
        self.n = n_nodes
        self.adj: list[list[int]] = [[] for _ in range(n_nodes)]   # edge ids leaving each node
        self.to: list[int] = []
        self.cap: list[float] = []                                 # edge e's reverse is e ^ 1

    def add_edge(self, u: int, v: int, capacity: float) -> None:
        if capacity < 0:
            raise ValueError("capacities must be non-negative")
        for a, b, c in ((u, v, float(capacity)), (v, u, 0.0)):
            self.adj[a].append(len(self.to))
            self.to.append(b)
            self.cap.append(c)

    def max_flow(self, source: int, sink: int) -> float:
        if source == sink:
            raise ValueError("source and sink must differ")
        residual = list(self.cap)
        # No flow can exceed what leaves the source or enters the sink: stop as soon as it is reached.
        bound = min(sum(residual[e] for e in self.adj[source]), sum(self.cap[e ^ 1] for e in self.adj[sink]))
        total = 0.0
        while total < bound * (1 - 1e-12):
            level = self._levels(source, sink, residual)
            if level[sink] < 0:
                break
            cursor = [0] * self.n
            while (pushed := self._augment(source, sink, residual, level, cursor)) > self.EPS:
                total += pushed
        return total

    def _levels(self, source: int, sink: int, residual: list[float]) -> list[int]:
        """BFS distances from the source in the residual graph, cut at the sink's distance."""
        level = [-1] * self.n
        level[source] = 0
        queue = deque([source])
        while queue:
            u = queue.popleft()
            if level[sink] >= 0 and level[u] >= level[sink] - 1:
                break                            # nothing further can lie on a shortest path
            for e in self.adj[u]:
                v = self.to[e]
                if level[v] < 0 and residual[e] > self.EPS:
                    level[v] = level[u] + 1
                    queue.append(v)
        if level[sink] >= 0:                     # other nodes as far as the sink are dead ends
            far = level[sink]
            level = [lv if lv < far else -1 for lv in level]
            level[sink] = far
        return level

    def _augment(self, source: int, sink: int, residual: list[float], level: list[int], cursor: list[int]) -> float:
        """One augmenting path in the level graph (iterative DFS with current-arc pointers)."""
        path: list[int] = []                    # edge ids from source
        u = source
        while True:
            if u == sink:
                pushed = min(residual[e] for e in path)
                for e in path:
                    residual[e] -= pushed
                    residual[e ^ 1] += pushed
                return pushed
            edges = self.adj[u]
            while cursor[u] < len(edges):
                e = edges[cursor[u]]
                if residual[e] > self.EPS and level[self.to[e]] == level[u] + 1:
                    break
                cursor[u] += 1
            if cursor[u] < len(edges):
                e = edges[cursor[u]]
                path.append(e)
                u = self.to[e]
            else:                               # dead end: retreat and skip the edge that led here
                if not path:
                    return 0.0
                level[u] = -1
                e = path.pop()
                u = self.to[e ^ 1]
                cursor[u] += 1


def attention_flow(patterns, residual: float = 0.5, normalize: bool = True,
                   max_tokens: int = MAX_FLOW_TOKENS, progress: Progress | None = None) -> np.ndarray:
    """[S,S]: max-flow from input token j (layer 0) to position i after the last layer.

    Nodes are (layer, position); an edge from (l-1, j) to (l, i) has capacity Â_l[i, j] (see
    residual_attention). One max-flow problem per (i, j) pair, so inputs are limited to
    `max_tokens`. With normalize, each row is divided by its sum, as Abnar & Zuidema do.
    """
    layers = residual_attention(patterns, residual)                                # [L,S,S]
    n_layers, n, _ = layers.shape
    if n > max_tokens:
        raise ValueError(f"attention flow is limited to {max_tokens} tokens (this input has {n}): it solves "
                         f"one max-flow problem per pair of tokens")
    net = FlowNetwork((n_layers + 1) * n)
    for layer, a in enumerate(layers):
        for i in range(n):
            for j in range(n):
                if a[i, j] > 0:
                    net.add_edge(layer * n + j, (layer + 1) * n + i, a[i, j])
    flow = np.zeros((n, n))
    for i in range(n):
        for j in range(n):
            flow[i, j] = net.max_flow(j, n_layers * n + i)
        if progress is not None:
            progress(i + 1, n)
    if normalize:
        flow = flow / np.maximum(flow.sum(-1, keepdims=True), 1e-30)
    return flow
