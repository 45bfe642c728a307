//! A group fed by a remote process is journaled like any group input, and
//! replays in `Simulation`, without a network, to the same output.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use kaspar::journal::{JournalReader, Journaled};
use kaspar::prelude::*;
use kaspar::{Clock, Simulation};
use kaspar_remote::loopback::Loopback;
use kaspar_remote::{deliver_input, Export, Node, RemoteInput, SendPolicy};
use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize, kaspar_remote::Wire, Clone, Debug)]
#[wire(id = 10)]
pub struct Quote {
    pub bid: i64,
    pub ask: i64,
}

#[derive(Serialize, Deserialize, kaspar_remote::Wire, Clone, Debug)]
#[wire(id = 11)]
pub struct Mid;

/// What the book did: each quote's resulting mid, and when (by the group's
/// clock).
type Trace = Arc<Mutex<Vec<(u64, i64)>>>;

#[actor]
pub struct Book {
    mid: i64,
    trace: Trace,
}

#[actor(remote)]
impl Book {
    #[handler(Quote)]
    fn on_quote(&mut self, q: Quote, ctx: &mut Ctx<Self>) {
        // a smoothed mid: the output depends on every input and its order
        self.mid = (3 * self.mid + (q.bid + q.ask) / 2) / 4;
        let at = ctx.now().as_nanos();
        self.trace.lock().unwrap().push((at, self.mid));
    }

    #[handler(Mid)]
    fn on_mid(&mut self, _m: Mid, _ctx: &mut Ctx<Self>) -> i64 {
        self.mid
    }
}

#[group]
pub struct Desk {
    pub book: Addr<Book>,
}

fn route(g: &Desk, input: RemoteInput) -> bool {
    deliver_input(&g.book, input)
}

fn quotes() -> impl Iterator<Item = Quote> {
    let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
    (0..2_000).map(move |_| {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let bid = 10_000 + (x % 200) as i64;
        Quote {
            bid,
            ask: bid + 1 + (x >> 20) as i64 % 5,
        }
    })
}

fn replay(path: &std::path::Path) -> (usize, Vec<(u64, i64)>) {
    let trace = Trace::default();
    let mut sim = Simulation::<Desk>::new((Book {
        mid: 0,
        trace: trace.clone(),
    },));
    let n = sim
        .replay(JournalReader::<RemoteInput>::open(path).unwrap(), route)
        .unwrap();
    sim.finish();
    let out = trace.lock().unwrap().clone();
    (n, out)
}

#[test]
fn a_remote_fed_group_replays_in_simulation_to_the_same_output() {
    let dir = std::env::temp_dir().join(format!("kaspar-remote-journal-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("remote.journal");

    // live: the book's group in one "process", fed over the loopback by
    // another; the export feeds the journal, which routes into the group
    let net = Loopback::new(64);
    let system = System::new();
    let live_trace = Trace::default();
    let group: &'static Desk = Box::leak(Box::new(
        system
            .spawn_group::<Desk>((Book {
                mid: 0,
                trace: live_trace.clone(),
            },))
            .start(),
    ));
    let journal = Journaled::create(&path, group, Clock::System, route).unwrap();
    let server = Node::new(net.clone(), "desk-process").unwrap();
    server
        .export_with(
            "book",
            &group.book,
            Export::new().fed_by(move |input| journal.feed(input).unwrap_or(false)),
        )
        .unwrap();
    let client = Node::new(net, "feed-process").unwrap();
    let book = client
        .lookup::<Book>("book")
        .unwrap()
        .with_policy(SendPolicy::Wait(Duration::from_secs(5)))
        .unwrap();
    for q in quotes() {
        book.send(q).unwrap();
    }
    // asks are inputs too; the reply still goes back in the live run
    let live_mid = book.ask(Mid).unwrap().wait().unwrap();
    drop(client);
    drop(server); // drops the export, and with it the journal: flushed
    system.shutdown();
    let live: Vec<i64> = live_trace.lock().unwrap().iter().map(|&(_, m)| m).collect();
    assert_eq!(live.len(), 2_000);
    assert_eq!(*live.last().unwrap(), live_mid);

    // replayed twice, without a network: the same output, the live one
    let (n1, first) = replay(&path);
    let (n2, second) = replay(&path);
    assert_eq!((n1, n2), (2_001, 2_001), "every quote and the ask replayed");
    assert!(first == second, "two replays of one journal diverged");
    let mids: Vec<i64> = first.iter().map(|&(_, m)| m).collect();
    assert!(mids == live, "the replay diverged from the live run");
    // virtual time is the recorded arrival time, increasing
    assert!(first.windows(2).all(|w| w[0].0 <= w[1].0));
    std::fs::remove_dir_all(&dir).ok();
}
