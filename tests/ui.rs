//! Compile-fail and compile-pass cases for the `#[actor]` / `#[handler]` DSL.
//!
//! `tests/ui/*.rs` must each fail to compile with exactly the diagnostics in
//! the `.stderr` beside it; every file opens with a comment naming the rule
//! it proves. `tests/ui/pass/*.rs` must compile and run to completion.
//!
//! After an intended change to a diagnostic (or a new case), regenerate the
//! expected output and then read every changed `.stderr`:
//!
//! ```text
//! TRYBUILD=overwrite cargo test --test ui
//! ```
//!
//! The expected output is tied to the compiler version that wrote it; a new
//! toolchain may reword rustc's own messages and need a refresh.

#[test]
fn ui() {
    let t = trybuild::TestCases::new();
    t.compile_fail("tests/ui/*.rs");
    t.pass("tests/ui/pass/*.rs");
}
