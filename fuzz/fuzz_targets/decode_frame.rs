//! Feeds arbitrary bytes to kaspar-remote's decoders: the frame header,
//! the control bodies a node's bridge reads (hello, error, record), and a
//! remote actor's generated decoder, which turns a wire id and a postcard
//! body into a message and delivers it. Must never panic: a bad frame is
//! an error, a bad body a refusal.
#![no_main]

use std::sync::OnceLock;

use kaspar::prelude::*;
use kaspar_remote::frame::{Frame, HEADER_LEN, TRACE_LEN};
use kaspar_remote::{deliver_input, RemoteInput};
use libfuzzer_sys::fuzz_target;
use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize, kaspar_remote::Wire)]
#[wire(id = 1)]
pub struct Order {
    pub id: u64,
    pub px: i64,
    pub tag: String,
    pub legs: Vec<(u32, i64)>,
}

#[derive(Serialize, Deserialize, kaspar_remote::Wire)]
#[wire(id = 2)]
pub enum Cmd {
    Cancel(u64),
    Replace { id: u64, px: Option<i64> },
    Halt,
}

#[actor]
pub struct Sink {
    seen: u64,
}

#[actor(remote)]
impl Sink {
    #[handler(Order)]
    fn on_order(&mut self, o: Order, _ctx: &mut Ctx<Self>) -> u64 {
        self.seen += o.legs.len() as u64;
        self.seen
    }

    #[handler(Cmd)]
    fn on_cmd(&mut self, _c: Cmd, _ctx: &mut Ctx<Self>) {
        self.seen += 1;
    }
}

fn sink() -> &'static Addr<Sink> {
    static SINK: OnceLock<(System, Addr<Sink>)> = OnceLock::new();
    &SINK
        .get_or_init(|| {
            let system = System::new();
            let addr = system.spawn(Sink { seen: 0 }).start();
            (system, addr)
        })
        .1
}

fuzz_target!(|data: &[u8]| {
    if let Ok(frame) = Frame::parse(data) {
        // A message frame with the kind byte's high bit carries a trace
        // context between its header and its body (kaspar-remote's
        // `tracing` feature), which every node reads past.
        let traced = data[3] & 0x80 != 0;
        let context = if traced { TRACE_LEN } else { 0 };
        assert_eq!(HEADER_LEN + context + frame.body.len(), data.len());
        let input = RemoteInput::new(frame.header.wire_id % 4, frame.body.to_vec());
        let _ = deliver_input(sink(), input);
    }
    let _ = kaspar_remote::__private::decode_control(data);
    let _ = kaspar_remote::__private::decode_record(data);
    if let Some((&id, body)) = data.split_first() {
        let _ = deliver_input(sink(), RemoteInput::new(u32::from(id % 4), body.to_vec()));
    }
});
