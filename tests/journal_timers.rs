//! A journal records *which* of the group's timers fired, and a replay
//! fires that one: not the one due first in the replay, and never a timer
//! of an actor outside the group.
//!
//! Before, a timer record said only that one of the group's timers had
//! fired, and the replay fired the pending timer due first, the
//! simulation's whole queue considered. Two ways that went wrong, both
//! here:
//!
//! * A timer's due time counts from `ctx.now()` when its handler armed
//!   it: live, when the handler ran; in the replay, the input's recorded
//!   arrival. An input that waited live behind a slow handler arms its
//!   timer later live than in the replay, so two timers can be due in one
//!   order live and in the other in the replay.
//! * An actor outside the group ([`Simulation::spawn`]) shares the
//!   simulation's timer queue: a record could fire its timer instead of
//!   the group's.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use kaspar::journal::{Entry, JournalReader, Journaled};
use kaspar::prelude::*;
use kaspar::{Clock, Simulation};
use serde::{Deserialize, Serialize};

/// Arms a timer that rings `label` after `delay_ms`, then works for
/// `work_ms` (real time: live only; a replay's clock does not move while
/// a handler runs).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Arm {
    pub label: String,
    pub delay_ms: u64,
    pub work_ms: u64,
}

#[derive(Clone, Debug)]
pub struct Ring(pub String);

/// What rang, in order.
type Log = Arc<Mutex<Vec<String>>>;

#[actor]
pub struct Quoter {
    log: Log,
}

#[actor]
impl Quoter {
    #[handler(Arm)]
    fn arm(&mut self, arm: Arm, ctx: &mut Ctx<Self>) {
        ctx.schedule_once(Duration::from_millis(arm.delay_ms), Ring(arm.label));
        std::thread::sleep(Duration::from_millis(arm.work_ms));
    }

    #[handler(Ring)]
    fn ring(&mut self, ring: Ring, _ctx: &mut Ctx<Self>) {
        self.log.lock().unwrap().push(ring.0);
    }
}

#[group]
pub struct Desk {
    pub quoter: Addr<Quoter>,
}

fn route(g: &Desk, arm: Arm) -> bool {
    g.quoter.send(arm).is_ok()
}

/// Beats every millisecond, outside the group.
#[actor]
pub struct Metronome {
    beats: Arc<Mutex<u64>>,
}

#[derive(Clone)]
pub struct Beat;

#[actor]
impl Metronome {
    #[started]
    fn started(&mut self, ctx: &mut Ctx<Self>) {
        ctx.schedule_every(Duration::from_millis(1), Beat);
    }

    #[handler(Beat)]
    fn beat(&mut self, _: Beat, _ctx: &mut Ctx<Self>) {
        *self.beats.lock().unwrap() += 1;
    }
}

/// `a` arms a ring due 15 ms from its arrival and then works 20 ms; `b`,
/// fed right after it, arms one due 5 ms from when it is handled. Live,
/// `b` waits for `a`'s work, so `a` rings first (15 ms against 25); from
/// the recorded arrivals, both about 0, `b`'s ring is due first (5 ms
/// against 15).
fn live_run(path: &std::path::Path) -> Vec<String> {
    let log = Log::default();
    let system = System::new();
    let desk = system
        .spawn_group::<Desk>((Quoter { log: log.clone() },))
        .start();
    let journal = Journaled::create(path, &desk, Clock::System, route).unwrap();
    let arm = |label: &str, delay_ms, work_ms| Arm {
        label: label.to_owned(),
        delay_ms,
        work_ms,
    };
    assert!(journal.feed(arm("a", 15, 20)).unwrap());
    assert!(journal.feed(arm("b", 5, 0)).unwrap());
    // Both rings are recorded once both are logged: a ring is recorded
    // when it is queued, before it is handled.
    while log.lock().unwrap().len() < 2 {
        std::thread::sleep(Duration::from_millis(1));
    }
    drop(journal);
    system.shutdown();
    let live = log.lock().unwrap().clone();
    live
}

#[test]
fn a_replay_fires_the_timer_that_fired_live() {
    let dir = std::env::temp_dir().join(format!("kaspar-journal-which-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("live.journal");
    let live = live_run(&path);
    assert_eq!(live, ["a", "b"], "the live run rings in due order");

    // The journal names the timers: the first armed, then the second.
    let mut reader = JournalReader::<Arm>::open(&path).unwrap();
    let mut fired = Vec::new();
    while let Some(entry) = reader.next_entry().unwrap() {
        if let Entry::Timer { timer, .. } = entry {
            fired.push(timer);
        }
    }
    assert_eq!(fired, [Some(0), Some(1)]);

    let log = Log::default();
    let mut sim = Simulation::<Desk>::new((Quoter { log: log.clone() },));
    let n = sim
        .replay(JournalReader::<Arm>::open(&path).unwrap(), route)
        .unwrap();
    assert_eq!(n, 2);
    sim.finish();
    assert_eq!(*log.lock().unwrap(), live, "the replay rang another timer");
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn a_record_never_fires_a_timer_outside_the_group() {
    let dir = std::env::temp_dir().join(format!("kaspar-journal-outside-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("live.journal");
    let live = live_run(&path);

    let log = Log::default();
    let beats = Arc::new(Mutex::new(0));
    let mut sim = Simulation::<Desk>::new((Quoter { log: log.clone() },));
    // Its first beat is due at 1 ms of the simulation's clock, long before
    // the journal's first record (stamped by the system clock).
    sim.spawn(Metronome {
        beats: beats.clone(),
    });
    sim.replay(JournalReader::<Arm>::open(&path).unwrap(), route)
        .unwrap();
    assert_eq!(
        *log.lock().unwrap(),
        live,
        "a record fired an outside timer"
    );
    // A replay fires timers only where the journal says, and it says
    // nothing of the metronome's.
    assert_eq!(*beats.lock().unwrap(), 0);
    sim.finish();
    std::fs::remove_dir_all(&dir).ok();
}
