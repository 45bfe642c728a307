//! Topics over iceoryx2: one publisher, many subscribing actors, each in
//! its own process (this test binary re-launched), and what a slow
//! subscriber loses.
#![cfg(feature = "iceoryx2")]

mod iceoryx2_peer;
mod topic_common;

use iceoryx2_peer::{
    eventually, fresh_namespace, heard, inherited_namespace, role, tell, transport, Peer, PATIENCE,
};
use kaspar::prelude::*;
use kaspar_remote::topic::{Subscriber, Topic};
use kaspar_remote::transport::iceoryx2::Iceoryx2Config;
use kaspar_remote::{IdleStrategy, LinkError};
use topic_common::{logged, recorder, Other, Tick};

/// Messages the cross-process test publishes: fewer than a subscriber's
/// queue holds, so none can be dropped however the processes are
/// scheduled.
const N: u64 = 1000;
const DEPTH: usize = 1024;

/// A subscriber process: subscribes, says so, and once it has `N`
/// messages (or the parent closes its stdin) reports what it received.
fn subscriber_process() {
    let t = transport(
        Iceoryx2Config::default()
            .namespace(inherited_namespace())
            .topic_depth(DEPTH),
    );
    let system = System::new();
    let (addr, log) = recorder(&system);
    let sub = Topic::<Tick>::new("ticks")
        .subscribe(&t, &addr)
        .expect("subscribe");
    let sub = sub
        .spawn(IdleStrategy::DEFAULT)
        .expect("a subscriber thread");
    tell("subscribed");
    let all = eventually(PATIENCE, || logged(&log).len() as u64 >= N);
    let got = logged(&log);
    let in_order = got.iter().copied().eq(0..got.len() as u64);
    let s = sub.stats();
    tell(&format!(
        "got {} in_order={in_order} all={all} missed={} duplicates={} rejected={} undelivered={}",
        got.len(),
        s.missed,
        s.duplicates,
        s.rejected,
        s.undelivered
    ));
    // Stay subscribed until the parent is done.
    let _ = heard();
    drop(sub);
    system.shutdown();
}

#[test]
fn one_publisher_reaches_two_subscriber_processes_in_order_once() {
    if role().is_some() {
        return subscriber_process();
    }
    let ns = fresh_namespace("topic2");
    let test = "one_publisher_reaches_two_subscriber_processes_in_order_once";
    let mut a = Peer::spawn(test, "subscriber", ns.name());
    let mut b = Peer::spawn(test, "subscriber", ns.name());
    a.expect("subscribed");
    b.expect("subscribed");
    let t = transport(
        Iceoryx2Config::default()
            .namespace(ns.name())
            .topic_depth(DEPTH),
    );
    let mut publisher = Topic::<Tick>::new("ticks").publisher(&t).unwrap();
    assert_eq!(publisher.subscribers(), 2);
    for n in 0..N {
        let reached = publisher.publish(&Tick {
            n,
            px: 100 + n as i64,
        });
        assert_eq!(reached, Ok(2), "tick {n} reaches both subscribers");
    }
    assert_eq!(publisher.published(), N);
    let expected =
        format!("{N} in_order=true all=true missed=0 duplicates=0 rejected=0 undelivered=0");
    assert_eq!(a.expect("got"), expected);
    assert_eq!(b.expect("got"), expected);
    a.finish();
    b.finish();
}

