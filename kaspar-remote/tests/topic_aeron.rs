//! Topics over Aeron: one typed publisher, two subscribing actors, each in
//! a process of its own (this test binary re-launched), every message in
//! order and once: over UDP multicast (a media driver per process, as on
//! three hosts) inside a network namespace the test creates (skipped, with
//! the reason printed, where it cannot), and over IPC on one driver. Then,
//! in one process, what a publisher does with no subscriber, a message of
//! another type, a topic with no route, and a subscriber that stops
//! reading (about 20 s: Aeron's untethered timeouts at their defaults).

#![cfg(feature = "aeron")]

mod aeron_support;
mod topic_common;

use std::net::{IpAddr, Ipv4Addr};
use std::time::{Duration, Instant};

use aeron_support::*;
use kaspar::prelude::*;
use kaspar_remote::topic::{Publisher, Topic};
use kaspar_remote::transport::aeron::{
    AeronConfig, AeronTransport, MulticastFlow, MulticastGroup, TopicRoute,
};
use kaspar_remote::{IdleStrategy, LinkError};
use topic_common::{logged, recorder, Other, Tick};

/// Messages each cross-process test publishes.
const N: u64 = 2000;
const PATIENCE: Duration = Duration::from_secs(60);
const MULTICAST_TEST: &str = "a_multicast_topic_reaches_two_subscriber_processes_in_order_once";
const IPC_TEST: &str = "an_ipc_topic_reaches_two_subscriber_processes_in_order_once";

/// The multicast route of "ticks": the publisher is connected once both
/// subscribers' hosts have joined (`g:/2`) and paced by the slower one, so
/// that neither can lose a message, however the processes are scheduled.
fn multicast(config: AeronConfig) -> AeronConfig {
    let group = MulticastGroup::new(Ipv4Addr::new(224, 20, 30, 43), 40458, 23)
        .interface(IpAddr::V4(Ipv4Addr::LOCALHOST))
        .flow(MulticastFlow::Slowest {
            min_receivers: Some(2),
        });
    config.topic("ticks", TopicRoute::Multicast(group))
}

/// A subscriber process: subscribes a recorder to "ticks", says so, and
/// once it has `N` messages (or after `PATIENCE`) reports what it got;
/// stays subscribed until the parent is done.
fn subscriber_process(config: AeronConfig) {
    let transport = AeronTransport::launch(config).unwrap();
    let system = System::new();
    let (addr, log) = recorder(&system);
    let sub = Topic::<Tick>::new("ticks")
        .subscribe(&transport, &addr)
        .expect("subscribe")
        .spawn(IdleStrategy::DEFAULT)
        .expect("a subscriber thread");
    say("subscribed");
    let all = within(PATIENCE, || (logged(&log).len() as u64 >= N).then_some(())).is_some();
    let got = logged(&log);
    let in_order = got.iter().copied().eq(0..got.len() as u64);
    let s = sub.stats();
    say(&format!(
        "got {} in_order={in_order} all={all} missed={} duplicates={} rejected={} undelivered={}",
        got.len(),
        s.missed,
        s.duplicates,
        s.rejected,
        s.undelivered
    ));
    parent_says();
    drop(sub);
    system.shutdown();
}

/// Waits until the publisher is connected, then publishes ticks `0..N`,
/// retrying while the window is full.
fn publish_all(publisher: &mut Publisher<Tick>) {
    let joined = within(PATIENCE, || (publisher.subscribers() == 1).then_some(()));
    assert!(
        joined.is_some(),
        "no subscriber connected within {PATIENCE:?}"
    );
    let deadline = Instant::now() + PATIENCE;
    for n in 0..N {
        let tick = Tick {
            n,
            px: 100 + n as i64,
        };
        loop {
            match publisher.publish(&tick) {
                Ok(1) => break,
                Err(LinkError::Full) => std::thread::yield_now(),
                other => panic!("tick {n}: {other:?}"),
            }
            assert!(Instant::now() < deadline, "tick {n} not published in time");
        }
    }
    assert_eq!(publisher.published(), N);
}

const EXPECTED: &str = "in_order=true all=true missed=0 duplicates=0 rejected=0 undelivered=0";

/// Both subscribers report every tick, in order, once.
fn expect_everything(subscribers: &mut [Peer]) {
    for sub in subscribers.iter_mut() {
        let report = sub.expect_line("got ", PATIENCE * 2);
        assert_eq!(report, format!("{N} {EXPECTED}"));
    }
}

