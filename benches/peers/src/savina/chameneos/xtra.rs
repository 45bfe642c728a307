//! Savina chameneos on xtra (see `../xtra.rs` for the framework notes).

use super::super::xtra::{spawn, tell};
use super::super::{on_tokio, verify, Color, Params};
use std::time::{Duration, Instant};
use tokio::sync::mpsc::{unbounded_channel, UnboundedSender};
use xtra::prelude::*;
use xtra::WeakAddress;

pub struct Meet {
    color: Color,
    from: WeakAddress<Chameneo>,
}
pub struct Change(Color);
pub struct Exit;
pub struct Faded(u64);
pub struct Enter(Address<Mall>);

#[derive(xtra::Actor)]
pub struct Mall {
    left: u64,
    waiting: Option<WeakAddress<Chameneo>>,
    creatures: usize,
    faded: usize,
    sum: u64,
    done: UnboundedSender<u64>,
}

impl Handler<Meet> for Mall {
    type Return = ();
    async fn handle(&mut self, msg: Meet, _ctx: &mut Context<Self>) {
        if self.left == 0 {
            tell(&msg.from, Exit).await;
        } else if let Some(first) = self.waiting.take() {
            self.left -= 1;
            tell(&first, msg).await;
        } else {
            self.waiting = Some(msg.from);
        }
    }
}

impl Handler<Faded> for Mall {
    type Return = ();
    async fn handle(&mut self, msg: Faded, _ctx: &mut Context<Self>) {
        self.faded += 1;
        self.sum += msg.0;
        if self.faded == self.creatures {
            self.done.send(self.sum).unwrap();
        }
    }
}

#[derive(xtra::Actor)]
pub struct Chameneo {
    color: Color,
    meetings: u64,
    mall: Option<Address<Mall>>,
}

impl Chameneo {
    async fn go_to_mall(&self, me: &WeakAddress<Self>) {
        let meet = Meet {
            color: self.color,
            from: me.clone(),
        };
        tell(self.mall.as_ref().unwrap(), meet).await;
    }
}

impl Handler<Enter> for Chameneo {
    type Return = ();
    async fn handle(&mut self, msg: Enter, ctx: &mut Context<Self>) {
        self.mall = Some(msg.0);
        self.go_to_mall(&ctx.mailbox().address()).await;
    }
}

impl Handler<Meet> for Chameneo {
    type Return = ();
    async fn handle(&mut self, msg: Meet, ctx: &mut Context<Self>) {
        self.color = self.color.complement(msg.color);
        self.meetings += 1;
        tell(&msg.from, Change(self.color)).await;
        self.go_to_mall(&ctx.mailbox().address()).await;
    }
}

impl Handler<Change> for Chameneo {
    type Return = ();
    async fn handle(&mut self, msg: Change, ctx: &mut Context<Self>) {
        self.color = msg.0;
        self.meetings += 1;
        self.go_to_mall(&ctx.mailbox().address()).await;
    }
}

impl Handler<Exit> for Chameneo {
    type Return = ();
    async fn handle(&mut self, _msg: Exit, _ctx: &mut Context<Self>) {
        self.color = Color::Faded;
        let mall = self.mall.take().unwrap();
        tell(&mall, Faded(self.meetings)).await;
    }
}

pub fn chameneos(p: &Params) -> Duration {
    let p = *p;
    on_tokio(async move {
        let (done, mut finished) = unbounded_channel();
        let t = Instant::now();
        let mall = spawn(Mall {
            left: p.meetings,
            waiting: None,
            creatures: p.chameneos,
            faded: 0,
            sum: 0,
            done,
        });
        // Held until the end: an actor whose every `ActorRef` is gone stops.
        let creatures: Vec<_> = (0..p.chameneos)
            .map(|i| {
                spawn(Chameneo {
                    color: Color::initial(i),
                    meetings: 0,
                    mall: None,
                })
            })
            .collect();
        for c in &creatures {
            tell(c, Enter(mall.clone())).await;
        }
        let sum = finished.recv().await.unwrap();
        let elapsed = t.elapsed();
        verify::chameneos(&p, sum);
        elapsed
    })
}
