// Rule: `#[group]` takes one option, `msg = Name`, once; any other is
// one error saying the settings go on the spawn, and a `msg` that is not
// an identifier, or given twice, is one error at the value.
use kaspar::prelude::*;

pub struct Ping;

#[actor]
pub struct Member;

#[actor]
impl Member {
    #[handler(Ping)]
    fn ping(&mut self, _m: Ping, _ctx: &mut Ctx<Self>) {}
}

#[group(mailbox = MailboxKind::Compact)]
pub struct WithMailbox {
    pub m: Addr<Member>,
}

#[group(msg = "Messages")]
pub struct WithString {
    pub m: Addr<Member>,
}

#[group(msg = A, msg = B)]
pub struct WithTwo {
    pub m: Addr<Member>,
}

fn main() {}
