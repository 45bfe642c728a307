//! `Node::wait_polling` and `Node::ask_polling`: a thread that waits for
//! its reply by polling the node's inbox itself, over the in-process
//! loopback transport.

mod common;

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use common::*;
use kaspar::prelude::*;
use kaspar::{AskError, SendError};
use kaspar_remote::loopback::Loopback;
use kaspar_remote::{Export, IdleStrategy, Node, NodeConfig, RemoteAddr};

const PATIENCE: Duration = Duration::from_secs(20);

/// A `Counter` exported by a server node and looked up by a client node
/// whose bridge naps as long as a node's bridge ever does, so a reply that
/// came back quickly was taken by the waiting thread.
struct Setup {
    net: Loopback,
    system: System,
    server: Node<Loopback>,
    client: Node<Loopback>,
    remote: RemoteAddr<Counter>,
    /// What the counter was sent, in order.
    log: Arc<Mutex<Vec<u64>>>,
}

impl Setup {
    fn new(export: Export) -> Setup {
        let net = Loopback::new(64);
        let system = System::new();
        let (counter, log) = Counter::new();
        let counter = system.spawn(counter).start();
        let server = Node::new(net.clone(), "server").unwrap();
        server.export_with("counter", &counter, export).unwrap();
        let sleepy = NodeConfig {
            idle: IdleStrategy::sleep(Duration::from_millis(1)),
            ..NodeConfig::default()
        };
        let client = Node::with_config(net.clone(), "client", sleepy).unwrap();
        let remote = client.lookup::<Counter>("counter").unwrap();
        Setup {
            net,
            system,
            server,
            client,
            remote,
            log,
        }
    }

    fn end(self) {
        let Setup {
            system,
            server,
            client,
            ..
        } = self;
        drop((client, server));
        system.shutdown();
    }
}

#[test]
fn a_thousand_asks_waited_on_by_polling_get_their_own_replies_in_order() {
    let s = Setup::new(Export::new().fast_send());
    for i in 0..1_000u64 {
        let mut ask = s.remote.ask(Seq(i)).unwrap();
        let doubled = s.client.wait_polling(&mut ask, PATIENCE).unwrap();
        // The counter answers with twice the number it was sent.
        assert_eq!(doubled, 2 * i, "reply to ask {i}");
    }
    assert_eq!(*s.log.lock().unwrap(), (0..1_000).collect::<Vec<_>>());
    assert_eq!(s.client.stats().pending, 0);
    s.end();
}

#[test]
fn a_wait_that_times_out_leaves_the_ask_to_be_waited_on_again() {
    let s = Setup::new(Export::new());
    assert!(s.net.pause("server", true));
    let mut ask = s.remote.ask(Seq(21)).unwrap();
    assert!(matches!(
        s.client.wait_polling(&mut ask, Duration::from_millis(30)),
        Err(AskError::Timeout(None))
    ));
    assert_eq!(s.client.stats().pending, 1, "the ask is still pending");
    s.net.pause("server", false);
    assert!(matches!(s.client.wait_polling(&mut ask, PATIENCE), Ok(42)));
    s.end();
}

#[test]
fn a_local_ask_can_be_waited_on_the_same_way() {
    let net = Loopback::new(8);
    let system = System::new();
    let (counter, _log) = Counter::new();
    let counter = system.spawn(counter).start();
    let node = Node::new(net, "alone").unwrap();
    let mut ask = counter.ask(Seq(0)).unwrap();
    assert!(matches!(node.wait_polling(&mut ask, PATIENCE), Ok(0)));
    drop(node);
    system.shutdown();
}

