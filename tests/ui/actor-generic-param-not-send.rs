// Rule: an actor's state moves to the actor's thread when it is spawned, so
// a generic actor's state must be `Send` for every parameter it accepts.
// A parameter that may not be `Send` is one error, at the impl block,
// naming the parameter and the bound to add.
use kaspar::prelude::*;

pub trait Pricer: 'static {
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
