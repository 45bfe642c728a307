#!/usr/bin/env bash
# The live console (kaspar's feature `console`, the root package's feature
# of the same name): a page served by the system itself, tested in a real
# browser.
#
# The root package's `console` feature is opt-in and the test requires it,
# so the README's `cargo test --workspace` skips it and never compiles
# kaspar with the feature. This step:
#   1. installs Debian's chromium and chromium-driver where they are
#      missing (and fails loudly where it cannot);
#   2. clippy (-D warnings) on kaspar with the feature, and on the suite's
#      library, the tick_to_book example and the browser test;
#   3. kaspar's unit tests of the console, the edge table and the registry
#      (HTTP routes, the Host check, exact edge counts through a group),
#      and the doctests of its API;
#   4. the guide's chapter (book/src/console.md) as doctests;
#   5. tests/console_browser.rs: the tick-to-book pipeline running, the
#      console up, headless Chromium driven through chromedriver loads the
#      page and checks that the pipeline's actors, groups, threads and
#      edges appear and that their counts move between two samples;
#   6. `cargo run --example tick_to_book -- --console` (no feature named:
#      the example reruns itself with it): it starts the console, and the
#      page answers with the pipeline's actors while the pipeline runs.
set -euo pipefail
cd "$(dirname "$0")/../.."

if [ ! -x /usr/bin/chromium ] || [ ! -x /usr/bin/chromedriver ]; then
    echo "console: chromium or chromium-driver missing; installing them"
    if command -v apt-get >/dev/null 2>&1; then
        sudo_=""
        [ "$(id -u)" -eq 0 ] || sudo_="sudo"
        $sudo_ apt-get update -qq
        $sudo_ apt-get install -y -qq chromium chromium-driver >/dev/null
    fi
fi
if [ ! -x /usr/bin/chromium ] || [ ! -x /usr/bin/chromedriver ]; then
    echo "console: chromium and chromium-driver could not be installed: the browser test was NOT run" >&2
    exit 1
fi

cargo clippy -p kaspar --all-targets --features console -- -D warnings
cargo clippy -p kaspar --all-targets --features "console metrics" -- -D warnings
cargo clippy --features console --lib --test console_browser --example tick_to_book -- -D warnings
cargo test -p kaspar --features console --lib -- system::console actor::edges system::registry
cargo test -p kaspar --features console --doc system::console
cargo test --features console --doc guide::console
cargo test --features console --test console_browser

# The example with --console on a free port: poll the page while the
# pipeline runs; fail if it never answers.
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
# Run as the book says, without `--features console`: the example then
# runs itself again with the feature (it checks that `cargo run` started
# it), so this also proves that path.
cargo build --example tick_to_book
cargo build --features console --example tick_to_book
cargo run --quiet --example tick_to_book -- --console "127.0.0.1:$port" --secs 4 \
    --config two-stage --replay off > /dev/null &
run=$!
seen=""
for _ in $(seq 1 100); do
    if python3 - "$port" <<'PY' 2>/dev/null; then seen=yes; break; fi
import json, sys, urllib.request
doc = json.load(urllib.request.urlopen(f"http://127.0.0.1:{sys.argv[1]}/api/snapshot", timeout=2))
names = {a["name"] for a in doc["actors"]}
assert {"market-data", "order-out", "reader-a", "reader-b"} <= names, names
assert any(a["type"] == "BookBuilder" and a["handled"] > 0 for a in doc["actors"])
PY
    sleep 0.1
done
wait "$run"
if [ -z "$seen" ]; then
    echo "console: tick_to_book --console never served the pipeline's actors" >&2
    exit 1
fi
echo "console: served, drawn in Chromium, read back and checked"
