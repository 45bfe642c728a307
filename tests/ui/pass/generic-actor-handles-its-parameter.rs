// Rule: a generic actor may handle its own type parameter. With a single
// handler for a bare parameter `M`, the actor gets no second, never-called
// `Handler` impl (see `send-unhandled-message-single-handler.rs`): for
// `M = NoMessage` the two would overlap.
use kaspar::prelude::*;

#[actor]
pub struct Relay<M: Send + 'static> {
    last: Option<M>,
}

#[actor]
impl<M: Send + 'static> Relay<M> {
    #[handler(M)]
    fn on_msg(&mut self, msg: M, _ctx: &mut Ctx<Self>) -> Option<M> {
        self.last.replace(msg)
    }
}

fn main() {
    let system = System::new();
    let words = system.spawn(Relay { last: None }).start();
    let numbers = system.spawn(Relay { last: Some(1u64) }).start();
    assert_eq!(words.fast_send("first").unwrap(), None);
    assert_eq!(words.ask("second").unwrap().wait().unwrap(), Some("first"));
    assert_eq!(numbers.fast_send(2u64).unwrap(), Some(1));
    system.shutdown();
}
