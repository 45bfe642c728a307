#!/usr/bin/env bash
# The runtime with and without its optional features (`journal`, and the
# opt-in `metrics`, `console`, `tracing`, `tokio`, `sim`). The root package depends on kaspar with `journal` on, so every
# `--workspace` build (clippy, rustdoc, the tests) unifies it in and never
# compiles kaspar without it. Selecting only `-p kaspar` does (resolver 2
# unifies features across the selected packages only); the step checks that
# with cargo tree before it trusts it. `metrics` is the other way round:
# off in every default build (the root package turns it on only through its
# own opt-in `metrics` feature), so the default builds are the ones without
# it, and `--all-features` here is the one with it (its tests:
# .ci/steps/metrics.sh).
#
# clippy rather than check, with -D warnings: code that only the journal
# uses shows up as dead code without the feature, and that is a warning.
set -euo pipefail
cd "$(dirname "$0")/../.."

# kaspar's features as cargo resolves them for `-p kaspar $*`, one a line.
features() {
    cargo tree -p kaspar "$@" -e features -i kaspar --prefix none \
        | sed -n 's/^kaspar feature "\([^"]*\)".*/\1/p' | sort -u | tr '\n' ' '
}
off=$(features --no-default-features)
all=$(features --all-features)
echo "features: -p kaspar --no-default-features: [ $off]"
echo "features: -p kaspar --all-features: [ $all]"
case " $off " in
    *" journal "*)
        echo "features: journal is on without being asked for; this step would test nothing" >&2
        exit 1 ;;
esac
case " $all " in
    *" journal "*) ;;
    *) echo "features: --all-features does not turn journal on" >&2; exit 1 ;;
esac
case " $off " in
    *" metrics "*)
        echo "features: metrics is on without being asked for" >&2
        exit 1 ;;
esac
case " $all " in
    *" metrics "*) ;;
    *) echo "features: --all-features does not turn metrics on" >&2; exit 1 ;;
esac
# The default workspace build (the README's `cargo test --workspace`) must
# not turn on any of the features that add to a delivery path or a
# dependency (metrics, console, tracing, tokio, sim): no dev-dependency may
# unify one in, or the default tests, the callgrind budget and the
# allocation tests would stop measuring kaspar as users get it.
default=$(cargo tree --workspace -e features -i kaspar --prefix none \
    | sed -n 's/^kaspar feature "\([^"]*\)".*/\1/p' | sort -u | tr '\n' ' ')
echo "features: --workspace (the default build): [ $default]"
for opt_in in metrics console tracing tokio sim; do
    case " $default " in
        *" $opt_in "*)
            echo "features: the default workspace build compiles kaspar with $opt_in" >&2
            exit 1 ;;
    esac
done

cargo clippy -p kaspar --no-default-features --all-targets -- -D warnings
cargo clippy -p kaspar --all-features --all-targets -- -D warnings
cargo test -p kaspar --no-default-features --lib
RUSTDOCFLAGS="-D warnings" cargo doc -p kaspar --no-default-features --no-deps --quiet
echo "features: kaspar builds, lints clean and passes its unit tests without journal and metrics"
