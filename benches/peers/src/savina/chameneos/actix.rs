//! Savina chameneos on actix (see `../actix.rs` for the framework notes).

use super::super::actix::on_actix;
use super::super::{verify, Color, Params};
use actix::prelude::*;
use std::time::{Duration, Instant};
use tokio::sync::mpsc::{unbounded_channel, UnboundedSender};

#[derive(Message)]
#[rtype(result = "()")]
pub struct Meet {
    color: Color,
    from: Addr<Chameneo>,
}
#[derive(Message)]
#[rtype(result = "()")]
pub struct Change(Color);
#[derive(Message)]
#[rtype(result = "()")]
pub struct Exit;
#[derive(Message)]
#[rtype(result = "()")]
pub struct Faded(u64);
#[derive(Message)]
#[rtype(result = "()")]
pub struct Enter(Addr<Mall>);

pub struct Mall {
    left: u64,
    waiting: Option<Addr<Chameneo>>,
    creatures: usize,
    faded: usize,
    sum: u64,
    done: UnboundedSender<u64>,
}

impl Actor for Mall {
    type Context = Context<Self>;
}

impl Handler<Meet> for Mall {
    type Result = ();
    fn handle(&mut self, msg: Meet, _ctx: &mut Context<Self>) {
        if self.left == 0 {
            msg.from.do_send(Exit);
        } else if let Some(first) = self.waiting.take() {
            self.left -= 1;
            first.do_send(msg);
        } else {
            self.waiting = Some(msg.from);
        }
    }
}

impl Handler<Faded> for Mall {
    type Result = ();
    fn handle(&mut self, msg: Faded, _ctx: &mut Context<Self>) {
        self.faded += 1;
        self.sum += msg.0;
        if self.faded == self.creatures {
            self.done.send(self.sum).unwrap();
        }
    }
}

pub struct Chameneo {
    color: Color,
    meetings: u64,
    mall: Option<Addr<Mall>>,
}

impl Actor for Chameneo {
    type Context = Context<Self>;
}

impl Chameneo {
    fn go_to_mall(&self, ctx: &Context<Self>) {
        let meet = Meet {
            color: self.color,
            from: ctx.address(),
        };
        self.mall.as_ref().unwrap().do_send(meet);
    }
}

impl Handler<Enter> for Chameneo {
    type Result = ();
    fn handle(&mut self, msg: Enter, ctx: &mut Context<Self>) {
        self.mall = Some(msg.0);
        self.go_to_mall(ctx);
    }
}

impl Handler<Meet> for Chameneo {
    type Result = ();
    fn handle(&mut self, msg: Meet, ctx: &mut Context<Self>) {
        self.color = self.color.complement(msg.color);
        self.meetings += 1;
        msg.from.do_send(Change(self.color));
        self.go_to_mall(ctx);
    }
}

impl Handler<Change> for Chameneo {
    type Result = ();
    fn handle(&mut self, msg: Change, ctx: &mut Context<Self>) {
        self.color = msg.0;
        self.meetings += 1;
        self.go_to_mall(ctx);
    }
}

impl Handler<Exit> for Chameneo {
    type Result = ();
    fn handle(&mut self, _msg: Exit, _ctx: &mut Context<Self>) {
        self.color = Color::Faded;
        self.mall.take().unwrap().do_send(Faded(self.meetings));
    }
}

pub fn chameneos(p: &Params) -> Duration {
    on_actix(async {
        let (done, mut finished) = unbounded_channel();
        let t = Instant::now();
        let mall = Mall {
            left: p.meetings,
            waiting: None,
            creatures: p.chameneos,
            faded: 0,
            sum: 0,
            done,
        }
        .start();
        let creatures: Vec<_> = (0..p.chameneos)
            .map(|i| {
                Chameneo {
                    color: Color::initial(i),
                    meetings: 0,
                    mall: None,
                }
                .start()
            })
            .collect();
        for c in &creatures {
            c.do_send(Enter(mall.clone()));
        }
        let sum = finished.recv().await.unwrap();
        let elapsed = t.elapsed();
        verify::chameneos(p, sum);
        elapsed
    })
}
