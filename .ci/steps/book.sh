#!/usr/bin/env bash
# Builds the guide (book/) with mdBook and fails on broken links or on any
# warning mdBook prints. The guide's Rust samples are compiled separately,
# as doctests of the runtime crate (the `guide` module in kaspar/src/lib.rs), by
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

# 1. Every relative link in book/src points at a file that exists.
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

# 2. Build, and treat any warning or error in mdBook's log as a failure.
log=$(mktemp)
trap 'rm -f "$log"' EXIT
if ! mdbook build book 2>&1 | tee "$log"; then
    echo "book: mdbook build failed" >&2
    exit 1
fi
if grep -Eq '\b(WARN|ERROR)\b' "$log"; then
    echo "book: mdbook printed warnings (see above)" >&2
    exit 1
fi
echo "book: built into book/book"
