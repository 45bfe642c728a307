// Rule: `Self` in a handler's message or reply type means the actor, as it
// does everywhere else in the impl block (the generated message enum once
// read it as the enum: `-> Self` failed to match, `#[handler(Self)]` made
// an infinitely sized enum).
use kaspar::prelude::*;
use kaspar::Actor;

pub struct Snapshot;
pub struct Peek;

/// Asks the actor to keep `Addr<Self>` for later.
pub struct Subscribe<A: Actor>(pub Addr<A>);

#[actor]
#[derive(Clone, Debug, PartialEq)]
pub struct Counter {
    n: u64,
}

#[actor]
impl Counter {
    #[handler(Snapshot)]
    fn snapshot(&mut self, _m: Snapshot, _ctx: &mut Ctx<Self>) -> Self {
        self.clone()
    }

    #[handler(Peek)]
    fn peek(&mut self, _m: Peek, _ctx: &mut Ctx<Self>) -> Option<Self> {
        (self.n > 0).then(|| self.clone())
    }

    #[handler(Self)]
    fn replace(&mut self, next: Self, _ctx: &mut Ctx<Self>) {
        *self = next;
    }

    #[handler(Subscribe<Self>)]
    fn subscribe(&mut self, _s: Subscribe<Self>, _ctx: &mut Ctx<Self>) -> bool {
        true
    }
}

/// Generic, with `Self` in a `where` clause.
#[actor]
#[derive(Clone)]
pub struct Cell<T: Clone + Send + 'static> {
    value: T,
}

#[actor]
impl<T: Clone + Send + 'static> Cell<T>
where
    Self: Clone,
{
    #[handler(Snapshot)]
    fn snapshot(&mut self, _m: Snapshot, _ctx: &mut Ctx<Self>) -> Self {
        self.clone()
    }
}

fn main() {
    let system = System::new();
    let counter = system.spawn(Counter { n: 0 }).start();
    assert_eq!(counter.fast_send(Peek).unwrap(), None);
    counter.fast_send(Counter { n: 7 }).unwrap();
    assert_eq!(counter.fast_send(Snapshot).unwrap(), Counter { n: 7 });
    assert!(counter.fast_send(Subscribe(counter.clone())).unwrap());
    let cell = system.spawn(Cell { value: 3u8 }).start();
    assert_eq!(cell.fast_send(Snapshot).unwrap().value, 3);
    drop(counter);
    system.shutdown();
}
