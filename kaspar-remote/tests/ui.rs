//! Compile-fail and compile-pass cases for kaspar-remote's surface:
//! `#[derive(Wire)]`, `#[actor(remote)]`, and what a `RemoteAddr` does not
//! offer.
//!
//! `tests/ui/*.rs` must each fail to compile with exactly the diagnostics in
//! the `.stderr` beside it; every file opens with a comment naming the rule
//! it proves. `tests/ui/pass/*.rs` must compile and run. After an intended
//! change, `TRYBUILD=overwrite cargo test -p kaspar-remote --test ui`, then
//! read every changed `.stderr`. They are tied to the pinned toolchain.
//!
//! The cases are slow to compile, so CI runs them once: in the workspace
//! test step (`cargo test --workspace`). `.ci/steps/remote.sh` and
//! `.ci/steps/remote-aeron.sh`, which test this crate again with the
//! `iceoryx2` and `aeron` features, set `KASPAR_REMOTE_UI=skip`; nothing
//! else skips them.

#[test]
fn ui() {
    if std::env::var("KASPAR_REMOTE_UI").as_deref() == Ok("skip") {
        eprintln!("ui: skipped (KASPAR_REMOTE_UI=skip; the workspace test step runs it)");
        return;
    }
    let t = trybuild::TestCases::new();
    t.compile_fail("tests/ui/*.rs");
    t.pass("tests/ui/pass/*.rs");
}
