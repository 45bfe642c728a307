//! The inbox: one iceoryx2 subscriber, the only one its service admits.

use std::sync::Arc;

use ::iceoryx2::port::subscriber::Subscriber;
use ::iceoryx2::service::port_factory::publish_subscribe::PortFactory;

use super::liveness::PeerWatch;
use super::Ipc;
use crate::link::{LinkError, LinkRx};

/// An inbox on one endpoint. Each sender has its own queue of
/// `inbox_depth` frames inside it; frames from one sender come out in the
/// order it sent them.
pub struct Iceoryx2Rx {
    // Declared before `service`: the port goes before the service handle.
    subscriber: Subscriber<Ipc, [u8], ()>,
    _service: PortFactory<Ipc, [u8], ()>,
    // Keeps the liveness monitor (and its dead-sender cleanup) running.
    _monitor: Arc<PeerWatch>,
    endpoint: String,
}

// SAFETY: as for `Iceoryx2Tx`: the subscriber's port state sits in an
// `Rc` that iceoryx2 clones into every received sample (iceoryx2 =0.9.3,
// pinned); `poll` drops each sample before it returns, unwinding included,
// so the `Rc` has one owner, inside this value, whenever the inbox can
// move between threads. Not being `Sync`, it is never used from two
// threads at once.
unsafe impl Send for Iceoryx2Rx {}

impl std::fmt::Debug for Iceoryx2Rx {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Iceoryx2Rx")
            .field("endpoint", &self.endpoint)
            .finish()
    }
}

impl Iceoryx2Rx {
    pub(super) fn new(
        subscriber: Subscriber<Ipc, [u8], ()>,
        service: PortFactory<Ipc, [u8], ()>,
        monitor: Arc<PeerWatch>,
        endpoint: String,
    ) -> Self {
        Iceoryx2Rx {
            subscriber,
            _service: service,
            _monitor: monitor,
            endpoint,
        }
    }
}

impl LinkRx for Iceoryx2Rx {
    /// Hands each frame to `on_frame` as a slice of shared memory, and
    /// returns the sample to its sender right after.
    fn poll(&mut self, limit: usize, on_frame: &mut dyn FnMut(&[u8])) -> Result<usize, LinkError> {
        let mut taken = 0;
        while taken < limit {
            match self.subscriber.receive() {
                Ok(Some(sample)) => {
                    on_frame(sample.payload());
                    taken += 1;
                }
                Ok(None) => break,
                // Report the frames already handed over; the failure
                // comes back on the next poll.
                Err(_) if taken > 0 => break,
                Err(e) => {
                    return Err(LinkError::Transport(format!(
                        "iceoryx2 receive on {:?}: {e:?}",
                        self.endpoint
                    )))
                }
            }
        }
        Ok(taken)
    }
}
