#!/usr/bin/env python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""Lists the include cycles among the modules of each folder given.

A module is x.c with x.h; it depends on module y when one of its files
has #include "y.h" (a header of the same folder). A cycle is a set of
modules each reaching the others: none of them can be read, tested or
replaced without the rest. Exits 1 when there is one, naming them.
"""
import os
import re
import sys

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"/]+)\.h"', re.M)


def graph(folder):
    names = [f for f in os.listdir(folder) if f.endswith(('.c', '.h'))]
    modules = {os.path.splitext(f)[0] for f in names}
    deps = {m: set() for m in modules}
    for f in names:
        with open(os.path.join(folder, f), encoding='utf-8', errors='replace') as src:
            text = src.read()
        m = os.path.splitext(f)[0]
        deps[m] |= {d for d in INCLUDE.findall(text) if d in modules and d != m}
    return deps


def cycles(deps):
    """The strongly connected components of more than one module (Tarjan)."""
    index, low, stack, on_stack, found = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(deps[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                found.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in sorted(deps):
        if v not in index:
            visit(v)
    return found


def main():
    bad = 0
    for folder in sys.argv[1:]:
        for comp in cycles(graph(folder)):
            print(f"{folder}: include cycle among {', '.join(comp)}: make one own what they share "
                  "and the others read it through its header", file=sys.stderr)
            bad = 1
    return bad


if __name__ == '__main__':
    sys.exit(main())