#[test]
fn a_thousand_ask_pollings_get_their_own_replies_in_order_and_leave_nothing_pending() {
    let s = Setup::new(Export::new().fast_send());
    for i in 0..1_000u64 {
        let doubled = s
            .client
            .ask_polling(&s.remote, Seq(i), PATIENCE)
            .unwrap()
            .unwrap();
        assert_eq!(doubled, 2 * i, "reply to ask {i}");
    }
    assert_eq!(*s.log.lock().unwrap(), (0..1_000).collect::<Vec<_>>());
    assert_eq!(
        s.client.stats().pending,
        0,
        "the replies never went through the table"
    );
    s.end();
}

#[test]
fn ask_polling_reports_a_panicked_handler_and_a_timeout_and_drops_the_late_reply() {
    let s = Setup::new(Export::new());
    assert!(matches!(
        s.client.ask_polling(&s.remote, Boom, PATIENCE),
        Ok(Err(AskError::Panicked(None)))
    ));

    // The server takes nothing while paused: the ask times out, and its
    // reply, once it comes, is nobody's.
    assert!(s.net.pause("server", true));
    assert!(matches!(
        s.client
            .ask_polling(&s.remote, Seq(0), Duration::from_millis(30)),
        Ok(Err(AskError::Timeout(None)))
    ));
    s.net.pause("server", false);
    // The next ask gets its own reply, not the late one.
    assert!(matches!(
        s.client.ask_polling(&s.remote, Seq(1), PATIENCE),
        Ok(Ok(2))
    ));
    assert_eq!(s.client.stats().pending, 0);
    s.end();
}

#[test]
fn ask_polling_on_a_lost_link_hands_the_message_back() {
    let s = Setup::new(Export::new());
    s.net.kill("server");
    let until = Instant::now() + PATIENCE;
    loop {
        match s
            .client
            .ask_polling(&s.remote, Seq(7), Duration::from_millis(50))
        {
            // Refused before it was sent: the message comes back.
            Err(SendError::Closed { msg: Seq(7), .. }) => break,
            // Sent before the loss was seen: the reply never comes.
            Ok(Err(AskError::PeerLost | AskError::Timeout(_))) => {}
            other => panic!("unexpected {other:?}"),
        }
        assert!(Instant::now() < until, "the loss was never seen");
    }
    s.end();
}

#[test]
fn ask_polling_through_another_node_than_the_lookup_still_gets_the_reply() {
    let s = Setup::new(Export::new().fast_send());
    // The address belongs to `client`; its replies come to `client`'s
    // inbox, which `other` does not poll.
    let other = Node::new(s.net.clone(), "other").unwrap();
    for i in 0..100u64 {
        assert!(matches!(
            other.ask_polling(&s.remote, Seq(i), PATIENCE),
            Ok(Ok(n)) if n == 2 * i
        ));
    }
    drop(other);
    s.end();
}

#[test]
fn threads_asking_every_way_at_once_each_get_their_own_replies() {
    let s = Setup::new(Export::new().fast_send());
    const PER_THREAD: u64 = 500;
    std::thread::scope(|scope| {
        for t in 0..6u64 {
            let s = &s;
            scope.spawn(move || {
                for k in 0..PER_THREAD {
                    // Every number is sent once, by one thread.
                    let n = t * PER_THREAD + k;
                    let doubled = match t % 3 {
                        0 => s
                            .client
                            .ask_polling(&s.remote, Seq(n), PATIENCE)
                            .unwrap()
                            .unwrap(),
                        1 => {
                            let mut ask = s.remote.ask(Seq(n)).unwrap();
                            s.client.wait_polling(&mut ask, PATIENCE).unwrap()
                        }
                        _ => s.remote.ask(Seq(n)).unwrap().wait().unwrap(),
                    };
                    assert_eq!(doubled, 2 * n, "thread {t}, ask {k}");
                }
            });
        }
    });
    // Nothing lost, nothing handled twice.
    let mut seen = s.log.lock().unwrap().clone();
    seen.sort_unstable();
    assert_eq!(seen, (0..6 * PER_THREAD).collect::<Vec<_>>());
    assert_eq!(s.client.stats().pending, 0);
    s.end();
}
