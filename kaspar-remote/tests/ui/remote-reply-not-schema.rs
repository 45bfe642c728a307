// Rule: a remote handler's reply is part of the actor's schema hash, so a
// serde reply must also be `Schema`; the error names the reply and says
// to derive it.
use kaspar::prelude::*;
use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize, kaspar_remote::Wire)]
#[wire(id = 1)]
pub struct Snapshot;

#[derive(Serialize, Deserialize)]
pub struct Levels(pub Vec<i64>);

#[actor]
pub struct Book;

#[actor(remote)]
impl Book {
    #[handler(Snapshot)]
    fn on_snapshot(&mut self, _s: Snapshot, _ctx: &mut Ctx<Self>) -> Levels {
        Levels(Vec::new())
    }
}

fn main() {}
