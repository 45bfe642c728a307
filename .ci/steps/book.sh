#!/usr/bin/env bash
# The guide (book/), checked as a reader sees it:
#   1. every image a chapter embeds (markdown `![..](..)`, inline or by
#      reference, and HTML `<img src>`; not inside code) resolves, relative
#      to the chapter, to a file in book/src, failing with the chapter, line
#      and path; and no file in book/src/figures/ is referenced by no
#      chapter (an orphan): .ci/tools/book_images.py;
#   2. every relative link in book/src points at a file (and a fragment at a
#      heading) that exists;
#   3. mdBook builds it without a warning;
#   4. headless Chromium (Debian's `chromium`, installed here when missing;
#      the step fails, never skips, when it cannot be) opens the built
#      performance and introduction chapters and every chapter that embeds
#      an image, served over http://127.0.0.1 by python3 -m http.server, and
#      fails if any image on a page does not load (complete, naturalWidth >
#      0, decoded; SVGs too): .ci/tools/book_render.cjs, driven by Node's
#      playwright-core (installed under target/book-check/). A full-page
#      screenshot of each page goes to target/book-check/screens/, never
#      into the repo.
# The guide's Rust samples are compiled separately, as doctests of the
# runtime crate (the `guide` module in kaspar/src/lib.rs), by
# `cargo test --workspace`.
set -euo pipefail
cd "$(dirname "$0")/../.."

MDBOOK_VERSION=0.4.52

if ! mdbook --version 2>/dev/null | grep -qF "v$MDBOOK_VERSION"; then
    # Only the search feature: the default `serve`/`watch` features pull in
    # an async web stack that a CI build never uses.
    cargo install mdbook --locked --version "$MDBOOK_VERSION" \
        --no-default-features --features search
fi

work=$(mktemp -d)
server_pid=""
cleanup() {
    if [ -n "$server_pid" ]; then
        kill "$server_pid" 2>/dev/null || true
        wait "$server_pid" 2>/dev/null || true
    fi
    rm -rf "$work"
}
trap cleanup EXIT

# 1. Every image reference resolves to a file in book/src, and no file in
#    book/src/figures/ is an orphan (with the chapter, line and path; first,
#    so that a broken image is reported here rather than as a bare broken
#    link by 2). Also lists the pages 4 renders.
python3 .ci/tools/book_images.py book/src --pages "$work/pages"

# 2. Every relative link in book/src points at a file that exists.
#    mdBook 0.4 only warns about (some) broken links, and the linkcheck
#    backend needs the network, so check here.
broken=0
while IFS= read -r md; do
    dir=$(dirname "$md")
    # Inline links and images: [text](target) / ![alt](target).
    while IFS= read -r target; do
        target=${target%% *}       # drop a "title"
        [ -z "$target" ] && continue
        case "$target" in
            http://*|https://*|mailto:*|/*) continue ;;
        esac
        file=${target%%#*}         # drop the fragment
        if [ -z "$file" ]; then
            file=$(basename "$md")  # a link within the same page
        fi
        if [ ! -e "$dir/$file" ]; then
            echo "broken link in $md: $target" >&2
            broken=1
            continue
        fi
        # A fragment must name a heading of the target page, spelt the way
        # mdBook makes heading ids: lower case, punctuation dropped, spaces
        # turned into dashes.
        case "$target" in
            *#*)
                frag=${target#*#}
                if ! grep -E '^#{1,6} ' "$dir/$file" \
                    | sed -E 's/^#+ +//; s/`//g' \
                    | tr '[:upper:]' '[:lower:]' \
                    | sed -E 's/[^a-z0-9 _-]//g; s/ /-/g' \
                    | grep -qxF -- "$frag"; then
                    echo "broken link in $md: $target (no such heading)" >&2
                    broken=1
                fi
                ;;
        esac
    done < <(grep -o '](\([^)]*\))' "$md" | sed 's/^](\(.*\))$/\1/')
done < <(find book/src -name '*.md')
if [ "$broken" -ne 0 ]; then
    echo "book: broken relative links (see above)" >&2
    exit 1
fi

# 3. Build, and treat any warning or error in mdBook's log as a failure.
log="$work/mdbook.log"
if ! mdbook build book 2>&1 | tee "$log"; then
    echo "book: mdbook build failed" >&2
    exit 1
fi
if grep -Eq '\b(WARN|ERROR)\b' "$log"; then
    echo "book: mdbook printed warnings (see above)" >&2
    exit 1
fi
echo "book: built into book/book"

# 4. Render the pages with images in headless Chromium, over http.
sudo_=""
[ "$(id -u)" -eq 0 ] || sudo_="sudo"
apt_install() {
    command -v apt-get >/dev/null 2>&1 || return 1
    $sudo_ apt-get update -qq && $sudo_ env DEBIAN_FRONTEND=noninteractive \
        apt-get install -y -qq "$@" >/dev/null
}
CHROMIUM=${CHROMIUM:-/usr/bin/chromium}
if [ ! -x "$CHROMIUM" ]; then
    echo "book: $CHROMIUM missing; installing Debian's chromium"
    apt_install chromium || true
fi
if ! "$CHROMIUM" --version 2>/dev/null | grep -q Chromium; then
    echo "book: chromium could not be installed or does not run: the book's images were NOT checked in a browser" >&2
    exit 1
fi
if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
    echo "book: node or npm missing; installing Debian's nodejs and npm"
    apt_install nodejs npm || true
fi
if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
    echo "book: node and npm could not be installed: the book's images were NOT checked in a browser" >&2
    exit 1
fi

# playwright-core drives Chromium; it downloads no browser of its own.
PLAYWRIGHT_VERSION=1.65.1
check_dir=target/book-check
export PLAYWRIGHT_DIR="$PWD/$check_dir/playwright"
installed=$(node -p "require('$PLAYWRIGHT_DIR/node_modules/playwright-core/package.json').version" 2>/dev/null || true)
if [ "$installed" != "$PLAYWRIGHT_VERSION" ]; then
    mkdir -p "$PLAYWRIGHT_DIR"
    if ! PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 npm install --no-save --no-package-lock \
        --no-audit --no-fund --loglevel=error --prefix "$PLAYWRIGHT_DIR" \
        "playwright-core@$PLAYWRIGHT_VERSION"; then
        echo "book: npm could not install playwright-core: the book's images were NOT checked in a browser" >&2
        exit 1
    fi
fi

# Serve the built book on a free localhost port (http, not file://).
: >"$work/http.log"
python3 -u -m http.server 0 --bind 127.0.0.1 --directory book/book \
    >"$work/http.log" 2>&1 &
server_pid=$!
port=""
for _ in $(seq 100); do
    port=$(sed -n 's/.* port \([0-9][0-9]*\).*/\1/p' "$work/http.log" | head -n1 || true)
    [ -n "$port" ] && break
    kill -0 "$server_pid" 2>/dev/null || break
    sleep 0.1
done
if [ -z "$port" ]; then
    cat "$work/http.log" >&2
    echo "book: python3 -m http.server did not start" >&2
    exit 1
fi

rm -rf "$check_dir/screens"
CHROMIUM="$CHROMIUM" node .ci/tools/book_render.cjs \
    "http://127.0.0.1:$port/" "$check_dir/screens" "$work/pages"
