#!/usr/bin/env bash
# Miri over the unit tests of the unsafe code: the lock-free ring (and the
# other queues) and the memory pool. Iteration counts shrink under cfg(miri).
set -euo pipefail
export MIRIFLAGS="${MIRIFLAGS:--Zmiri-permissive-provenance}"  # parking_lot casts integers to pointers
if ! rustup component add --toolchain nightly miri rust-src >/dev/null 2>&1 \
    || ! cargo +nightly miri setup >/dev/null 2>&1; then
    echo "miri: unavailable"
    exit 0
fi
cargo +nightly miri test -p kaspar --lib -- mailbox pool
