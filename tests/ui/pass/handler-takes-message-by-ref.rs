// Rule: a handler may take its message as `&Msg` instead of `Msg`; the
// message type named in `#[handler(Msg)]` is still `Msg`, so senders pass
// it by value.
use kaspar::prelude::*;

pub struct Quote {
    pub bid: u64,
    pub ask: u64,
}

#[actor]
pub struct Spread;

#[actor]
impl Spread {
    #[handler(Quote)]
    fn on_quote(&mut self, msg: &Quote, _ctx: &mut Ctx<Self>) -> u64 {
        msg.ask - msg.bid
    }
}

fn main() {
    let system = System::new();
    let spread = system.spawn(Spread).start();
    let s = spread.fast_send(Quote { bid: 99, ask: 101 }).unwrap();
    assert_eq!(s, 2);
    system.shutdown();
}
