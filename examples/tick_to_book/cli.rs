//! The command line: which configurations to run, for how long, on which
//! mailbox, with which feed, and where the files go (see the README's
//! option table).

use std::path::PathBuf;

use kaspar::prelude::*;
use kaspar_suite::tick_to_book::generator::{GenConfig, Release};

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Config {
    /// Each reader `fast_send`s and runs the group chain itself.
    OneThread,
    /// Each reader `send`s through the group's mailbox.
    TwoStage,
}

impl Config {
    /// `one_thread` or `two_stage`: the JSON case and file-name part.
    pub fn case(self) -> &'static str {
        match self {
            Config::OneThread => "one_thread",
            Config::TwoStage => "two_stage",
        }
    }
}

#[derive(Debug)]
pub struct Options {
    pub secs: f64,
    pub configs: Vec<Config>,
    pub mailbox: (MailboxKind, &'static str),
    pub gen: GenConfig,
    /// The release's baseline multiplier; 1 for none.
    pub release: f64,
    pub capture: Option<PathBuf>,
    pub replay: bool,
    /// Where kaspar's live console listens while each configuration runs
    /// (`--console [ADDR]`; needs the `console` feature).
    pub console: Option<String>,
}

impl Options {
    /// The release of a configuration that runs `secs`: at 40% of the
    /// run, for a tenth of it but at least 0.2 s. `None` if `--release 1`.
    pub fn release_for(&self, secs: f64) -> Option<Release> {
        (self.release > 1.0).then(|| Release {
            at_s: 0.4 * secs,
            secs: (0.1 * secs).max(0.2),
            factor: self.release,
        })
    }

    /// The generator's configuration for a run of `secs`: the options'
    /// feed with its release scheduled.
    pub fn gen_for(&self, secs: f64) -> GenConfig {
        GenConfig {
            release: self.release_for(secs),
            ..self.gen.clone()
        }
    }
}

const USAGE: &str = "usage: tick_to_book [--secs N] [--config one-thread|two-stage|both] \
[--mailbox bqueue|batched|sharded|lockfree|segmented] [--rate EVENTS_PER_S] [--burst BRANCHING_RATIO] \
[--decay PER_S] [--release FACTOR] [--seed N] [--capture PATH] [--replay on|off] [--console [ADDR]]";

/// What `parse_args` returns for `--console` in a build without the
/// `console` feature; `main` then runs the same command with it.
pub const NEEDS_CONSOLE: &str = "--console needs the console feature: cargo run --release \
     --features console --example tick_to_book -- --console";

/// Where `--console` without an address listens.
pub const CONSOLE_ADDR: &str = "127.0.0.1:9191";

pub fn parse_args() -> Result<Options, String> {
    let mut o = Options {
        secs: 10.0,
        configs: vec![Config::OneThread, Config::TwoStage],
        mailbox: (MailboxKind::bqueue(4096), "BQueue"),
        gen: GenConfig::default(),
        release: 6.0,
        capture: None,
        replay: true,
        console: None,
    };
    let mut args = std::env::args().skip(1).peekable();
    while let Some(flag) = args.next() {
        if flag == "-h" || flag == "--help" {
            return Err(USAGE.into());
        }
        // `cargo bench`-style harness flags are ignored.
        if flag == "--bench" {
            continue;
        }
        // The one flag whose value may be left out.
        if flag == "--console" {
            if !cfg!(feature = "console") {
                return Err(NEEDS_CONSOLE.into());
            }
            let addr = args.next_if(|a| !a.starts_with("--"));
            o.console = Some(addr.unwrap_or_else(|| CONSOLE_ADDR.into()));
            continue;
        }
        let value = args
            .next()
            .ok_or_else(|| format!("{flag} needs a value\n{USAGE}"))?;
        let num = |v: &str| {
            v.parse::<f64>()
                .ok()
                .filter(|x| x.is_finite() && *x >= 0.0)
                .ok_or_else(|| format!("{flag}: not a number: {v}"))
        };
        match flag.as_str() {
            "--secs" => o.secs = num(&value)?.max(0.2),
            "--rate" => o.gen.rate = num(&value)?.max(1.0),
            "--burst" => o.gen.branching = num(&value)?.min(0.99),
            "--decay" => o.gen.decay = num(&value)?.max(1.0),
            "--release" => o.release = num(&value)?.max(1.0),
            "--seed" => o.gen.seed = value.parse().map_err(|_| format!("--seed: {value}"))?,
            "--capture" => o.capture = Some(PathBuf::from(value)),
            "--replay" => {
                o.replay = match value.as_str() {
                    "on" => true,
                    "off" => false,
                    v => return Err(format!("--replay: {v}?\n{USAGE}")),
                }
            }
            "--config" => {
                o.configs = match value.as_str() {
                    "one-thread" => vec![Config::OneThread],
                    "two-stage" => vec![Config::TwoStage],
                    "both" => vec![Config::OneThread, Config::TwoStage],
                    v => return Err(format!("--config: {v}?\n{USAGE}")),
                }
            }
            "--mailbox" => {
                o.mailbox = match value.as_str() {
                    "bqueue" => (MailboxKind::bqueue(4096), "BQueue"),
                    "batched" => (MailboxKind::batched(4096), "BQueueBatched"),
                    "sharded" => (MailboxKind::sharded(2, 4096), "Sharded"),
                    "lockfree" => (MailboxKind::lock_free(8192), "LockFree"),
                    "segmented" => (MailboxKind::segmented(4096), "Segmented"),
                    v => return Err(format!("--mailbox: {v}?\n{USAGE}")),
                }
            }
            f => return Err(format!("unknown option {f}\n{USAGE}")),
        }
    }
    Ok(o)
}
