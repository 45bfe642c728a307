//! A round trip between two pooled actors, for instruction counting only
//! (`--callgrind pool_ping_pong N`): the peers table's pooled ping-pong
//! (`request` one way, the reply back as a message), on the system the
//! dispatch cases use. Callgrind counts every thread, so the count per
//! round trip is two pooled hops: each a push into an idle actor's
//! mailbox, its schedule into the worker's next-to-run slot, and its
//! activation, handler and return to idle. The CI step holds it to a
//! budget (`.ci/steps/callgrind.sh`), as it holds `fast_send`.

use std::sync::mpsc;

use kaspar::prelude::*;

pub struct Ball(pub u64);

/// Starts `rounds` round trips with `pong`; the last ball's count goes to
/// `done` (at once, for none).
pub struct Serve {
    pong: Addr<Ponger>,
    rounds: u64,
    done: mpsc::Sender<u64>,
}

#[actor]
pub struct Ponger;

#[actor]
impl Ponger {
    #[handler(Ball)]
    fn ball(&mut self, msg: Ball, _ctx: &mut Ctx<Self>) -> Ball {
        Ball(msg.0 + 1)
    }
}

#[actor]
#[derive(Default)]
pub struct Pinger {
    pong: Option<Addr<Ponger>>,
    me: Option<Addr<Pinger>>,
    left: u64,
    done: Option<mpsc::Sender<u64>>,
}

#[actor]
impl Pinger {
    #[handler(Serve)]
    fn serve(&mut self, msg: Serve, ctx: &mut Ctx<Self>) {
        if msg.rounds == 0 {
            let _ = msg.done.send(0);
            return;
        }
        let me = ctx.myself();
        msg.pong.request(Ball(0), &me).unwrap();
        self.me = Some(me);
        self.left = msg.rounds;
        self.done = Some(msg.done);
        self.pong = Some(msg.pong);
    }

    #[handler(Ball)]
    fn ball(&mut self, msg: Ball, _ctx: &mut Ctx<Self>) {
        self.left -= 1;
        if self.left == 0 {
            // Without its own address, the actor does not keep itself alive.
            self.me = None;
            if let Some(done) = self.done.take() {
                let _ = done.send(msg.0);
            }
            return;
        }
        if let (Some(pong), Some(me)) = (&self.pong, &self.me) {
            pong.request(msg, me).unwrap();
        }
    }
}

/// `n` round trips between two pooled actors of `system`, after one that
/// wires them (and warms both); checks the count that came back.
pub fn ping_pong(system: &System, n: u64) {
    let ping = system.spawn(Pinger::default()).pooled().start();
    let pong = system.spawn(Ponger).pooled().start();
    let rally = |rounds| {
        let (done, finished) = mpsc::channel();
        ping.send(Serve {
            pong: pong.clone(),
            rounds,
            done,
        })
        .unwrap();
        finished.recv().unwrap()
    };
    assert_eq!(rally(1), 1, "the warm-up round trip");
    assert_eq!(rally(n), n, "a ball was lost");
}