#[test]
fn a_slow_subscriber_keeps_the_newest_depth_messages_and_counts_the_rest_missed() {
    let ns = fresh_namespace("topicslow");
    let depth = 8;
    let t = transport(
        Iceoryx2Config::default()
            .namespace(ns.name())
            .topic_depth(depth),
    );
    let system = System::new();
    let (fast_addr, fast_log) = recorder(&system);
    let (slow_addr, slow_log) = recorder(&system);
    let topic = Topic::<Tick>::new("ticks");
    let mut fast = topic.subscribe(&t, &fast_addr).unwrap();
    let mut slow = topic.subscribe(&t, &slow_addr).unwrap();
    let mut publisher = topic.publisher(&t).unwrap();

    // 20 ticks; the fast subscriber takes each at once, the slow one
    // takes the first (a subscriber counts losses from the first frame it
    // sees of a publisher) and then nothing until the end.
    for n in 0..20 {
        assert_eq!(
            publisher.publish(&Tick { n, px: 0 }),
            Ok(2),
            "never held up"
        );
        assert_eq!(fast.poll(64), Ok(1));
        if n == 0 {
            assert_eq!(slow.poll(64), Ok(1));
        }
    }
    assert_eq!(slow.poll(64), Ok(depth));
    // Three more, after the slow subscriber caught up: no new loss.
    for n in 20..23 {
        assert_eq!(publisher.publish(&Tick { n, px: 0 }), Ok(2));
    }
    assert_eq!(fast.poll(64), Ok(3));
    assert_eq!(slow.poll(64), Ok(3));
    assert_eq!(slow.poll(64), Ok(0));

    assert!(eventually(PATIENCE, || logged(&slow_log).len() == 12
        && logged(&fast_log).len() == 23));
    assert_eq!(logged(&fast_log), (0..23).collect::<Vec<_>>());
    let kept: Vec<u64> = [0].into_iter().chain(12..23).collect();
    assert_eq!(
        logged(&slow_log),
        kept,
        "of ticks 1..20 the slow subscriber lost the 11 oldest and kept the newest {depth}"
    );
    let (f, s) = (fast.stats(), slow.stats());
    assert_eq!((f.received, f.delivered, f.missed), (23, 23, 0));
    assert_eq!((s.received, s.delivered, s.missed), (12, 12, 11));
    assert_eq!((s.duplicates, s.rejected, s.undelivered), (0, 0, 0));
    system.shutdown();
}

#[test]
fn a_frame_of_another_type_on_the_topic_is_rejected_not_delivered() {
    let ns = fresh_namespace("topicwrong");
    let t = transport(Iceoryx2Config::default().namespace(ns.name()));
    let system = System::new();
    let (addr, log) = recorder(&system);
    let mut sub: Subscriber<Tick> = Topic::new("mixed").subscribe(&t, &addr).unwrap();
    let mut wrong = Topic::<Other>::new("mixed").publisher(&t).unwrap();
    let mut right = Topic::<Tick>::new("mixed").publisher(&t).unwrap();
    assert_eq!(wrong.publish(&Other(1)), Ok(1));
    assert_eq!(right.publish(&Tick { n: 0, px: 1 }), Ok(1));
    assert_eq!(sub.poll(64), Ok(2));
    let s = sub.stats();
    assert_eq!((s.received, s.rejected, s.delivered), (2, 1, 1));
    assert!(eventually(PATIENCE, || logged(&log) == [0]));
    system.shutdown();
}

#[test]
fn a_message_too_large_for_the_topic_is_refused_and_uses_no_number() {
    let ns = fresh_namespace("topicbig");
    let t = transport(
        Iceoryx2Config::default()
            .namespace(ns.name())
            .max_frame_len(48),
    );
    let system = System::new();
    let (addr, log) = recorder(&system);
    let mut sub = Topic::<Tick>::new("small").subscribe(&t, &addr).unwrap();
    let mut publisher = Topic::<Tick>::new("small").publisher(&t).unwrap();
    let big = Tick { n: 0, px: i64::MIN };
    assert!(matches!(
        publisher.publish(&big),
        Err(LinkError::TooLarge { max: 48, .. })
    ));
    assert_eq!(publisher.published(), 0);
    assert_eq!(publisher.publish(&Tick { n: 0, px: 1 }), Ok(1));
    assert_eq!(sub.poll(64), Ok(1));
    assert_eq!(sub.stats().missed, 0, "the refused message left no gap");
    assert!(eventually(PATIENCE, || logged(&log) == [0]));
    system.shutdown();
}
