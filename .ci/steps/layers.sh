#!/usr/bin/env bash
# Each crate's folders depend only on the layers below them (DESIGN §8):
# fail on any import cycle between the top-level modules of kaspar/src or
# kaspar-remote/src, and on more than 12 entries at either's top level.
# kaspar-remote is also held to naming the module an item lives in
# (`crate::wire::Refused`, not the root re-export `crate::Refused`), so
# that no edge hides behind a re-export.
set -euo pipefail
cd "$(dirname "$0")/../.."
python3 .ci/tools/layers.py kaspar/src --max-entries 12
python3 .ci/tools/layers.py kaspar-remote/src --max-entries 12 --strict-paths