#[test]
fn a_multicast_topic_reaches_two_subscriber_processes_in_order_once() {
    match role().as_deref() {
        Some("subscriber") => return subscriber_process(multicast(embedded())),
        Some("publisher") => {
            let transport = AeronTransport::launch(multicast(embedded())).unwrap();
            let mut publisher = Topic::<Tick>::new("ticks").publisher(&transport).unwrap();
            publish_all(&mut publisher);
            say(&format!("published {}", publisher.published()));
            parent_says();
            return;
        }
        _ => {}
    }
    let _serial = serial();
    let ns = match Namespace::create() {
        Ok(ns) => ns,
        Err(why) => {
            eprintln!("skipped: cannot set up a network namespace for multicast: {why}");
            return;
        }
    };
    let mut subscribers: Vec<Peer> = (0..2)
        .map(|_| Peer::spawn_with(ns.command(), MULTICAST_TEST, "subscriber", &[]))
        .collect();
    for sub in &mut subscribers {
        sub.expect_line("subscribed", PATIENCE);
    }
    let mut publisher = Peer::spawn_with(ns.command(), MULTICAST_TEST, "publisher", &[]);
    expect_everything(&mut subscribers);
    assert_eq!(publisher.expect_line("published ", PATIENCE), N.to_string());
    for peer in subscribers.iter_mut().chain([&mut publisher]) {
        peer.tell("done");
        assert!(peer.wait(Duration::from_secs(20)).success());
    }
}

#[test]
fn an_ipc_topic_reaches_two_subscriber_processes_in_order_once() {
    if role().as_deref() == Some("subscriber") {
        return subscriber_process(parents_driver());
    }
    let _serial = serial();
    // Names without a route travel over hashed IPC on the shared driver.
    let transport = AeronTransport::launch(embedded()).unwrap();
    let dir = dir_of(&transport);
    let mut subscribers: Vec<Peer> = (0..2)
        .map(|_| Peer::spawn(IPC_TEST, "subscriber", &[(DIR, &dir)]))
        .collect();
    for sub in &mut subscribers {
        sub.expect_line("subscribed", PATIENCE);
    }
    // Both subscriptions exist before the publication: the driver links
    // it to both at once, so none misses the first ticks.
    let mut publisher = Topic::<Tick>::new("ticks").publisher(&transport).unwrap();
    publish_all(&mut publisher);
    expect_everything(&mut subscribers);
    for sub in &mut subscribers {
        sub.tell("done");
        assert!(sub.wait(Duration::from_secs(20)).success());
    }
}

/// Polls `sub` until it has taken `n` frames in all, at most `PATIENCE`.
fn take(sub: &mut kaspar_remote::topic::Subscriber<Tick>, n: usize) -> usize {
    let mut taken = 0;
    let deadline = Instant::now() + PATIENCE;
    while taken < n && Instant::now() < deadline {
        taken += sub.poll(64).unwrap();
    }
    taken
}

#[test]
fn with_no_subscriber_a_publish_sends_nothing_and_later_ones_arrive_without_a_gap() {
    let transport = AeronTransport::launch(embedded()).unwrap();
    let system = System::new();
    let (addr, log) = recorder(&system);
    let topic = Topic::<Tick>::new("alone");
    let mut publisher = topic.publisher(&transport).unwrap();
    assert_eq!(publisher.subscribers(), 0);
    assert_eq!(publisher.publish(&Tick { n: 0, px: 1 }), Ok(0));
    let mut sub = topic.subscribe(&transport, &addr).unwrap();
    let joined = within(PATIENCE, || (publisher.subscribers() == 1).then_some(()));
    assert!(joined.is_some(), "the subscriber never connected");
    for n in 1..4 {
        assert_eq!(publisher.publish(&Tick { n, px: 1 }), Ok(1));
    }
    assert_eq!(take(&mut sub, 3), 3);
    let s = sub.stats();
    assert_eq!((s.received, s.delivered, s.missed), (3, 3, 0));
    assert!(within(PATIENCE, || (logged(&log) == [1, 2, 3]).then_some(())).is_some());
    system.shutdown();
}

#[test]
fn a_frame_of_another_type_on_the_topic_is_rejected_not_delivered() {
    let transport = AeronTransport::launch(embedded()).unwrap();
    let system = System::new();
    let (addr, log) = recorder(&system);
    let mut sub = Topic::<Tick>::new("mixed")
        .subscribe(&transport, &addr)
        .unwrap();
    let mut wrong = Topic::<Other>::new("mixed").publisher(&transport).unwrap();
    let mut right = Topic::<Tick>::new("mixed").publisher(&transport).unwrap();
    let connected = within(PATIENCE, || {
        (wrong.subscribers() == 1 && right.subscribers() == 1).then_some(())
    });
    assert!(connected.is_some(), "the publishers never connected");
    assert_eq!(wrong.publish(&Other(1)), Ok(1));
    assert_eq!(right.publish(&Tick { n: 0, px: 1 }), Ok(1));
    assert_eq!(take(&mut sub, 2), 2);
    let s = sub.stats();
    assert_eq!((s.received, s.rejected, s.delivered), (2, 1, 1));
    assert!(within(PATIENCE, || (logged(&log) == [0]).then_some(())).is_some());
    system.shutdown();
}

