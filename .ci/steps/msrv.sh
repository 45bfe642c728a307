#!/usr/bin/env bash
# MSRV: every package declares the workspace's `rust-version`, so check that
# the workspace really builds with that compiler, not only with the pinned
# toolchain in rust-toolchain.toml. The version is read from the workspace
# Cargo.toml, the one place it is written.
#
# `cargo check --workspace --all-targets`: the library, tests, benches and
# examples, with the dev-dependencies locked in Cargo.lock; their declared
# rust-version is 1.88 at most (postcard, proptest, trybuild and hdrhistogram
# are the ones that need 1.88). loom (cfg(loom) only) pulls in generator,
# which needs 1.95: loom is not built here, and its models run on the pinned
# toolchain in loom.sh.
#
# Own target dir: another compiler would otherwise invalidate the main build
# cache.
set -euo pipefail
cd "$(dirname "$0")/../.."

msrv=$(sed -n 's/^rust-version *= *"\([0-9.]*\)".*/\1/p' Cargo.toml)
if [ -z "$msrv" ] || [ "$(printf '%s\n' "$msrv" | wc -l)" -ne 1 ]; then
    echo "msrv: expected one rust-version = \"X.Y\" in Cargo.toml's [workspace.package]" >&2
    exit 1
fi

rustup toolchain install "$msrv" --profile minimal --no-self-update
cargo "+$msrv" --version
cargo "+$msrv" check --workspace --all-targets --locked --target-dir target/msrv
echo "msrv: the workspace builds with rustc $msrv"
