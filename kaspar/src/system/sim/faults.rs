//! The faults a simulated run injects, under its seed.

use std::time::Duration;

/// What goes wrong in a simulated run, and how often. Every choice is the
/// seed's: the same seed injects the same faults at the same steps.
///
/// What kaspar promises must hold under all of them: a handler that
/// panics is handled by its actor's supervision exactly as live, a send
/// that finds a mailbox full gets its message back in
/// [`SendError::Full`](crate::SendError::Full), and a late timer fires
/// late, never twice and never lost.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Faults {
    /// Chance, in parts per million, that a dequeued message's handler
    /// panics instead of running (the message is consumed, as by any
    /// panicking handler; supervision then acts).
    pub panic_ppm: u32,
    /// The handled message, counted from 0 over the run, whose handler
    /// panics instead of running: one fault at a chosen step.
    pub panic_at: Option<u64>,
    /// Chance, in parts per million, that a send into a bounded mailbox
    /// that rejects when full ([`MailboxKind::lock_free`](crate::MailboxKind::lock_free))
    /// finds it full.
    pub full_ppm: u32,
    /// Every jump of virtual time to a due timer overshoots by up to this
    /// much (uniform), so timers fire late, and handlers see the lateness
    /// through [`Ctx::now`](crate::Ctx::now).
    pub timer_jitter: Duration,
}

impl Faults {
    /// No faults.
    pub fn none() -> Self {
        Faults::default()
    }

    /// A mix for sweeping many seeds: a handler panic per 2,000 messages,
    /// a full mailbox per 100 sends into a bounded one, timers up to
    /// 1 ms late.
    pub fn some() -> Self {
        Faults {
            panic_ppm: 500,
            panic_at: None,
            full_ppm: 10_000,
            timer_jitter: Duration::from_millis(1),
        }
    }

    /// Handlers panic with this chance, in parts per million.
    pub fn panics(mut self, ppm: u32) -> Self {
        self.panic_ppm = ppm;
        self
    }

    /// The `n`-th handled message (from 0) panics its handler.
    pub fn panic_at(mut self, n: u64) -> Self {
        self.panic_at = Some(n);
        self
    }

    /// Bounded rejecting mailboxes are found full with this chance.
    pub fn full(mut self, ppm: u32) -> Self {
        self.full_ppm = ppm;
        self
    }

    /// Timers fire up to `d` late.
    pub fn timer_jitter(mut self, d: Duration) -> Self {
        self.timer_jitter = d;
        self
    }
}
