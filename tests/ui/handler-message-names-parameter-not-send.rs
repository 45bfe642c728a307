// Rule: a message crosses threads in the actor's queue, so a message type
// that names the actor's parameter (here `Put<T>`) needs that parameter to
// be `Send`, even where the state does not hold it. One error, at the impl
// block, naming the message and the bound to add.
use std::marker::PhantomData;

use kaspar::prelude::*;

pub struct Put<T>(pub T);

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
}

fn main() {}
