// Rule: everything a concrete actor may have, a generic one may have too:
// options, hooks, a `where` clause, const parameters and defaults on the
// struct's parameters. Replies that name a parameter (`Option<T>`,
// `[T; N]`) make the message enum generic; `RingMsg<T, N>` is then a
// type of its own per instance.
use std::cell::RefCell;

use kaspar::prelude::*;

pub struct Push<T>(pub T);
pub struct Oldest;
pub struct Full;

/// The last `N` values pushed.
#[actor(reentrant, name = "ring", mailbox = MailboxKind::bqueue(16))]
pub struct Ring<T = u64, const N: usize = 4>
where
    T: Copy + Default + Send + 'static,
{
    slots: RefCell<([T; N], usize)>,
}

#[actor]
impl<T, const N: usize> Ring<T, N>
where
    T: Copy + Default + Send + 'static,
{
    #[started]
    fn on_start(&self, _ctx: &mut Ctx<Self>) {
        *self.slots.borrow_mut() = ([T::default(); N], 0);
    }

    /// The value pushed out, once the ring is full.
    #[handler(Push<T>)]
    fn on_push(&self, msg: Push<T>, _ctx: &mut Ctx<Self>) -> Option<T> {
        let mut slots = self.slots.borrow_mut();
        let (ring, pushed) = &mut *slots;
        let at = *pushed % N;
        let out = (*pushed >= N).then_some(ring[at]);
        ring[at] = msg.0;
        *pushed += 1;
        out
    }

    #[handler(Oldest)]
    fn on_oldest(&self, _msg: &Oldest, _ctx: &mut Ctx<Self>) -> Option<T> {
        let (ring, pushed) = *self.slots.borrow();
        (pushed > 0).then(|| ring[pushed.saturating_sub(N) % N])
    }

    #[handler(Full)]
    fn on_full(&self, _msg: Full, _ctx: &mut Ctx<Self>) -> [T; N] {
        self.slots.borrow().0
    }

    #[stopped]
    fn on_stop(&self, _ctx: &mut Ctx<Self>) {}
}

fn main() {
    let system = System::new();
    // The defaults: `Ring<u64, 4>`.
    let ring: Addr<Ring> = system
        .spawn(Ring {
            slots: RefCell::new(([9; 4], 9)),
        })
        .start();
    assert_eq!(ring.name(), "ring");
    // Queued behind `#[started]`, which cleared the ring.
    assert_eq!(ring.ask(Oldest).unwrap().wait().unwrap(), None);
    for v in 1..=5u64 {
        ring.fast_send(Push(v)).unwrap();
    }
    assert_eq!(ring.fast_send(Oldest).unwrap(), Some(2));
    assert_eq!(ring.fast_send(Full).unwrap(), [5, 2, 3, 4]);

    let pair = system
        .spawn(Ring::<i8, 2> {
            slots: RefCell::new(([0; 2], 0)),
        })
        .start();
    assert_eq!(pair.ask(Push(-1i8)).unwrap().wait().unwrap(), None);
    assert_eq!(pair.ask(Push(-2i8)).unwrap().wait().unwrap(), None);
    assert_eq!(pair.ask(Push(-3i8)).unwrap().wait().unwrap(), Some(-1));
    system.shutdown();
}
