//! `cargo run --release --bin figures [-- NAME ...]`: draws the guide's
//! figures from `target/kaspar-bench/*.jsonl` into `book/src/figures/`
//! (see `kaspar_suite::bench::figures`).

fn main() -> std::process::ExitCode {
    kaspar_suite::bench::figures::main()
}
