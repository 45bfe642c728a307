// Rule: a handler's return type is its reply; a handler that returns
// nothing (or `()` spelt out) has the reply `()`.
use kaspar::prelude::*;

pub struct Log(pub &'static str);
pub struct Flush;

#[actor]
pub struct Logger {
    lines: Vec<&'static str>,
}

#[actor]
impl Logger {
    #[handler(Log)]
    fn on_log(&mut self, msg: Log, _ctx: &mut Ctx<Self>) {
        self.lines.push(msg.0);
    }

    #[handler(Flush)]
    fn on_flush(&mut self, _msg: Flush, _ctx: &mut Ctx<Self>) -> () {
        self.lines.clear();
    }
}

fn main() {
    let system = System::new();
    let logger = system.spawn(Logger { lines: Vec::new() }).start();
    let () = logger.fast_send(Log("hello")).unwrap();
    let () = logger.ask(Flush).unwrap().wait().unwrap();
    system.shutdown();
}
