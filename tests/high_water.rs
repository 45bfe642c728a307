//! `ActorStats::mailbox_high_water` is the most messages queued at once:
//! exact for every kind but `Segmented`, whose lock-free push reads the
//! consumer's position once per block and may report up to one block (31
//! messages) more. `Compact` counts what its consumer took into its spill
//! and has yet to hand out (it did not: 300 reported where 400 were
//! queued). An actor on a thread of its own and a pooled one alike.
//!
//! The actor is held inside a handler while messages queue behind it, so
//! the depths are exact and nothing here depends on timing.

use std::sync::mpsc::{channel, Receiver, Sender};
use std::sync::Mutex;

use kaspar::prelude::*;

pub struct Item;

/// Holds the actor in its handler until released.
pub struct Hold {
    entered: Sender<()>,
    release: Mutex<Receiver<()>>,
}

#[actor]
pub struct Sink;

#[actor]
impl Sink {
    #[handler(Item)]
    fn item(&mut self, _m: Item, _c: &mut Ctx<Self>) {}

    #[handler(Hold)]
    fn hold(&mut self, m: Hold, _c: &mut Ctx<Self>) {
        m.entered.send(()).unwrap();
        m.release.lock().unwrap().recv().unwrap();
    }
}

/// A hold, the signal that the actor is inside it, and its release.
fn hold() -> (Hold, Receiver<()>, Sender<()>) {
    let (entered, inside) = channel();
    let (release, released) = channel();
    let hold = Hold {
        entered,
        release: Mutex::new(released),
    };
    (hold, inside, release)
}

/// Every kind, with the largest mark above the true peak it may report.
fn kinds() -> Vec<(MailboxKind, u64)> {
    vec![
        (MailboxKind::Compact, 0),
        (MailboxKind::bqueue(16), 0),
        (MailboxKind::batched(16), 0),
        (MailboxKind::sharded(2, 16), 0),
        (MailboxKind::lock_free(1024), 0),
        (MailboxKind::segmented(0), 31),
        (MailboxKind::segmented(64), 31),
    ]
}

/// Runs `queue` against an actor of each kind (max batch 1), on a thread
/// of its own and pooled; checks the mark it reports against `peak`.
fn check(peak: u64, queue: impl Fn(&Addr<Sink>) -> Sender<()>) {
    for pooled in [false, true] {
        for (kind, over) in kinds() {
            let system = System::new();
            let spawn = system.spawn(Sink).mailbox(kind).max_batch(1);
            let sink = if pooled {
                spawn.pooled().start()
            } else {
                spawn.start()
            };
            let release = queue(&sink);
            let mark = sink.stats().mailbox_high_water;
            release.send(()).unwrap();
            sink.ask(Item).unwrap().wait().unwrap();
            system.shutdown();
            assert!(
                (peak..=peak + over).contains(&mark),
                "{kind:?}, pooled {pooled}: mark {mark}, peak {peak}"
            );
        }
    }
}

#[test]
fn the_mark_counts_what_a_consumer_took_and_has_yet_to_handle() {
    // Held with 102 queued behind it; released, it takes them all (into
    // `Compact`'s spill) and is held again by the second hold, with 100
    // still to hand out; then 300 more: 400 queued at once.
    check(400, |sink| {
        let (first, inside, release_first) = hold();
        sink.send(first).unwrap();
        inside.recv().unwrap();
        let (second, inside_again, release_second) = hold();
        sink.send(Item).unwrap();
        sink.send(second).unwrap();
        for _ in 0..100 {
            sink.send(Item).unwrap();
        }
        release_first.send(()).unwrap();
        inside_again.recv().unwrap();
        for _ in 0..300 {
            sink.send(Item).unwrap();
        }
        release_second
    });
}

#[test]
fn the_mark_is_the_peak_not_more() {
    // 26 queued at most (25 items and a hold), all taken, then 20.
    check(26, |sink| {
        let (first, inside, release_first) = hold();
        sink.send(first).unwrap();
        inside.recv().unwrap();
        let (second, inside_again, release_second) = hold();
        for _ in 0..25 {
            sink.send(Item).unwrap();
        }
        sink.send(second).unwrap();
        release_first.send(()).unwrap();
        inside_again.recv().unwrap();
        for _ in 0..20 {
            sink.send(Item).unwrap();
        }
        release_second
    });
}
