//! A pooled actor gives back the room a deep backlog took once it goes
//! idle: heap bytes counted exactly, before the backlog, at its deepest,
//! and after the actor drained it and went idle. Here for a `Segmented`
//! mailbox, which grows by blocks and otherwise keeps room for its largest
//! backlog (`SegmentedMpsc::trim`); a `Compact` queue's lane, the same
//! queue behind the compact one once it has inflated, is checked by the
//! compact queue's unit tests (inflation depends on timing here).
//!
//! One test function: the count is process-wide.

use std::sync::mpsc::{channel, Receiver};
use std::time::{Duration, Instant};

use kaspar::prelude::*;
use kaspar::{MailboxKind, PoolConfig, SystemConfig};

use kaspar_suite::alloc::{live_bytes as live, Live};

#[global_allocator]
static GLOBAL: Live = Live;

pub struct Hold(Receiver<()>);
pub struct Tell(u64);
pub struct Seen;

#[actor]
pub struct Sink {
    seen: u64,
}

#[actor]
impl Sink {
    /// Keeps the actor in this handler until the test lets it go, so that
    /// what is sent meanwhile queues up.
    #[handler(Hold)]
    fn hold(&mut self, h: Hold, _ctx: &mut Ctx<Self>) {
        let _ = h.0.recv();
    }

    #[handler(Tell)]
    fn tell(&mut self, t: Tell, _ctx: &mut Ctx<Self>) {
        self.seen += t.0;
    }

    #[handler(Seen)]
    fn seen(&mut self, _s: Seen, _ctx: &mut Ctx<Self>) -> u64 {
        self.seen
    }
}

const BACKLOG: u64 = 10_000;
/// What an idle actor may keep beyond what it held before the backlog: a
/// spare block (31 slots of 32 bytes here) and change. The backlog itself
/// takes about 330 KB.
const KEPT: isize = 4 * 1024;

/// The heap once what an idle actor's activation frees on its way out has
/// been freed: the lowest count seen over a few milliseconds.
fn settled() -> isize {
    let mut low = live();
    for _ in 0..20 {
        std::thread::sleep(Duration::from_millis(1));
        low = low.min(live());
    }
    low
}

/// Sends `sink` a backlog while it is held, lets it go, and checks that the
/// room the backlog took is given back once it is idle again.
fn backlog_is_given_back(what: &str, sink: &Addr<Sink>, seen_before: u64) {
    let before = settled();
    let (go, wait) = channel();
    sink.send(Hold(wait)).unwrap();
    for _ in 0..BACKLOG {
        sink.send(Tell(1)).unwrap();
    }
    let deepest = live() - before;
    assert!(
        deepest > 200_000,
        "{what}: the backlog took {deepest} bytes, expected its blocks (about 330 KB)"
    );
    go.send(()).unwrap();
    drop(go);
    assert_eq!(
        sink.ask(Seen).unwrap().wait().unwrap(),
        seen_before + BACKLOG
    );
    let deadline = Instant::now() + Duration::from_secs(10);
    let mut kept = settled() - before;
    while kept > KEPT && Instant::now() < deadline {
        kept = settled() - before;
    }
    eprintln!("{what}: the backlog took {deepest} bytes; idle again, {kept} kept");
    assert!(
        kept <= KEPT,
        "{what}: idle again, the actor keeps {kept} bytes of its backlog's {deepest}"
    );
}

#[test]
fn an_idle_pooled_actor_gives_back_the_room_of_its_deepest_backlog() {
    let system = System::with_config(SystemConfig {
        pool: PoolConfig::new().workers(2),
        ..SystemConfig::default()
    });

    let segmented = system
        .spawn(Sink { seen: 0 })
        .pooled()
        .mailbox(MailboxKind::DEFAULT)
        .start();
    assert_eq!(segmented.ask(Seen).unwrap().wait().unwrap(), 0);
    backlog_is_given_back("Segmented", &segmented, 0);
    // And again: the next backlog allocates afresh, and is given back.
    backlog_is_given_back("Segmented, twice", &segmented, BACKLOG);

    system.shutdown();
}
