#!/usr/bin/env python3
"""Fail when a crate's top-level modules import each other in a cycle.

Usage: layers.py [SRC_DIR] [--max-entries N] [--strict-paths] [--graph] [--files]

Reads every `crate::<module>` path in SRC_DIR (kaspar/src when none is
given; in `use` lines and in inline paths), maps each file to its
top-level module (the folder or file directly under src/), and reports
every strongly connected component of more than one module. `--files`
prints the file-level graph's cycles instead, for exploring; `--graph`
prints the module graph.

`--max-entries N` also fails when SRC_DIR holds more than N entries at its
top level. `--strict-paths` fails on a `crate::` path whose first segment
is not a top-level module (an item re-exported at the crate root), since
such a path hides the edge to the module that defines the item.
"""
import os
import re
import sys
from collections import defaultdict

DEFAULT_ROOT = os.path.join(os.path.dirname(__file__), "..", "..", "kaspar", "src")
ROOT = DEFAULT_ROOT
PATH = re.compile(r"\bcrate::([a-z_][a-z0-9_]*)((?:::[a-z_][a-z0-9_]*)*)")
ANY_HEAD = re.compile(r"\bcrate::([A-Za-z_][A-Za-z0-9_]*)")
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


def parse_args(argv):
    root, max_entries, flags, i = DEFAULT_ROOT, None, set(), 0
    while i < len(argv):
        arg = argv[i]
        if arg == "--max-entries":
            if i + 1 >= len(argv) or not argv[i + 1].isdigit():
                sys.exit("layers: --max-entries needs a number")
            max_entries = int(argv[i + 1])
            i += 1
        elif arg in ("--files", "--graph", "--strict-paths"):
            flags.add(arg)
        elif arg.startswith("-"):
            sys.exit(f"layers: unknown option {arg}")
        else:
            root = arg
        i += 1
    if not os.path.isdir(root):
        sys.exit(f"layers: {root} is not a directory")
    return root, max_entries, flags


def main():
    global ROOT
    ROOT, max_entries, flags = parse_args(sys.argv[1:])
    name = os.path.relpath(ROOT)
    by_files = "--files" in flags
    all_files = list(files())
    modules = {module_of(f) for f in all_files}
    tops = {top_of(f) for f in all_files}
    aliases = set()
    graph = defaultdict(set)
    for f in all_files:
        src = top_of(f) if not by_files else module_of(f)
        if src in IGNORED:
            continue
        graph.setdefault(src, set())
        with open(f, encoding="utf-8") as fh:
            text = fh.read()
            if "--strict-paths" in flags:
                heads = ANY_HEAD.findall(strip_comments(text))
                heads += [p[0] for p in refs(text) if p and p[0] != "self"]
                for head in heads:
                    if head not in tops and head not in IGNORED:
                        aliases.add(f"{os.path.relpath(f, ROOT)}: crate::{head}")
            for parts in refs(text):
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
    if "--graph" in flags:
        for k in sorted(graph):
            print(f"{k} -> {', '.join(sorted(graph[k]))}")
    failed = False
    if "--strict-paths" in flags and not by_files and aliases:
        for a in sorted(aliases):
            print(f"path through a crate-root re-export: {a}")
        print(f"{name}: name the module an item lives in, so the layer edge is seen")
        failed = True
    cycles = sccs(graph)
    for comp in cycles:
        print("import cycle between: " + ", ".join(comp))
    if cycles and not by_files:
        print(f"{name}: folders must depend only on the layers below them (DESIGN §8)")
        return 1
    if not cycles:
        print(f"{name}: no import cycle among {len(graph)} {'files' if by_files else 'top-level modules'}")
    if max_entries is not None:
        entries = len(os.listdir(ROOT))
        if entries > max_entries:
            print(f"{name}: {entries} top-level entries (at most {max_entries})")
            failed = True
        else:
            print(f"{name}: {entries} top-level entries (at most {max_entries})")
    return 1 if cycles or failed else 0


if __name__ == "__main__":
    sys.exit(main())
