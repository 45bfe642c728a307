//! Savina chameneos on kaspar (see `../kaspar.rs` for the framework notes).

use super::super::{verify, Color, Params};
use kaspar::prelude::*;
use std::sync::mpsc;
use std::time::{Duration, Instant};

pub struct Meet {
    color: Color,
    from: Addr<Chameneo>,
}
pub struct Change(Color);
pub struct Exit;
pub struct Faded(u64);
pub struct Enter(pub Addr<Mall>);

#[actor]
pub struct Mall {
    left: u64,
    waiting: Option<Addr<Chameneo>>,
    creatures: usize,
    faded: usize,
    sum: u64,
    done: mpsc::Sender<u64>,
}

impl Mall {
    pub fn new(p: &Params, done: mpsc::Sender<u64>) -> Self {
        Mall {
            left: p.meetings,
            waiting: None,
            creatures: p.chameneos,
            faded: 0,
            sum: 0,
            done,
        }
    }
}

#[actor]
impl Mall {
    #[handler(Meet)]
    fn meet(&mut self, msg: Meet, _ctx: &mut Ctx<Self>) {
        if self.left == 0 {
            msg.from.send(Exit).unwrap();
        } else if let Some(first) = self.waiting.take() {
            self.left -= 1;
            first.send(msg).unwrap();
        } else {
            self.waiting = Some(msg.from);
        }
    }

    #[handler(Faded)]
    fn faded(&mut self, msg: Faded, _ctx: &mut Ctx<Self>) {
        self.faded += 1;
        self.sum += msg.0;
        if self.faded == self.creatures {
            self.done.send(self.sum).unwrap();
        }
    }
}

#[actor]
pub struct Chameneo {
    color: Color,
    meetings: u64,
    mall: Option<Addr<Mall>>,
}

impl Chameneo {
    pub fn new(i: usize) -> Self {
        Chameneo {
            color: Color::initial(i),
            meetings: 0,
            mall: None,
        }
    }

    fn go_to_mall(&self, ctx: &mut Ctx<Self>) {
        let meet = Meet {
            color: self.color,
            from: ctx.myself(),
        };
        self.mall.as_ref().unwrap().send(meet).unwrap();
    }
}

#[actor]
impl Chameneo {
    #[handler(Enter)]
    fn enter(&mut self, msg: Enter, ctx: &mut Ctx<Self>) {
        self.mall = Some(msg.0);
        self.go_to_mall(ctx);
    }

    /// The mall paired this creature, which waited, with `msg.from`.
    #[handler(Meet)]
    fn meet(&mut self, msg: Meet, ctx: &mut Ctx<Self>) {
        self.color = self.color.complement(msg.color);
        self.meetings += 1;
        msg.from.send(Change(self.color)).unwrap();
        self.go_to_mall(ctx);
    }

    #[handler(Change)]
    fn change(&mut self, msg: Change, ctx: &mut Ctx<Self>) {
        self.color = msg.0;
        self.meetings += 1;
        self.go_to_mall(ctx);
    }

    #[handler(Exit)]
    fn exit(&mut self, _msg: Exit, _ctx: &mut Ctx<Self>) {
        self.color = Color::Faded;
        self.mall
            .take()
            .unwrap()
            .send(Faded(self.meetings))
            .unwrap();
    }
}

/// `make` spawns the mall (`Mall::new(p, done)`) and `chameneos` creatures
/// (`Chameneo::new(i)`).
pub fn chameneos_with(
    p: &Params,
    make: impl FnOnce(&System, mpsc::Sender<u64>) -> (Addr<Mall>, Vec<Addr<Chameneo>>),
) -> Duration {
    let system = System::new();
    let (done, finished) = mpsc::channel();
    let t = Instant::now();
    let (mall, creatures) = make(&system, done);
    for c in &creatures {
        c.send(Enter(mall.clone())).unwrap();
    }
    let sum = finished.recv().unwrap();
    let elapsed = t.elapsed();
    verify::chameneos(p, sum);
    system.shutdown();
    elapsed
}

pub fn chameneos(p: &Params) -> Duration {
    chameneos_with(p, |s, done| {
        let mall = s.spawn(Mall::new(p, done)).start();
        (
            mall,
            (0..p.chameneos)
                .map(|i| s.spawn(Chameneo::new(i)).start())
                .collect(),
        )
    })
}
