// `msg = Name` stands beside `remote` on the impl block, in either order:
// the remote table is built as ever, and the message enum takes the name
// given, beside a type of the user's called `<Actor>Msg`.
use kaspar::prelude::*;
use kaspar_remote::{RemoteActor, Wire};
use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize, Wire)]
#[wire(id = 1)]
pub struct Quote {
    pub px: i64,
}

/// The user's own type, whose name the default enum would take.
pub struct QuoterMsg;

#[actor]
pub struct Quoter;

#[actor(remote, msg = QuoterMessages)]
impl Quoter {
    #[handler(Quote)]
    fn on_quote(&mut self, q: Quote, _ctx: &mut Ctx<Self>) -> i64 {
        q.px * 2
    }
}

#[actor]
pub struct Other;

#[actor(msg = OtherMessages, remote)]
impl Other {
    #[handler(Quote)]
    fn on_quote(&mut self, q: Quote, _ctx: &mut Ctx<Self>) -> i64 {
        q.px
    }
}

fn main() {
    let _ = QuoterMsg;
    let _: Option<QuoterMessages> = None;
    let _: Option<OtherMessages> = None;
    assert_eq!(Quoter::SCHEMA.len(), 1);
    assert_eq!(Other::SCHEMA.len(), 1);
    let system = System::new();
    let quoter = system.spawn(Quoter).start();
    assert_eq!(quoter.fast_send(Quote { px: 21 }).unwrap(), 42);
    system.shutdown();
}
