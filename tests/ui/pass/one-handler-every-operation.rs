// Rule: one handler, every delivery operation. The single `#[handler(Add)]`
// below is reached by `send`, `ask`, `request` and the whole `fast_send`
// family through the same generated `Handler<Add>` impl.
use kaspar::prelude::*;

pub struct Add(pub u64);
pub struct Sum(pub u64);

#[actor]
pub struct Counter {
    total: u64,
}

#[actor]
impl Counter {
    #[handler(Add)]
    fn on_add(&mut self, msg: Add, _ctx: &mut Ctx<Self>) -> Sum {
        self.total += msg.0;
        Sum(self.total)
    }
}

/// Receives `Counter`'s replies to `request`.
#[actor]
pub struct Collector {
    last: u64,
}

#[actor]
impl Collector {
    #[handler(Sum)]
    fn on_sum(&mut self, msg: Sum, _ctx: &mut Ctx<Self>) {
        self.last = msg.0;
    }
}

fn main() {
    let system = System::new();
    let counter = system.spawn(Counter { total: 0 }).start();
    let collector = system.spawn(Collector { last: 0 }).start();

    counter.send(Add(1)).unwrap();
    let Sum(_) = counter.ask(Add(1)).unwrap().wait().unwrap();
    counter.request(Add(1), &collector).unwrap();
    let Sum(_) = counter.fast_send(Add(1)).unwrap();
    let Sum(_) = counter.fast_send_spin(Add(1)).unwrap();
    // `Busy` is possible while the actor's own thread holds it; the call
    // still type-checks against the same handler.
    let _: Result<Sum, FastSendError<Add>> = counter.fast_send_x(Add(1));
    let _: Delivered = counter.fast_send_void(Add(1)).unwrap();
    let Sum(_) = counter.fast_send_adaptive(Add(1)).unwrap();

    system.shutdown();
}
