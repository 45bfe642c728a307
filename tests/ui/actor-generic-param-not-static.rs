// Rule: an actor's state lives on the actor's thread until the actor
// stops, so a generic actor's parameters must be `'static`. A parameter
// that may borrow is reported at the impl block, with the bound to add, and
// not again at each handler.
use kaspar::prelude::*;

pub trait Pricer: Send {
    fn price(&self, bid: i64, ask: i64) -> i64;
}

pub struct Quote(pub i64, pub i64);

#[actor]
pub struct Strategy<P: Pricer> {
    pricer: P,
}

#[actor]
impl<P: Pricer> Strategy<P> {
    #[handler(Quote)]
    fn on_quote(&mut self, q: Quote, _ctx: &mut Ctx<Self>) -> i64 {
        self.pricer.price(q.0, q.1)
    }

    #[handler(u64)]
    fn on_tick(&mut self, _t: u64, _ctx: &mut Ctx<Self>) {}
}

fn main() {}
