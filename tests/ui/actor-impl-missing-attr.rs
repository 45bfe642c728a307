// Rule: an actor whose impl block lacks `#[actor]` has no handlers, and
// spawning it says so, at the spawn, in one error that names the fix (not a
// wall of unmet trait bounds on the runtime's private types).
use kaspar::prelude::*;

pub struct Ping;

#[actor]
pub struct Counter;

impl Counter {
    #[allow(dead_code)]
    fn on_ping(&mut self, _msg: Ping) {}
}

fn main() {
    let system = System::new();
    let _ = system.spawn(Counter);
}
