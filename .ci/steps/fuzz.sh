#!/usr/bin/env bash
# The fuzz targets (fuzz/), for a bounded time: kaspar-remote's inbound
# path (`inbound_node`: frame sequences fed to a live node over the
# loopback, which must keep answering a real client after every input)
# and its decoders (`decode_frame`). Each first replays its kept seeds
# (fuzz/seeds/<target>: the frames of issue 27's hostile peers, and
# anything the fuzzer once found) as regression cases, then explores for
# FUZZ_SECONDS (60 by default) from them. A finding fails the step and
# leaves its input under fuzz/artifacts/<target>/, to be kept as a seed
# once fixed.
#
# Needs nightly (libFuzzer's sanitizer flags) and cargo-fuzz, both
# installed here when missing; fails, saying why, if they cannot be.
set -euo pipefail
cd "$(dirname "$0")/../.."

toolchain="${FUZZ_TOOLCHAIN:-nightly}"
seconds="${FUZZ_SECONDS:-60}"

if ! rustup run "$toolchain" rustc --version >/dev/null 2>&1; then
    echo "fuzz: installing the $toolchain toolchain"
    rustup toolchain install "$toolchain" --profile minimal --no-self-update ||
        { echo "fuzz: cannot install $toolchain" >&2; exit 1; }
fi
if ! cargo fuzz --version >/dev/null 2>&1; then
    echo "fuzz: installing cargo-fuzz"
    cargo install cargo-fuzz --locked --quiet ||
        { echo "fuzz: cannot install cargo-fuzz" >&2; exit 1; }
fi
cargo fuzz --version

for target in inbound_node decode_frame; do
    seeds="fuzz/seeds/$target"
    corpus="fuzz/corpus/$target"
    mkdir -p "$corpus"
    cargo "+$toolchain" fuzz build "$target" --release 2>&1 | tail -n 2
    if [ -d "$seeds" ]; then
        echo "fuzz: $target: replaying $(ls "$seeds" | wc -l) kept seeds"
        cargo "+$toolchain" fuzz run "$target" "$seeds" -- -runs=0
    fi
    dirs=("$corpus")
    [ -d "$seeds" ] && dirs+=("$seeds")
    echo "fuzz: $target: exploring for ${seconds}s"
    cargo "+$toolchain" fuzz run "$target" "${dirs[@]}" -- \
        -max_total_time="$seconds" -print_final_stats=1 2>&1 | tail -n 12
done
