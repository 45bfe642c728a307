//! What a simulated run did, step by step, in a form that reads as a story
//! and compares byte for byte: actors are named by their type and a number
//! local to the run (the order the run first met them), never by a
//! process-wide id, and times are virtual.

use std::collections::HashMap;
use std::fmt;
use std::sync::Arc;

use crate::base::clock::Time;
use crate::base::ids::{ActorId, Target};

/// One thing that happened in a simulated run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Event {
    /// The step it happened in.
    pub step: u64,
    /// Virtual time then.
    pub time: Time,
    /// What happened.
    pub what: What,
}

/// What an [`Event`] records.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum What {
    /// An actor's handler ran (`actor` indexes [`Trace::actors`]).
    Handled {
        /// The actor.
        actor: u32,
        /// The message class.
        class: &'static str,
        /// Run inline by a synchronous delivery (`fast_send` and its
        /// family), not for a dequeued message.
        inline: bool,
    },
    /// A simulated client's task ran until it waited again (or finished).
    Client {
        /// The client, by its number.
        client: u32,
        /// Its name.
        name: Arc<str>,
    },
    /// A timer fired.
    Timer,
    /// A [`Source`](super::Source) ran a step.
    Source {
        /// Its name.
        name: Arc<str>,
        /// What it says it did.
        did: String,
    },
    /// An injected fault: the handler about to run for this message
    /// panicked instead.
    InjectedPanic {
        /// The actor.
        actor: u32,
        /// The message class.
        class: &'static str,
        /// Inline, for a synchronous delivery.
        inline: bool,
    },
    /// An injected fault: a send found this actor's bounded mailbox full.
    InjectedFull {
        /// The actor.
        actor: u32,
    },
    /// Virtual time jumped forward: nothing was ready until then.
    Idle {
        /// The time it jumped to.
        until: Time,
    },
}

/// The events of one run, and the actors they name.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Trace {
    events: Vec<Event>,
    /// Events not kept (the oldest, past the run's limit).
    dropped: u64,
    limit: usize,
    actors: Vec<(&'static str, Option<Arc<str>>)>,
    numbers: HashMap<ActorId, u32>,
}

impl Trace {
    pub(crate) fn new(limit: usize) -> Self {
        Trace {
            limit,
            ..Trace::default()
        }
    }

    /// The run-local number of `target`, given on first sight.
    pub(crate) fn actor(&mut self, target: &Target) -> u32 {
        if let Some(&n) = self.numbers.get(&target.id) {
            return n;
        }
        let n = self.actors.len() as u32;
        self.actors.push((target.name, target.instance.clone()));
        self.numbers.insert(target.id, n);
        n
    }

    pub(crate) fn push(&mut self, event: Event) {
        if self.limit == 0 {
            self.dropped += 1;
            return;
        }
        if self.events.len() == self.limit {
            // Keep the newest: a failure's trace ends where it failed.
            let half = self.limit / 2;
            self.events.drain(..half.max(1));
            self.dropped += half.max(1) as u64;
        }
        self.events.push(event);
    }

    /// The events kept, oldest first.
    pub fn events(&self) -> &[Event] {
        &self.events
    }

    /// Events recorded but not kept (the oldest ones, past the limit).
    pub fn dropped(&self) -> u64 {
        self.dropped
    }

    /// The actors the events name, by their number: type name and the
    /// name given at spawn.
    pub fn actors(&self) -> &[(&'static str, Option<Arc<str>>)] {
        &self.actors
    }

    /// How many messages the recorded events handled.
    pub fn handled(&self) -> usize {
        self.events
            .iter()
            .filter(|e| matches!(e.what, What::Handled { .. }))
            .count()
    }

    fn name(&self, actor: u32) -> String {
        match self.actors.get(actor as usize) {
            Some((ty, Some(instance))) => format!("{ty}#{actor}({instance})"),
            Some((ty, None)) => format!("{ty}#{actor}"),
            None => format!("?#{actor}"),
        }
    }

    /// The injected faults among the events kept, one line each.
    pub fn faults(&self) -> String {
        let mut out = String::new();
        for e in &self.events {
            if matches!(
                e.what,
                What::InjectedPanic { .. } | What::InjectedFull { .. }
            ) {
                out.push_str(&self.line(e));
                out.push('\n');
            }
        }
        out
    }

    /// The last `n` events as text, one line each.
    pub fn tail(&self, n: usize) -> String {
        let skip = self.events.len().saturating_sub(n);
        let mut out = String::new();
        if skip > 0 || self.dropped > 0 {
            out.push_str(&format!(
                "  ... {} earlier events\n",
                skip as u64 + self.dropped
            ));
        }
        for e in &self.events[skip..] {
            out.push_str(&self.line(e));
            out.push('\n');
        }
        out
    }

    fn line(&self, e: &Event) -> String {
        let t = e.time.as_nanos();
        let head = format!(
            "  #{:<6} t={}.{:09}s ",
            e.step,
            t / 1_000_000_000,
            t % 1_000_000_000
        );
        let body = match &e.what {
            What::Handled {
                actor,
                class,
                inline,
            } => format!("{} handles {class}{}", self.name(*actor), via(*inline)),
            What::Client { client, name } => format!("client {name}#{client} runs"),
            What::Timer => "a timer fires".to_owned(),
            What::Source { name, did } => format!("{name}: {did}"),
            What::InjectedPanic {
                actor,
                class,
                inline,
            } => format!(
                "{} panics on {class}{}  [fault: injected panic]",
                self.name(*actor),
                via(*inline)
            ),
            What::InjectedFull { actor } => {
                format!(
                    "a send finds {} full  [fault: full mailbox]",
                    self.name(*actor)
                )
            }
            What::Idle { until } => {
                let u = until.as_nanos();
                format!(
                    "idle until t={}.{:09}s",
                    u / 1_000_000_000,
                    u % 1_000_000_000
                )
            }
        };
        head + &body
    }
}

fn via(inline: bool) -> &'static str {
    if inline {
        " (inline)"
    } else {
        ""
    }
}

impl fmt::Display for Trace {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.tail(usize::MAX))
    }
}
