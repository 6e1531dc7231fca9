"""How many services each service reaches through the dependency graph, in linear time.

`apps import` picks the entry of an app with no other clue as the service reaching the most others.
A search from every service is quadratic in the services and, scanning the edge list per step, was
cubic: 3,000 services took minutes (issue 32). Here the graph's strongly connected components are
found once (Kosaraju, iteratively: a 3,000-long call chain would overflow Python's stack), and each
component's reach is the union of its successors', a bit set per component.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence


def reach_counts(nodes: Sequence[str], edges: Iterable[tuple[str, str]]) -> dict[str, int]:
    """For each node, the number of nodes reachable from it, itself included."""
    index = {n: i for i, n in enumerate(nodes)}
    out: list[list[int]] = [[] for _ in nodes]
    back: list[list[int]] = [[] for _ in nodes]
    for a, b in edges:
        if a in index and b in index:
            out[index[a]].append(index[b])
            back[index[b]].append(index[a])
    comp = _components(out, back)
    count = max(comp, default=-1) + 1
    members = [0] * count
    succ: list[set[int]] = [set() for _ in range(count)]
    for v, c in enumerate(comp):
        members[c] |= 1 << v
        succ[c].update(comp[w] for w in out[v] if comp[w] != c)
    # Kosaraju numbers components in topological order of the graph: successors come later
    bits = [0] * count
    for c in range(count - 1, -1, -1):
        total = members[c]
        for s in succ[c]:
            total |= bits[s]
        bits[c] = total
    return {n: bits[comp[i]].bit_count() for i, n in enumerate(nodes)}


def _components(out: list[list[int]], back: list[list[int]]) -> list[int]:
    """Each node's strongly connected component, numbered in topological order."""
    order: list[int] = []
    seen = [False] * len(out)
    for start in range(len(out)):
        if seen[start]:
            continue
        seen[start] = True
        stack = [(start, 0)]
        while stack:
            v, i = stack[-1]
            if i < len(out[v]):
                stack[-1] = (v, i + 1)
                w = out[v][i]
                if not seen[w]:
                    seen[w] = True
                    stack.append((w, 0))
            else:
                stack.pop()
                order.append(v)
    comp = [-1] * len(out)
    count = 0
    for start in reversed(order):
        if comp[start] >= 0:
            continue
        comp[start] = count
        todo = [start]
        while todo:
            v = todo.pop()
            for w in back[v]:
                if comp[w] < 0:
                    comp[w] = count
                    todo.append(w)
        count += 1
    return comp
