//! The auto-trait contracts of the public types, checked at compile time:
//! what may cross threads, what may not, and what is cheap to copy around.

use static_assertions::{assert_impl_all, assert_not_impl_any};

use kaspar::pool::Pooled;
use kaspar::prelude::*;
use kaspar::{Ask, CallChain, FastSendError, ReplyTo, Simulation, Time, VirtualClock};

pub struct Ping;

#[actor]
pub struct Ponger;

#[actor]
impl Ponger {
    #[handler(Ping)]
    fn ping(&mut self, _msg: Ping, _ctx: &mut Ctx<Self>) -> u32 {
        1
    }
}

#[group]
pub struct Solo {
    pub ponger: Addr<Ponger>,
}

// An address is shared freely between threads and cloned cheaply.
assert_impl_all!(Addr<Ponger>: Send, Sync, Clone);
// The system and its handles can be moved to another thread.
assert_impl_all!(System: Send, Sync);
// Errors that carry no message are `Send + Sync + 'static`, so `?` can box
// them; `SendError` hands any `Send` message back across threads.
assert_impl_all!(FastSendError<()>: Send, Sync, std::error::Error);
assert_impl_all!(SendError<Ping>: Send, Sync, std::error::Error);
// A reply handle can be waited on by another thread.
assert_impl_all!(Ask<u32>: Send, Sync);
assert_impl_all!(ReplyTo<u32>: Send);
// Plain data.
assert_impl_all!(Time: Copy, Send, Sync, Ord);
assert_impl_all!(CallChain: Send, Sync, Clone);
assert_impl_all!(VirtualClock: Send, Sync, Clone);
// A pooled box is `Send`/`Sync` exactly when its contents are.
assert_impl_all!(Pooled<[u8; 64]>: Send, Sync);
assert_not_impl_any!(Pooled<std::rc::Rc<u8>>: Send, Sync);
assert_not_impl_any!(Pooled<std::cell::Cell<u8>>: Sync);
// A message as a mailbox stores it (packed, its tag in the route's word)
// crosses threads exactly when each handler's message and reply may.
type Stored<M, R> = kaspar::__private::Packed<
    (),
    kaspar::__private::Cons<(u64, u64), kaspar::__private::Cons<(M, R), kaspar::__private::Nil>>,
>;
assert_impl_all!(Stored<String, ()>: Send);
assert_not_impl_any!(Stored<std::rc::Rc<u8>, ()>: Send, Sync);
assert_not_impl_any!(Stored<(), std::rc::Rc<u8>>: Send, Sync);
assert_not_impl_any!(Stored<(), ()>: Sync);
// A simulation runs on the thread that drives it.
assert_not_impl_any!(Simulation<Solo>: Send, Sync);

#[test]
fn the_assertions_above_compile() {
    // Everything is checked at compile time; this test exists so that the
    // file is built and run by `cargo test`.
    let system = System::new();
    let ponger = system.spawn(Ponger).start();
    assert_eq!(ponger.fast_send(Ping).unwrap(), 1);
}
