//! Which actors an awaited `ask` must not spin for: those whose messages
//! are handled by tasks of a tokio runtime (a pool hosted on it, for an
//! actor or a group) or by the simulator's steps, where the spin could
//! hold the very thread the reply needs. Every other actor answers on
//! threads of its own.

use crate::prelude::*;
use crate::reply::Asked;
use crate::Actor;

pub struct Ping;

#[actor]
pub struct Echo;

#[actor]
impl Echo {
    #[handler(Ping)]
    fn ping(&mut self, _msg: Ping, _ctx: &mut Ctx<Self>) {}
}

#[crate::group]
pub struct Pair {
    pub left: Addr<Echo>,
    pub right: Addr<Echo>,
}

fn hosted<A: Actor>(addr: &Addr<A>) -> bool {
    Asked::hosted(&*addr.cell)
}

#[cfg(feature = "tokio")]
#[test]
fn only_actors_and_groups_of_a_pool_hosted_on_tokio_are_hosted() {
    use crate::{PoolConfig, SystemConfig};
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    let on_tokio = System::with_config(SystemConfig {
        pool: PoolConfig::tokio(rt.handle().clone()),
        ..SystemConfig::default()
    });
    let on_threads = System::new();
    for (system, pool_hosted) in [(&on_tokio, true), (&on_threads, false)] {
        let pooled = system.spawn(Echo).pooled().start();
        let own_thread = system.spawn(Echo).start();
        let group = system.spawn_group::<Pair>((Echo, Echo)).pooled().start();
        let threaded_group = system.spawn_group::<Pair>((Echo, Echo)).start();
        assert_eq!(hosted(&pooled), pool_hosted, "a pooled actor");
        assert!(!hosted(&own_thread), "an actor on its own thread");
        assert_eq!(hosted(&group.left), pool_hosted, "a pooled group's member");
        assert!(
            !hosted(&threaded_group.right),
            "a member of a group on its thread"
        );
    }
    on_threads.shutdown();
    on_tokio.shutdown();
}

#[cfg(feature = "sim")]
#[test]
fn every_actor_of_a_simulated_system_is_hosted() {
    use crate::sim::{Sim, SimConfig};
    let sim = Sim::new(SimConfig::seed(1));
    let system = sim.system();
    let pooled = system.spawn(Echo).pooled().start();
    let own_thread = system.spawn(Echo).start();
    let group = system.spawn_group::<Pair>((Echo, Echo)).start();
    assert!(hosted(&pooled) && hosted(&own_thread) && hosted(&group.left));
}
