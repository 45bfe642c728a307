//! Heap allocations of remote deliveries, counted exactly with the suite's
//! counting allocator, process-wide: the sending thread, the receiving
//! node's bridge thread and the actor's thread together. One test
//! function, so no other test in this binary allocates while it measures.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use kaspar::prelude::*;
use kaspar_remote::loopback::Loopback;
use kaspar_remote::{Export, Node, SendPolicy};
use kaspar_suite::alloc::{allocations, warm_parking, Counting};
use serde::{Deserialize, Serialize};

#[global_allocator]
static GLOBAL: Counting = Counting;

#[derive(Serialize, Deserialize, kaspar_remote::Wire)]
#[wire(id = 1)]
pub struct Order {
    pub id: u64,
    pub px: i64,
    pub qty: u32,
}

#[actor]
pub struct Book {
    handled: Arc<AtomicU64>,
    notional: i64,
}

#[actor(remote)]
impl Book {
    #[handler(Order)]
    fn on_order(&mut self, o: Order, _ctx: &mut Ctx<Self>) -> u64 {
        self.notional += o.px * i64::from(o.qty);
        self.handled.fetch_add(1, Ordering::Release);
        o.id
    }
}

const PATIENCE: Duration = Duration::from_secs(10);

/// Waits, without allocating, until the book has handled `n` orders.
fn handled(count: &AtomicU64, n: u64) {
    let until = std::time::Instant::now() + Duration::from_secs(10);
    while count.load(Ordering::Acquire) < n {
        assert!(std::time::Instant::now() < until, "orders went missing");
        std::thread::yield_now();
    }
}

#[test]
fn remote_deliveries_allocate_nothing_but_a_queued_asks_route_back() {
    let net = Loopback::new(1024);
    let system = System::new();
    let count = Arc::new(AtomicU64::new(0));
    let book = system
        .spawn(Book {
            handled: count.clone(),
            notional: 0,
        })
        // bounded, so the bridge waits for room (back-pressure) rather
        // than the mailbox spilling past its ring
        .mailbox(MailboxKind::lock_free(1024))
        .start();
    let server = Node::new(net.clone(), "server").unwrap();
    server.export("book", &book).unwrap();
    server
        .export_with("book_inline", &book, Export::new().fast_send())
        .unwrap();
    let client = Node::new(net, "client").unwrap();
    let remote = client
        .lookup::<Book>("book")
        .unwrap()
        .with_policy(SendPolicy::Wait(Duration::from_secs(5)))
        .unwrap();
    let inline = client.lookup::<Book>("book_inline").unwrap();
    warm_parking();
    let order = |id| Order {
        id,
        px: 100 + id as i64 % 7,
        qty: 3,
    };

    // warm up: buffers, the mailbox's rings, the reply slot cache
    let mut sent = 0;
    for _ in 0..20 {
        for _ in 0..1_000 {
            remote.send(order(sent)).unwrap();
            sent += 1;
        }
        assert_eq!(remote.ask(order(sent)).unwrap().wait().unwrap(), sent);
        sent += 1;
        assert_eq!(inline.ask(order(sent)).unwrap().wait().unwrap(), sent);
        sent += 1;
        assert!(
            matches!(client.ask_polling(&inline, order(sent), PATIENCE), Ok(Ok(n)) if n == sent)
        );
        sent += 1;
    }
    handled(&count, sent);

    // a tell: encoded into the transport's buffer, decoded from it, queued
    // in the actor's mailbox: nothing allocated anywhere
    let before = allocations();
    for _ in 0..10_000 {
        remote.send(order(sent)).unwrap();
        sent += 1;
    }
    handled(&count, sent);
    assert_eq!(
        allocations() - before,
        0,
        "allocations for 10k remote tells"
    );

    // an ask to an actor that runs it inline on the bridge (`fast_send`
    // export): the reply slot comes from the asker's cache and is itself
    // the pending entry; the reply is encoded straight back
    let before = allocations();
    for _ in 0..1_000 {
        assert_eq!(inline.ask(order(sent)).unwrap().wait().unwrap(), sent);
        sent += 1;
    }
    assert_eq!(
        allocations() - before,
        0,
        "allocations for 1k remote asks run inline"
    );

    // the same, asked and waited for by polling in one call: the reply is
    // caught by the polling thread, no slot at all
    let before = allocations();
    for _ in 0..1_000 {
        assert!(
            matches!(client.ask_polling(&inline, order(sent), PATIENCE), Ok(Ok(n)) if n == sent)
        );
        sent += 1;
    }
    assert_eq!(
        allocations() - before,
        0,
        "allocations for 1k ask_polling calls run inline"
    );

    // an ask queued in the actor's mailbox: the replier's route back (one
    // shared record, which outlives the frame), nothing else
    let before = allocations();
    for _ in 0..1_000 {
        assert_eq!(remote.ask(order(sent)).unwrap().wait().unwrap(), sent);
        sent += 1;
    }
    assert_eq!(
        allocations() - before,
        1_000,
        "allocations for 1k remote asks"
    );

    drop((client, server));
    system.shutdown();
}
