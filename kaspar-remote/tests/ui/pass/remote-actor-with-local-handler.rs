// A remote actor may keep handlers local (their messages need not be
// `Wire`), be generic, and be reached through an `ActorRef`; replies of
// any serde type.
use kaspar::prelude::*;
use kaspar_remote::{ActorRef, RemoteActor, Wire};
use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize, kaspar_remote::Wire)]
#[wire(id = 1)]
pub struct Quote {
    pub px: i64,
}

#[derive(Serialize, Deserialize, kaspar_remote::Wire)]
#[wire(id = 2)]
pub enum Cmd {
    Reset,
    Scale(i64),
}

pub struct Flush;

pub trait Pricer: Send + 'static {
    fn price(&self, px: i64) -> i64;
}

pub struct Linear;

impl Pricer for Linear {
    fn price(&self, px: i64) -> i64 {
        px * 2
    }
}

#[actor]
pub struct Strategy<P: Pricer> {
    pricer: P,
    last: i64,
}

#[actor(remote)]
impl<P: Pricer> Strategy<P> {
    #[handler(Quote)]
    fn on_quote(&mut self, q: Quote, _ctx: &mut Ctx<Self>) -> Vec<i64> {
        self.last = self.pricer.price(q.px);
        vec![self.last]
    }

    #[handler(Cmd)]
    fn on_cmd(&mut self, c: Cmd, _ctx: &mut Ctx<Self>) {
        match c {
            Cmd::Reset => self.last = 0,
            Cmd::Scale(k) => self.last *= k,
        }
    }

    #[handler(Flush, local)]
    fn on_flush(&mut self, _f: Flush, _ctx: &mut Ctx<Self>) -> i64 {
        std::mem::take(&mut self.last)
    }
}

fn main() {
    assert_eq!(Strategy::<Linear>::SCHEMA.len(), 2);
    assert_eq!(Strategy::<Linear>::SCHEMA[1].wire_id, Cmd::WIRE_ID);
    let system = System::new();
    let addr = system
        .spawn(Strategy {
            pricer: Linear,
            last: 0,
        })
        .start();
    let any: ActorRef<Strategy<Linear>> = addr.clone().into();
    assert_eq!(any.ask(Quote { px: 3 }).unwrap().wait().unwrap(), vec![6]);
    any.send(Cmd::Scale(2)).unwrap();
    assert_eq!(addr.ask(Flush).unwrap().wait().unwrap(), 12);
    system.shutdown();
}
