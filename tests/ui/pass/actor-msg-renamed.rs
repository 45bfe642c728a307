// Rule: `#[actor(msg = Name)]` on the impl block names the message enum,
// so an actor whose default `<Actor>Msg` would collide with a type of the
// user's still compiles; the enum is the actor's `Msg`, under the new name.
use kaspar::prelude::*;

/// The user's own type, whose name the default enum would take.
pub enum CounterMsg {
    Reset,
}

pub struct Add(pub u64);

#[actor]
pub struct Counter {
    total: u64,
}

#[actor(msg = CounterMessage)]
impl Counter {
    #[handler(Add)]
    fn add(&mut self, msg: Add, _ctx: &mut Ctx<Self>) -> u64 {
        self.total += msg.0;
        self.total
    }
}

pub struct Ping;

#[actor]
pub struct Echo;

// In either order with `remote`'s absence, and with a trailing comma.
#[actor(msg = EchoMessages,)]
impl Echo {
    #[handler(Ping)]
    fn ping(&mut self, _m: Ping, _ctx: &mut Ctx<Self>) {}
}

fn main() {
    let _ = CounterMsg::Reset;
    // The renamed enum is the actor's message type.
    let _: fn(CounterMessage) -> <Counter as kaspar::Actor>::Msg = |m| m;
    let _: Option<EchoMessages> = None;
    let system = System::new();
    let counter = system.spawn(Counter { total: 0 }).start();
    assert_eq!(counter.fast_send(Add(2)).unwrap(), 2);
    assert_eq!(counter.ask(Add(3)).unwrap().wait().unwrap(), 5);
    let echo = system.spawn(Echo).start();
    echo.fast_send(Ping).unwrap();
    system.shutdown();
}
