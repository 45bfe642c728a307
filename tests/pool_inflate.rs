//! When a pooled actor's compact queue inflates into its lane
//! (`mailbox::compact::lane`), as `ActorStats::mailbox_lane` reports it:
//! for asks answered one at a time and for a stream of tells the actor
//! keeps up with, not for short bursts, lone tells, nor for an actor on
//! its own thread; and an inflated actor goes on answering, in order, and
//! stops as any other.
//!
//! Its own test binary, so that no other test's threads share the cores
//! with the ask loop: inflation needs the activation to catch asks in a
//! row, which a starved worker does not (it goes idle between them).

use std::time::{Duration, Instant};

use kaspar::prelude::*;
use kaspar::{PoolConfig, SystemConfig};

#[actor]
pub struct Adder {
    total: u64,
}

#[actor]
impl Adder {
    #[handler(u64)]
    fn add(&mut self, k: u64, _ctx: &mut Ctx<Self>) -> u64 {
        self.total += k;
        self.total
    }
}

fn system() -> System {
    System::with_config(SystemConfig {
        pool: PoolConfig::new().workers(2),
        ..SystemConfig::default()
    })
}

/// Asked in a loop from a thread, the actor answers each ask alone and
/// inflates within a few dozen asks on a quiet machine; on a loaded one
/// its activations may go idle between asks for a while (each then
/// starts the count again), so the loop is bounded by time, generously.
#[test]
fn asked_one_at_a_time_a_pooled_actor_inflates_and_answers_on() {
    let system = system();
    let adder = system.spawn(Adder { total: 0 }).pooled().start();
    let deadline = Instant::now() + Duration::from_secs(30);
    let mut asked = 0;
    while !adder.stats().mailbox_lane && Instant::now() < deadline {
        asked += 1;
        assert_eq!(adder.ask(1).unwrap().wait().unwrap(), asked);
    }
    assert!(
        adder.stats().mailbox_lane,
        "not inflated after {asked} asks"
    );
    assert!(asked >= 32, "inflated after {asked} asks, fewer than 32");
    // Asks, then tells and an ask: every message once, in order.
    for k in 1..=1_000 {
        assert_eq!(adder.ask(1).unwrap().wait().unwrap(), asked + k);
    }
    for _ in 0..1_000 {
        adder.send(2).unwrap();
    }
    assert_eq!(adder.ask(0).unwrap().wait().unwrap(), asked + 3_000);
    system.shutdown();
    assert!(adder.is_stopped());
    assert_eq!(adder.send(1).unwrap_err().into_inner(), 1, "handed back");
}

/// A stream of tells the actor keeps up with inflates its queue too
/// (`compact::STREAM_AFTER`, 16,384 messages in one busy period: its
/// consumer would otherwise take the lock every few messages, on the line
/// every push takes it on), and loses nothing across the switch. Bounded by time as above: on a loaded
/// machine an activation may go idle mid-stream and start its count again.
#[test]
fn a_stream_of_tells_inflates_and_every_tell_arrives_once() {
    let system = system();
    let adder = system.spawn(Adder { total: 0 }).pooled().start();
    let deadline = Instant::now() + Duration::from_secs(30);
    let mut sent = 0;
    while !adder.stats().mailbox_lane && Instant::now() < deadline {
        for _ in 0..100_000 {
            adder.send(1).unwrap();
        }
        sent += 100_000;
        assert_eq!(adder.ask(0).unwrap().wait().unwrap(), sent);
    }
    assert!(
        adder.stats().mailbox_lane,
        "not inflated after {sent} tells"
    );
    for _ in 0..20_000 {
        adder.send(1).unwrap();
    }
    assert_eq!(adder.ask(0).unwrap().wait().unwrap(), sent + 20_000);
    system.shutdown();
}

/// Bursts shorter than a stream, each served in a busy period of its own,
/// do not inflate, however many there are; tells that come one at a time
/// do not; nor does an actor on a thread of its own, however it is asked.
#[test]
fn bursts_lone_tells_and_threaded_actors_do_not_inflate() {
    let system = system();
    let pooled = system.spawn(Adder { total: 0 }).pooled().start();
    let threaded = system
        .spawn(Adder { total: 0 })
        .mailbox(MailboxKind::Compact)
        .start();
    let mut sent = 0;
    for _ in 0..20 {
        for _ in 0..500 {
            pooled.send(1).unwrap();
        }
        sent += 500;
        assert_eq!(pooled.ask(0).unwrap().wait().unwrap(), sent);
        // Long enough for the activation to go idle, ending its count.
        std::thread::sleep(Duration::from_millis(5));
    }
    for _ in 0..200 {
        pooled.send(1).unwrap();
        std::thread::sleep(Duration::from_micros(50));
    }
    assert_eq!(pooled.ask(0).unwrap().wait().unwrap(), sent + 200);
    for k in 1..=2_000 {
        assert_eq!(threaded.ask(1).unwrap().wait().unwrap(), k);
    }
    assert!(!pooled.stats().mailbox_lane);
    assert!(!threaded.stats().mailbox_lane);
    system.shutdown();
}
