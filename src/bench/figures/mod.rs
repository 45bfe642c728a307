//! The guide's figures, drawn from the benches' own rows:
//! `cargo run --release --bin figures` reads `target/kaspar-bench/*.jsonl`
//! and writes one SVG per [`FIGURES`] entry into `book/src/figures/`,
//! where they are checked in, so that the book shows them without running
//! anything. Each figure's caption names the command, the machine and the
//! date of the run it shows ([`Provenance`](crate::bench::Provenance)),
//! and how it was drawn.
//!
//! `figures [--out DIR] [NAME ...]` draws the named figures (all by
//! default) into `DIR` (the book's folder by default); `--list` lists
//! them with their input. A missing input file, or a row a figure needs,
//! is an error naming the command that writes it: the figures that can be
//! drawn are drawn, the program says what it could not draw and exits
//! with 1.
//!
//! * `rows.rs`: parsing the rows and their provenance;
//! * `draw.rs`: the figures, through the suite's SVG writer
//!   ([`svg`](crate::bench::svg)).

mod draw;
pub mod rows;

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use rows::{Input, Rows};

/// `paper.jsonl`: Tables 5, 6, 7, the batching ping-pong and the pool.
pub const PAPER: Input = Input {
    file: "paper.jsonl",
    command: "cargo bench --bench paper -- --quick",
};
/// `tick_to_book.jsonl`: the case study's streams.
pub const TICK_TO_BOOK: Input = Input {
    file: "tick_to_book.jsonl",
    command: "cargo run --release --example tick_to_book",
};
/// `peers.jsonl`: ask, tell, ping-pong against channels and frameworks.
pub const PEERS: Input = Input {
    file: "peers.jsonl",
    command: "cargo run --release --manifest-path benches/peers/Cargo.toml -- --quick",
};
/// `savina.jsonl`: the Savina suite.
pub const SAVINA: Input = Input {
    file: "savina.jsonl",
    command: "cargo run --release --manifest-path benches/peers/Cargo.toml -- savina --quick",
};
/// `remote.jsonl`: round trips between two processes.
pub const REMOTE: Input = Input {
    file: "remote.jsonl",
    command: "cargo bench -p kaspar-remote --features aeron,iceoryx2 --bench remote -- --quick",
};

/// One figure: its file name (without `.svg`), what it reads, and how it
/// is drawn.
pub struct Figure {
    /// `book/src/figures/<name>.svg`.
    pub name: &'static str,
    /// The rows it reads.
    pub input: Input,
    draw: fn(&Rows) -> Result<String, String>,
}

/// Every figure, in the order the performance chapter shows them.
pub const FIGURES: [Figure; 9] = [
    Figure {
        name: "table5_round_trip",
        input: PAPER,
        draw: draw::table5_round_trip,
    },
    Figure {
        name: "table5_cdf",
        input: PAPER,
        draw: draw::table5_cdf,
    },
    Figure {
        name: "dispatch",
        input: PAPER,
        draw: draw::dispatch,
    },
    Figure {
        name: "batching",
        input: PAPER,
        draw: draw::batching,
    },
    Figure {
        name: "peers",
        input: PEERS,
        draw: draw::peers,
    },
    Figure {
        name: "savina",
        input: SAVINA,
        draw: draw::savina,
    },
    Figure {
        name: "remote",
        input: REMOTE,
        draw: draw::remote,
    },
    Figure {
        name: "tick_to_book_cdf_one_thread",
        input: TICK_TO_BOOK,
        draw: draw::tick_to_book_one_thread,
    },
    Figure {
        name: "tick_to_book_cdf_two_stage",
        input: TICK_TO_BOOK,
        draw: draw::tick_to_book_two_stage,
    },
];

/// `book/src/figures` in this repository.
pub fn book_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("book/src/figures")
}

/// Draws `figure` from the rows in `input_dir`; returns the document.
pub fn draw(figure: &Figure, input_dir: &Path) -> Result<String, String> {
    let rows = Rows::load(input_dir, figure.input)?;
    (figure.draw)(&rows)
}

/// The command line (see the module's documentation).
pub fn main() -> ExitCode {
    let mut out = book_dir();
    let mut names = Vec::new();
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--out" => match args.next() {
                Some(dir) => out = PathBuf::from(dir),
                None => {
                    eprintln!("figures: --out needs a folder");
                    return ExitCode::from(2);
                }
            },
            "--list" => {
                for f in &FIGURES {
                    println!("{}: {} (`{}`)", f.name, f.input.file, f.input.command);
                }
                return ExitCode::SUCCESS;
            }
            "-h" | "--help" => {
                println!(
                    "cargo run --release --bin figures -- [--out DIR] [--list] [NAME ...]\n\
                     Draws the book's figures from target/kaspar-bench/*.jsonl into {} \
                     (or DIR); all of them unless NAMEs are given.",
                    book_dir().display()
                );
                return ExitCode::SUCCESS;
            }
            name => names.push(name.to_string()),
        }
    }
    if let Some(unknown) = names
        .iter()
        .find(|n| !FIGURES.iter().any(|f| f.name == n.as_str()))
    {
        eprintln!("figures: no figure named `{unknown}` (`--list` lists them)");
        return ExitCode::from(2);
    }
    if let Err(e) = std::fs::create_dir_all(&out) {
        eprintln!("figures: cannot create {}: {e}", out.display());
        return ExitCode::FAILURE;
    }
    let input_dir = crate::bench::bench_dir();
    let mut failed = Vec::new();
    for f in FIGURES
        .iter()
        .filter(|f| names.is_empty() || names.iter().any(|n| n == f.name))
    {
        let path = out.join(format!("{}.svg", f.name));
        match draw(f, &input_dir).and_then(|svg| {
            std::fs::write(&path, svg).map_err(|e| format!("cannot write {}: {e}", path.display()))
        }) {
            Ok(()) => println!("{}", path.display()),
            Err(e) => failed.push(format!("{}: {e}", f.name)),
        }
    }
    if failed.is_empty() {
        ExitCode::SUCCESS
    } else {
        for e in &failed {
            eprintln!("figures: not drawn: {e}");
        }
        ExitCode::FAILURE
    }
}
