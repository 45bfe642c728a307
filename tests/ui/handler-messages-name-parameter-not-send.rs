// Rule: as with one handler, with two: a message type that names the
// actor's parameter needs that parameter to be `Send`. One error, at the
// impl block: the packed form the mailbox stores (the enum without its
// tag word) adds none of its own.
use std::marker::PhantomData;

use kaspar::prelude::*;

pub struct Put<T>(pub T);
pub struct Get;

#[actor]
pub struct Counter<T: 'static> {
    seen: u64,
    of: PhantomData<fn() -> T>,
}

#[actor]
impl<T: 'static> Counter<T> {
    #[handler(Put<T>)]
    fn on_put(&mut self, _msg: Put<T>, _ctx: &mut Ctx<Self>) -> u64 {
        self.seen += 1;
        self.seen
    }

    #[handler(Get)]
    fn on_get(&mut self, _msg: Get, _ctx: &mut Ctx<Self>) -> u64 {
        self.seen
    }
}

fn main() {}
