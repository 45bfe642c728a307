#!/usr/bin/env bash
# The runtime's folders depend only on the layers below them (DESIGN §8):
# fail on any import cycle between the top-level modules of kaspar/src,
# and on more than 12 entries at its top level.
set -euo pipefail
cd "$(dirname "$0")/../.."
python3 .ci/tools/layers.py
entries=$(find kaspar/src -mindepth 1 -maxdepth 1 | wc -l)
if [ "$entries" -gt 12 ]; then
    echo "layers: kaspar/src has $entries top-level entries (at most 12)" >&2
    exit 1
fi
echo "layers: $entries top-level entries in kaspar/src"
