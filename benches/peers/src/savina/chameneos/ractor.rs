//! Savina chameneos on ractor (see `../ractor.rs` for the framework notes).

use super::super::ractor::{spawn, Handled};
use super::super::{on_tokio, verify, Color, Params};
use ractor::{Actor, ActorProcessingErr, ActorRef};
use std::time::{Duration, Instant};
use tokio::sync::mpsc::{unbounded_channel, UnboundedSender};

pub struct Mall;
pub struct Chameneo;

pub enum MallMsg {
    Meet(Color, ActorRef<ChameneoMsg>),
    Faded(u64),
}

pub enum ChameneoMsg {
    Enter(ActorRef<MallMsg>),
    Meet(Color, ActorRef<ChameneoMsg>),
    Change(Color),
    Exit,
}

pub struct MallState {
    left: u64,
    waiting: Option<ActorRef<ChameneoMsg>>,
    creatures: usize,
    faded: usize,
    sum: u64,
    done: UnboundedSender<u64>,
}

impl Actor for Mall {
    type Msg = MallMsg;
    type State = MallState;
    type Arguments = MallState;

    async fn pre_start(
        &self,
        _: ActorRef<MallMsg>,
        st: MallState,
    ) -> Result<MallState, ActorProcessingErr> {
        Ok(st)
    }

    async fn handle(&self, _: ActorRef<MallMsg>, msg: MallMsg, st: &mut MallState) -> Handled {
        match msg {
            MallMsg::Meet(_, from) if st.left == 0 => from.cast(ChameneoMsg::Exit)?,
            MallMsg::Meet(color, from) => match st.waiting.take() {
                Some(first) => {
                    st.left -= 1;
                    first.cast(ChameneoMsg::Meet(color, from))?;
                }
                None => st.waiting = Some(from),
            },
            MallMsg::Faded(meetings) => {
                st.faded += 1;
                st.sum += meetings;
                if st.faded == st.creatures {
                    st.done.send(st.sum)?;
                }
            }
        }
        Ok(())
    }
}

/// Colour, meetings, the mall once entered.
type ChameneoState = (Color, u64, Option<ActorRef<MallMsg>>);

impl Actor for Chameneo {
    type Msg = ChameneoMsg;
    type State = ChameneoState;
    type Arguments = Color;

    async fn pre_start(
        &self,
        _: ActorRef<ChameneoMsg>,
        color: Color,
    ) -> Result<ChameneoState, ActorProcessingErr> {
        Ok((color, 0, None))
    }

    async fn handle(
        &self,
        myself: ActorRef<ChameneoMsg>,
        msg: ChameneoMsg,
        st: &mut ChameneoState,
    ) -> Handled {
        match msg {
            ChameneoMsg::Enter(mall) => st.2 = Some(mall),
            ChameneoMsg::Meet(other, from) => {
                st.0 = st.0.complement(other);
                st.1 += 1;
                from.cast(ChameneoMsg::Change(st.0))?;
            }
            ChameneoMsg::Change(color) => {
                st.0 = color;
                st.1 += 1;
            }
            ChameneoMsg::Exit => {
                st.0 = Color::Faded;
                st.2.take().unwrap().cast(MallMsg::Faded(st.1))?;
                return Ok(());
            }
        }
        // After entering and after every meeting: back to the mall.
        st.2.as_ref().unwrap().cast(MallMsg::Meet(st.0, myself))?;
        Ok(())
    }
}

pub fn chameneos(p: &Params) -> Duration {
    let p = *p;
    on_tokio(async move {
        let (done, mut finished) = unbounded_channel();
        let t = Instant::now();
        let mall = MallState {
            left: p.meetings,
            waiting: None,
            creatures: p.chameneos,
            faded: 0,
            sum: 0,
            done,
        };
        let mall = spawn(Mall, mall).await;
        let mut creatures = Vec::new();
        for i in 0..p.chameneos {
            creatures.push(spawn(Chameneo, Color::initial(i)).await);
        }
        for c in &creatures {
            c.cast(ChameneoMsg::Enter(mall.clone())).unwrap();
        }
        let sum = finished.recv().await.unwrap();
        let elapsed = t.elapsed();
        verify::chameneos(&p, sum);
        elapsed
    })
}
