#!/usr/bin/env python3
"""Check the guide's image references, as .ci/steps/book.sh runs it.

For every chapter under book/src (every .md file), finds each image it
embeds: markdown images, inline `![alt](path "title")` and by reference
`![alt][label]` / `![label]` with a `[label]: path` definition, and HTML
`<img src="...">`. Fenced code blocks, inline code spans and HTML comments
are skipped, so `vec![..]` in a Rust sample is not an image.

Fails (exit 1), naming the chapter, the line and the path, when a local
image does not resolve, relative to the chapter, to a file inside book/src
(mdBook copies only book/src into the built book, so a file elsewhere in
the repo would still be a broken image to the reader). Also fails when a
file under book/src/figures/ is referenced by no chapter (an image or a
plain link counts), to keep that folder honest.

`--pages FILE` writes the rendered pages to open in a browser, one
`page.html count` line per chapter that embeds at least one image (count is
how many images its markdown embeds), plus performance and introduction
always.
"""
import argparse
import os
import re
import sys
from urllib.parse import unquote

ALWAYS_RENDERED = ("performance.md", "introduction.md")

FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
CODE_SPAN = re.compile(r"(`+)(.+?)\1")
# Link text may hold one level of nested brackets: ![a [b] c](x).
TEXT = r"\[((?:[^\[\]\\]|\\.|\[[^\[\]]*\])*)\]"
DEST = r"\(\s*(<[^>\n]*>|[^\s()]+(?:\([^\s()]*\)[^\s()]*)*)(?:\s+(?:\"[^\"]*\"|'[^']*'|\([^)]*\)))?\s*\)"
INLINE_IMAGE = re.compile(r"!" + TEXT + DEST)
INLINE_LINK = re.compile(r"(?<!!)" + TEXT + DEST)
REF_IMAGE = re.compile(r"!" + TEXT + r"(?:\[([^\]]*)\])?(?![(\[:])")
REF_DEF = re.compile(r"^ {0,3}\[([^\]]+)\]:\s*(<[^>]*>|\S+)")
IMG_TAG = re.compile(r"<img\b[^>]*?\ssrc\s*=\s*(?:\"([^\"]*)\"|'([^']*)'|([^\s>]+))", re.I)


def label_key(label):
    return " ".join(label.split()).lower()


def prose_lines(text):
    """Yields (line number, line) for the lines mdBook renders as markdown,
    with code spans and HTML comments blanked out (columns kept)."""
    fence = None
    in_comment = False
    for number, line in enumerate(text.splitlines(), 1):
        if fence is not None:
            m = FENCE.match(line)
            if m and m.group(1)[0] == fence[0] and len(m.group(1)) >= len(fence) \
                    and not line.strip()[len(m.group(1)):].strip():
                fence = None
            continue
        m = FENCE.match(line)
        if m and not in_comment:
            fence = m.group(1)
            continue
        # HTML comments, possibly spanning lines.
        out = []
        i = 0
        while i < len(line):
            if in_comment:
                end = line.find("-->", i)
                if end < 0:
                    out.append(" " * (len(line) - i))
                    i = len(line)
                else:
                    out.append(" " * (end + 3 - i))
                    i = end + 3
                    in_comment = False
            else:
                start = line.find("<!--", i)
                if start < 0:
                    out.append(line[i:])
                    i = len(line)
                else:
                    out.append(line[i:start])
                    i = start
                    in_comment = True
        line = "".join(out)
        line = CODE_SPAN.sub(lambda m: " " * len(m.group(0)), line)
        yield number, line


def strip_dest(dest):
    dest = dest.strip()
    if dest.startswith("<") and dest.endswith(">"):
        dest = dest[1:-1]
    return dest


def is_remote(target):
    return re.match(r"^[a-zA-Z][a-zA-Z0-9+.-]*:", target) is not None or target.startswith("//")


def resolve(src_root, chapter, target):
    """The file a local target names, as an absolute normalised path."""
    path = unquote(target.split("#", 1)[0].split("?", 1)[0])
    if path.startswith("/"):
        return os.path.normpath(os.path.join(src_root, path.lstrip("/")))
    return os.path.normpath(os.path.join(os.path.dirname(chapter), path))


