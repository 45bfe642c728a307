//! Packed messages: each handler's message and route come back as they
//! went in, whatever the route; a packed message dropped unopened drops
//! both once; one opened as another handler's is refused without a leak.
//! Run under Miri with the rest of the crate's unit tests.

use std::mem::size_of;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use super::*;
use crate::error::AskError;
use crate::reply::ask_pair;

/// Counts its drops.
struct Counted(Arc<AtomicUsize>);

impl Drop for Counted {
    fn drop(&mut self) {
        self.0.fetch_add(1, Ordering::Relaxed);
    }
}

/// Three handlers: a counted message answered with a `u64`, a `String`
/// answered with nothing, and a `u8` answered with a `String`.
type List = Cons<(Counted, u64), Cons<(String, ()), Cons<(u8, String), Nil>>>;
type Msg = Packed<(), List>;
type Third = S<S<Z>>;

fn drops() -> Arc<AtomicUsize> {
    Arc::new(AtomicUsize::new(0))
}

#[test]
fn a_packed_u64_with_its_route_is_two_words() {
    type Two = Cons<(u64, u64), Cons<(u64, ()), Nil>>;
    #[cfg(target_arch = "x86_64")]
    assert_eq!(size_of::<Packed<(), Two>>(), 16);
    #[cfg(not(target_arch = "x86_64"))]
    assert!(size_of::<Packed<(), Two>>() <= 3 * size_of::<usize>());
}

#[test]
fn each_handler_gets_back_its_message_and_route() {
    let count = drops();
    let (asked, reply) = ask_pair::<u64>();
    let packed = Msg::new::<Z>(Counted(Arc::clone(&count)), reply);
    assert_eq!(packed.tag(), 0);
    let (msg, reply) = packed.open::<Z>();
    reply.deliver(42);
    assert_eq!(asked.wait(), Ok(42));
    drop(msg);
    assert_eq!(count.load(Ordering::Relaxed), 1);

    let packed = Msg::new::<S<Z>>(String::from("nobody waits"), ReplyTo::nobody());
    assert_eq!(packed.tag(), 1);
    let (msg, reply) = packed.open::<S<Z>>();
    assert_eq!(msg, "nobody waits");
    assert_eq!(format!("{reply:?}"), "ReplyTo::Nobody");

    let (asked, reply) = ask_pair::<String>();
    let packed = Msg::new::<Third>(7, reply);
    assert_eq!(packed.tag(), 2);
    let (msg, reply) = packed.open::<Third>();
    assert_eq!(msg, 7);
    reply.deliver(String::from("seven"));
    assert_eq!(asked.wait().as_deref(), Ok("seven"));
}

#[test]
fn a_packed_message_dropped_unopened_drops_its_message_and_tells_its_asker() {
    let count = drops();
    let (asked, reply) = ask_pair::<u64>();
    drop(Msg::new::<Z>(Counted(Arc::clone(&count)), reply));
    assert_eq!(count.load(Ordering::Relaxed), 1, "the message, once");
    assert!(matches!(asked.wait(), Err(AskError::Dropped(_))));

    let (asked, reply) = ask_pair::<String>();
    drop(Msg::new::<Third>(3, reply));
    assert!(matches!(asked.wait(), Err(AskError::Dropped(_))));
    drop(Msg::new::<S<Z>>(String::from("freed"), ReplyTo::nobody()));
}

#[test]
fn a_packed_message_opened_as_another_handlers_is_refused_and_still_dropped_once() {
    let count = drops();
    let (asked, reply) = ask_pair::<u64>();
    let packed = Msg::new::<Z>(Counted(Arc::clone(&count)), reply);
    let opened = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        packed.open::<S<Z>>();
    }));
    assert!(
        opened.is_err(),
        "opening handler 0's message as handler 1's panics"
    );
    assert_eq!(
        count.load(Ordering::Relaxed),
        1,
        "dropped once, as handler 0's"
    );
    assert!(matches!(asked.wait(), Err(AskError::Panicked(_))));
}

#[test]
fn the_tag_leaves_the_route_word_as_it_was() {
    for tag in [0, 1, 64, MAX_TAG] {
        let (asked, reply) = ask_pair::<u64>();
        let raw = reply.into_raw();
        let word = Word::new(raw, tag);
        assert_eq!(word.tag(), tag);
        assert_eq!(word.route(), raw);
        // SAFETY: `raw` came from `into_raw` of a `ReplyTo<u64>`, taken
        // back once.
        unsafe { ReplyTo::<u64>::from_raw(word.route()) }.deliver(u64::from(tag));
        assert_eq!(asked.wait(), Ok(u64::from(tag)));
        let nobody = Word::new(std::ptr::null_mut(), tag);
        assert_eq!((nobody.tag(), nobody.route()), (tag, std::ptr::null_mut()));
    }
}

/// Three handlers of three message and reply types, as `#[actor]` packs
/// them.
#[crate::actor]
#[derive(Default)]
pub struct Tally {
    sum: u64,
    names: usize,
}

#[crate::actor]
impl Tally {
    #[crate::handler(u64)]
    fn add(&mut self, k: u64, _ctx: &mut crate::Ctx<Self>) -> u64 {
        self.sum += k;
        self.sum
    }

    #[crate::handler(String)]
    fn name(&mut self, _name: String, _ctx: &mut crate::Ctx<Self>) {
        self.names += 1;
    }

    #[crate::handler(Counted)]
    fn count(&mut self, _c: Counted, _ctx: &mut crate::Ctx<Self>) -> usize {
        self.names
    }
}

#[test]
fn an_actor_serves_each_stored_message_by_its_tag() {
    // The largest message (a `String`) and a word. The enum is no larger
    // here (its tag fits the `String`'s niche): packing saves nothing
    // then, and costs nothing.
    #[cfg(target_arch = "x86_64")]
    assert_eq!(
        (size_of::<<Tally as Actor>::Packed>(), size_of::<TallyMsg>()),
        (32, 32)
    );
    let system = crate::System::new();
    let tally = system.spawn(Tally::default()).pooled().start();
    let count = drops();
    tally.send(2u64).unwrap();
    tally.send(String::from("one")).unwrap();
    let names = tally.ask(Counted(Arc::clone(&count))).unwrap();
    assert_eq!(names.wait(), Ok(1));
    assert_eq!(tally.ask(3u64).unwrap().wait(), Ok(5));
    assert_eq!(count.load(Ordering::Relaxed), 1);
    system.shutdown();
}

#[test]
fn messages_stored_for_an_actor_that_never_starts_go_to_dead_letters_whole() {
    let system = crate::System::new();
    let prepared = system.prepare::<Tally>();
    let addr = prepared.addr();
    let count = drops();
    let asked = addr.ask(Counted(Arc::clone(&count))).unwrap();
    addr.send(String::from("queued")).unwrap();
    drop(prepared);
    assert!(matches!(asked.wait(), Err(AskError::Dropped(_))));
    assert_eq!(
        count.load(Ordering::Relaxed),
        1,
        "dropped once, as its own type"
    );
    assert_eq!(system.dead_letters().total(), 2);
    system.shutdown();
}
