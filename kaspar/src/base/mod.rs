//! The bottom layer: what every other layer names and nothing here names
//! back. Identities ([`ids`]), per-actor counters ([`stats`]) and handler
//! service times ([`latency`]), time as handlers see it ([`clock`],
//! [`timer`]), the synchronisation shim ([`sync`]) that swaps in loom's
//! primitives under `cfg(loom)`, the bounded spin-then-yield every
//! waiter uses before it sleeps ([`backoff`]), the CPU a thread runs on
//! and how it leaves one ([`cpu`]), a hint that fetches a cache line ahead
//! of a write to it ([`prefetch`]), and the way user code and user values
//! are run and dropped where an unwind must not escape ([`quiet`]).

pub(crate) mod backoff;
pub(crate) mod clock;
pub(crate) mod cpu;
pub(crate) mod ids;
pub(crate) mod latency;
pub(crate) mod prefetch;
pub(crate) mod quiet;
#[cfg(feature = "sim")]
pub(crate) mod sim_watch;
pub(crate) mod stats;
pub(crate) mod sync;
pub(crate) mod timer;
