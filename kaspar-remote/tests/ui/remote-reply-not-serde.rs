// Rule: a remote handler's reply goes back over the wire, so it must be
// serde (`Serialize + Deserialize`), and `Schema` for the schema hash.
use kaspar::prelude::*;
use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize, kaspar_remote::Wire)]
#[wire(id = 1)]
pub struct Snapshot;

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