def scan(chapter):
    """Images and links of one chapter: ([(line, target)], [(line, target)])."""
    with open(chapter, encoding="utf-8") as f:
        text = f.read()
    lines = list(prose_lines(text))
    defs = {}
    for _, line in lines:
        m = REF_DEF.match(line)
        if m:
            defs.setdefault(label_key(m.group(1)), strip_dest(m.group(2)))
    images, links = [], []
    for number, line in lines:
        for m in INLINE_IMAGE.finditer(line):
            images.append((number, strip_dest(m.group(2))))
        rest = INLINE_IMAGE.sub(lambda m: " " * len(m.group(0)), line)
        for m in REF_IMAGE.finditer(rest):
            label = m.group(2) if m.group(2) else m.group(1)
            key = label_key(label)
            if key in defs:
                images.append((number, defs[key]))
            elif m.group(2) is not None:
                images.append((number, f"[{label}] (no such reference definition)"))
        for m in IMG_TAG.finditer(line):
            images.append((number, next(g for g in m.groups() if g is not None)))
        for m in INLINE_LINK.finditer(rest):
            links.append((number, strip_dest(m.group(2))))
    links.extend((0, target) for target in defs.values())
    return images, links


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("src", nargs="?", default="book/src")
    parser.add_argument("--pages", help="write the pages to render here")
    args = parser.parse_args()

    src_root = os.path.abspath(args.src)
    figures = os.path.join(src_root, "figures")
    rel = lambda p: os.path.relpath(p)  # noqa: E731
    chapters = sorted(
        os.path.join(d, n)
        for d, _, names in os.walk(src_root)
        for n in names
        if n.endswith(".md")
    )
    errors = []
    referenced = set()
    embedding = {}
    count = 0
    for chapter in chapters:
        images, links = scan(chapter)
        for number, target in images:
            count += 1
            embedding[chapter] = embedding.get(chapter, 0) + 1
            where = f"{rel(chapter)}:{number}"
            if target.endswith("(no such reference definition)"):
                errors.append(f"{where}: image {target}")
                continue
            if not target:
                errors.append(f"{where}: image with an empty path")
                continue
            if is_remote(target):
                if target.startswith("data:"):
                    continue
                errors.append(f"{where}: image {target} is remote; the guide ships its figures under book/src/figures/")
                continue
            path = resolve(src_root, chapter, target)
            referenced.add(path)
            if not os.path.isfile(path):
                errors.append(f"{where}: image {target} does not resolve: no file {rel(path)}")
            elif os.path.commonpath([path, src_root]) != src_root:
                errors.append(f"{where}: image {target} is {rel(path)}, outside book/src: mdBook does not copy it into the book")
        for _, target in links:
            if target and not is_remote(target):
                referenced.add(resolve(src_root, chapter, target))

    figure_files = sorted(
        os.path.join(d, n) for d, _, names in os.walk(figures) for n in names
    ) if os.path.isdir(figures) else []
    for path in figure_files:
        if os.path.normpath(path) not in referenced:
            errors.append(f"{rel(path)}: referenced by no chapter (an orphan: embed it or delete it)")

    for error in errors:
        print(f"book images: {error}", file=sys.stderr)
    if errors:
        print(f"book images: {len(errors)} problem(s) (see above)", file=sys.stderr)
        return 1

    print(f"book images: {count} image reference(s) in {len(embedding)} chapter(s) resolve; "
          f"{len(figure_files)} file(s) in book/src/figures/, none orphaned")
    if args.pages:
        pages = {}
        for name in ALWAYS_RENDERED:
            path = os.path.join(src_root, name)
            if os.path.exists(path):
                pages[path] = 0
        pages.update(embedding)
        with open(args.pages, "w", encoding="utf-8") as f:
            for chapter, n in sorted(pages.items()):
                page = os.path.relpath(chapter, src_root)[: -len(".md")] + ".html"
                f.write(f"{page} {n}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
