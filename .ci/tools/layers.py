#!/usr/bin/env python3
"""Fail when the runtime's top-level modules import each other in a cycle.

Reads every `crate::<module>` path in kaspar/src (in `use` lines and in
inline paths), maps each file to its top-level module (the folder or file
directly under src/), and reports every strongly connected component of
more than one module. `--files` prints the file-level graph's cycles
instead, for exploring.
"""
import os
import re
import sys
from collections import defaultdict

ROOT = os.path.join(os.path.dirname(__file__), "..", "..", "kaspar", "src")
PATH = re.compile(r"\bcrate::([a-z_][a-z0-9_]*)((?:::[a-z_][a-z0-9_]*)*)")
USE_GROUP = re.compile(r"\buse\s+crate::\{([^;]*)\};", re.S)
IGNORED = {"lib", "__private", "prelude", "sync"}  # sync: the loom shim, a leaf


def strip_comments(text):
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    return "\n".join(line.split("//", 1)[0] for line in text.splitlines())


def files():
    for dirpath, _, names in os.walk(ROOT):
        for name in names:
            if name.endswith(".rs"):
                yield os.path.join(dirpath, name)


def top_of(path):
    rel = os.path.relpath(path, ROOT)
    first = rel.split(os.sep)[0]
    return first[:-3] if first.endswith(".rs") else first


def module_of(path):
    rel = os.path.relpath(path, ROOT)[:-3].split(os.sep)
    if rel[-1] == "mod":
        rel = rel[:-1]
    return "::".join(rel)


def refs(text):
    text = strip_comments(text)
    # Also split grouped `use crate::{a::B, c::{D, E}}` into their heads.
    for group in USE_GROUP.findall(text):
        depth, head = 0, ""
        for ch in group:
            if ch == "{":
                depth += 1
            elif ch == "}":
                depth -= 1
            elif ch == "," and depth == 0:
                yield head.strip().split("::")
                head = ""
                continue
            head += ch
        if head.strip():
            yield head.strip().split("::")
    for first, rest in PATH.findall(text):
        yield [first] + [p for p in rest.split("::") if p]


def sccs(graph):
    index, low, stack, on, out, counter = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in list(graph):
        if v not in index:
            visit(v)
    return out


def main():
    by_files = "--files" in sys.argv
    all_files = list(files())
    modules = {module_of(f) for f in all_files}
    graph = defaultdict(set)
    for f in all_files:
        src = top_of(f) if not by_files else module_of(f)
        if src in IGNORED:
            continue
        graph.setdefault(src, set())
        with open(f, encoding="utf-8") as fh:
            for parts in refs(fh.read()):
                parts = [p for p in parts if p and p != "self"]
                if not parts or parts[0] in IGNORED:
                    continue
                if by_files:
                    # longest prefix that names a module file
                    dst = None
                    for n in range(len(parts), 0, -1):
                        cand = "::".join(parts[:n])
                        if cand in modules:
                            dst = cand
                            break
                    if dst is None:
                        continue
                else:
                    dst = parts[0]
                if dst != src and dst not in IGNORED:
                    graph[src].add(dst)
    if "--graph" in sys.argv:
        for k in sorted(graph):
            print(f"{k} -> {', '.join(sorted(graph[k]))}")
    cycles = sccs(graph)
    for comp in cycles:
        print("import cycle between: " + ", ".join(comp))
    if cycles and not by_files:
        print("the runtime's folders must depend only on the layers below them (DESIGN §8)")
        return 1
    if not cycles:
        print(f"no import cycle among {len(graph)} {'files' if by_files else 'top-level modules'}")
    return 1 if cycles else 0


if __name__ == "__main__":
    sys.exit(main())
