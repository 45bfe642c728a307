//! Savina chameneos on kameo (see `../kameo.rs` for the framework notes).

use super::super::kameo::spawn;
use super::super::{on_tokio, verify, Color, Params};
use kameo::prelude::*;
use std::time::{Duration, Instant};
use tokio::sync::mpsc::{unbounded_channel, UnboundedSender};

pub struct Meet {
    color: Color,
    from: ActorRef<Chameneo>,
}
pub struct Change(Color);
pub struct Exit;
pub struct Faded(u64);
pub struct Enter(ActorRef<Mall>);

#[derive(Actor)]
pub struct Mall {
    left: u64,
    waiting: Option<ActorRef<Chameneo>>,
    creatures: usize,
    faded: usize,
    sum: u64,
    done: UnboundedSender<u64>,
}

impl Message<Meet> for Mall {
    type Reply = ();
    async fn handle(&mut self, msg: Meet, _ctx: &mut Context<Self, ()>) {
        if self.left == 0 {
            msg.from.tell(Exit).await.unwrap();
        } else if let Some(first) = self.waiting.take() {
            self.left -= 1;
            first.tell(msg).await.unwrap();
        } else {
            self.waiting = Some(msg.from);
        }
    }
}

impl Message<Faded> for Mall {
    type Reply = ();
    async fn handle(&mut self, msg: Faded, _ctx: &mut Context<Self, ()>) {
        self.faded += 1;
        self.sum += msg.0;
        if self.faded == self.creatures {
            self.done.send(self.sum).unwrap();
        }
    }
}

#[derive(Actor)]
pub struct Chameneo {
    color: Color,
    meetings: u64,
    mall: Option<ActorRef<Mall>>,
}

impl Chameneo {
    async fn go_to_mall(&self, me: &ActorRef<Self>) {
        let meet = Meet {
            color: self.color,
            from: me.clone(),
        };
        self.mall.as_ref().unwrap().tell(meet).await.unwrap();
    }
}

impl Message<Enter> for Chameneo {
    type Reply = ();
    async fn handle(&mut self, msg: Enter, ctx: &mut Context<Self, ()>) {
        self.mall = Some(msg.0);
        self.go_to_mall(ctx.actor_ref()).await;
    }
}

impl Message<Meet> for Chameneo {
    type Reply = ();
    async fn handle(&mut self, msg: Meet, ctx: &mut Context<Self, ()>) {
        self.color = self.color.complement(msg.color);
        self.meetings += 1;
        msg.from.tell(Change(self.color)).await.unwrap();
        self.go_to_mall(ctx.actor_ref()).await;
    }
}

impl Message<Change> for Chameneo {
    type Reply = ();
    async fn handle(&mut self, msg: Change, ctx: &mut Context<Self, ()>) {
        self.color = msg.0;
        self.meetings += 1;
        self.go_to_mall(ctx.actor_ref()).await;
    }
}

impl Message<Exit> for Chameneo {
    type Reply = ();
    async fn handle(&mut self, _msg: Exit, _ctx: &mut Context<Self, ()>) {
        self.color = Color::Faded;
        let mall = self.mall.take().unwrap();
        mall.tell(Faded(self.meetings)).await.unwrap();
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
            c.tell(Enter(mall.clone())).await.unwrap();
        }
        let sum = finished.recv().await.unwrap();
        let elapsed = t.elapsed();
        verify::chameneos(&p, sum);
        elapsed
    })
}
