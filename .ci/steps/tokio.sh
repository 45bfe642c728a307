#!/usr/bin/env bash
# Pooled actors hosted on a tokio runtime (kaspar's feature `tokio`, the
# root package's feature of the same name): `PoolConfig::tokio`.
#
# The root package's `tokio` feature is opt-in, and the test and bench that
# need it declare `required-features`, so `cargo test --workspace` skips
# them and never compiles kaspar with the feature. This step builds them
# with it:
#   1. clippy (-D warnings) on kaspar (all targets) and on the suite's
#      library, test and bench, with the feature;
#   2. kaspar's unit tests of the pool, with the feature (the thread pool
#      must behave as without it), and of which actors an awaited `ask`
#      must not spin for (the hosted ones), and the guide's chapter
#      (book/src/pool-on-tokio.md) as doctests;
#   3. tests/pool_tokio.rs: sends, awaited asks, many actors, stop,
#      shutdown, supervision and the blocking rule on current-thread and
#      multi-thread runtimes, exact counts; and the thread pool's own
#      behaviour and blocking tests with the feature on;
#      tests/pool_tokio_shutdown.rs: a hosted pipeline's shutdown, newest
#      first and nothing refused, from outside the runtime, inside
#      `block_on`, and dropped in a task; hosted and threaded in one order;
#      tests/pool_tokio_start.rs and tests/pool_tokio_help.rs: a first
#      `fast_send`, and an awaited ask answered in its first poll;
#      tests/pool_tokio_blocking.rs: blocking waits outside actor code
#      (`ask().wait()`, a full mailbox) that used to hang, under a watchdog;
#   4. benches/pool_tokio.rs in quick mode: it runs and prints its table
#      (no timing gate: the numbers depend on the machine's load).
# Everything it needs comes from crates.io through cargo; nothing to
# install.
set -euo pipefail
cd "$(dirname "$0")/../.."

cargo clippy -p kaspar --all-targets --features tokio -- -D warnings
cargo clippy -p kaspar-suite --features tokio --lib --test pool_tokio --test pool_tokio_shutdown --test pool_tokio_start \
    --test pool_tokio_help --test pool_tokio_blocking --bench pool_tokio -- -D warnings
cargo test -p kaspar --features tokio --lib -- delivery::sched system::hosted_tests
cargo test -p kaspar --features tokio --doc guide_tokio
cargo test -p kaspar-suite --features tokio --test pool_tokio --test pool_tokio_shutdown --test pool_tokio_start \
    --test pool_tokio_help --test pool_tokio_blocking
cargo test -p kaspar-suite --features tokio --test pool_sched_behaviour \
    --test pool_sched_blocking
cargo bench -p kaspar-suite --features tokio --bench pool_tokio -- --quick
echo "tokio: hosted pool checked"
