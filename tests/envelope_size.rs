//! What a queued message weighs: the generated enum holds the message and
//! its reply route, and an actor's own mailbox holds its packed form. The
//! route is one word (a tagged pointer to an asker's slot or to a port),
//! so a `u64` message's envelope is 16 bytes for an actor with one
//! handler and 24 with more (the enum's tag takes a word); packed, the
//! tag rides in the route's word and every `u64` envelope is 16. A
//! fat-pointer route made them 24 and 32.
#![cfg(target_pointer_width = "64")]

use std::mem::size_of;

use kaspar::prelude::*;
use kaspar::{Actor, ReplyTo};

#[actor]
pub struct One {
    n: u64,
}

#[actor]
impl One {
    #[handler(u64)]
    fn add(&mut self, k: u64, _ctx: &mut Ctx<Self>) -> u64 {
        self.n += k;
        self.n
    }
}

pub struct Reset;

#[actor]
pub struct Two {
    n: u64,
}

#[actor]
impl Two {
    #[handler(u64)]
    fn add(&mut self, k: u64, _ctx: &mut Ctx<Self>) -> u64 {
        self.n += k;
        self.n
    }

    #[handler(Reset)]
    fn reset(&mut self, _r: Reset, _ctx: &mut Ctx<Self>) {
        self.n = 0;
    }
}

#[test]
fn a_reply_route_is_one_word_and_a_u64_envelope_two_or_three() {
    assert_eq!(size_of::<ReplyTo<u64>>(), 8);
    assert_eq!(size_of::<ReplyTo<String>>(), 8);
    assert_eq!(size_of::<<One as Actor>::Msg>(), 16);
    assert_eq!(size_of::<<Two as Actor>::Msg>(), 24);
}

#[test]
#[cfg(target_arch = "x86_64")]
fn a_mailbox_stores_a_u64_envelope_in_two_words_whatever_the_handlers() {
    // One handler: nothing to pack, the enum as it is.
    assert_eq!(size_of::<<One as Actor>::Packed>(), 16);
    // Two: the tag in the route's word.
    assert_eq!(size_of::<<Two as Actor>::Packed>(), 16);
}

#[test]
fn every_handler_of_a_packed_actor_gets_its_own_messages() {
    // Four handlers, messages of three sizes and three reply types,
    // asked and told in turn through a mailbox that stores them packed.
    let system = System::new();
    let four = system.spawn(Four::default()).pooled().start();
    for round in 0..100u64 {
        four.send(round).unwrap();
        four.send(Label(format!("round {round}"))).unwrap();
        assert_eq!(
            four.ask(Total).unwrap().wait().unwrap(),
            round * (round + 1) / 2
        );
        assert_eq!(
            four.ask(Last).unwrap().wait().unwrap(),
            format!("round {round}")
        );
    }
    system.shutdown();
}

pub struct Label(String);
pub struct Total;
pub struct Last;

#[actor]
#[derive(Default)]
pub struct Four {
    sum: u64,
    label: String,
}

#[actor]
impl Four {
    #[handler(u64)]
    fn add(&mut self, k: u64, _ctx: &mut Ctx<Self>) {
        self.sum += k;
    }

    #[handler(Label)]
    fn label(&mut self, l: Label, _ctx: &mut Ctx<Self>) {
        self.label = l.0;
    }

    #[handler(Total)]
    fn total(&mut self, _t: Total, _ctx: &mut Ctx<Self>) -> u64 {
        self.sum
    }

    #[handler(Last)]
    fn last(&mut self, _l: Last, _ctx: &mut Ctx<Self>) -> String {
        self.label.clone()
    }
}

#[test]
fn every_route_kind_carries_its_reply_through_the_word() {
    let system = System::new();
    let one = system.spawn(One { n: 0 }).pooled().start();
    let two = system.spawn(Two { n: 0 }).start();
    // An asker's slot.
    assert_eq!(one.ask(2).unwrap().wait().unwrap(), 2);
    // Nobody.
    two.send(5).unwrap();
    // A port: `two`'s reply (a `u64`) goes to `one` as a message.
    two.request(3, &one).unwrap();
    // `one` has 2 + 8 (= two's 5 + 3) once the request's reply arrived.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    loop {
        let n = one.ask(0).unwrap().wait().unwrap();
        if n == 10 || std::time::Instant::now() > deadline {
            assert_eq!(n, 10, "the reply routed to `one` arrived once");
            break;
        }
        std::thread::yield_now();
    }
    two.send(Reset).unwrap();
    system.shutdown();
}