#[test]
fn a_topic_without_a_route_is_refused_once_the_hashed_fallback_is_off() {
    let transport = AeronTransport::launch(embedded().hashed_fallback(false)).unwrap();
    let system = System::new();
    let (addr, _log) = recorder(&system);
    let topic = Topic::<Tick>::new("nowhere");
    let refused = |e: LinkError| matches!(e, LinkError::Transport(why) if why.contains("nowhere"));
    assert!(refused(topic.publisher(&transport).unwrap_err()));
    assert!(refused(topic.subscribe(&transport, &addr).unwrap_err()));
    system.shutdown();
}

/// Over IPC a subscriber that stops reading holds the publisher back for
/// Aeron's untethered window limit timeout (5 s by default), then is left
/// behind; once it rejoins (after the resting timeout, 10 s by default) it
/// reads on from the newest ticks and counts what it never saw as missed.
/// The subscriber that kept up loses nothing.
#[test]
fn a_slow_ipc_subscriber_is_left_behind_and_counts_what_it_missed() {
    // A 64 KiB term: the publisher may run 32 KiB (a few hundred ticks)
    // ahead of its slowest tethered reader.
    let transport = AeronTransport::launch(embedded().term_length(64 * 1024)).unwrap();
    let system = System::new();
    let (fast_addr, fast_log) = recorder(&system);
    let (slow_addr, slow_log) = recorder(&system);
    let topic = Topic::<Tick>::new("slow");
    let mut fast = topic.subscribe(&transport, &fast_addr).unwrap();
    let mut slow = topic.subscribe(&transport, &slow_addr).unwrap();
    let mut publisher = topic.publisher(&transport).unwrap();
    let joined = within(PATIENCE, || (publisher.subscribers() == 1).then_some(()));
    assert!(joined.is_some(), "the subscribers never connected");
    assert_eq!(publisher.publish(&Tick { n: 0, px: 0 }), Ok(1));
    assert_eq!(take(&mut fast, 1), 1);
    assert_eq!(take(&mut slow, 1), 1);

    // The slow subscriber reads nothing more. Publish (the fast one keeps
    // up) until the publisher is held back, then let go; from then on the
    // slow one reads again, and publishing goes on until it has seen a gap
    // (it rejoined at the newest ticks).
    let deadline = Instant::now() + PATIENCE * 2;
    let (mut n, mut held_back, mut let_go) = (1u64, false, false);
    while slow.stats().missed == 0 {
        assert!(
            Instant::now() < deadline,
            "no gap seen: held back {held_back}, let go {let_go}, {:?}",
            slow.stats()
        );
        fast.poll(256).unwrap();
        match publisher.publish(&Tick { n, px: 0 }) {
            Ok(1) => {
                n += 1;
                let_go = held_back;
            }
            Err(LinkError::Full) => {
                held_back = true;
                std::thread::sleep(Duration::from_millis(1));
            }
            other => panic!("tick {n}: {other:?}"),
        }
        if let_go {
            slow.poll(256).unwrap();
        }
        std::thread::sleep(Duration::from_micros(100));
    }
    let published = n;
    let deadline = Instant::now() + PATIENCE;
    while fast.stats().received < published && Instant::now() < deadline {
        fast.poll(256).unwrap();
    }
    while slow.poll(256).unwrap() > 0 {}

    let (f, s) = (fast.stats(), slow.stats());
    assert_eq!(
        (f.received, f.missed),
        (published, 0),
        "the fast one lost nothing"
    );
    assert!(s.missed > 0, "the slow one was left behind: {s:?}");
    let got = within(PATIENCE, || {
        let got = logged(&slow_log);
        (got.len() as u64 == s.delivered).then_some(got)
    })
    .expect("every delivered tick logged");
    assert!(
        got.windows(2).all(|w| w[0] < w[1]),
        "in order, once: {got:?}"
    );
    let last = *got.last().unwrap();
    assert_eq!(
        s.delivered + s.missed,
        last + 1,
        "every tick up to the last one seen was delivered or counted missed"
    );
    assert!(
        within(PATIENCE, || (logged(&fast_log).len() as u64 == published)
            .then_some(()))
        .is_some()
    );
    system.shutdown();
}
