//! placeholder
use std::time::Duration;
use super::Params;
pub fn ping_pong(_: &Params) -> Duration { todo!() }
pub fn counting(_: &Params) -> Duration { todo!() }
pub fn thread_ring(_: &Params) -> Duration { todo!() }
pub fn fork_join(_: &Params) -> Duration { todo!() }
pub fn chameneos(_: &Params) -> Duration { todo!() }
