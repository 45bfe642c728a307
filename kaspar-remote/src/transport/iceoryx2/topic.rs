//! Topics over iceoryx2 publish-subscribe: one service per topic name
//! (`kaspar/topic/<name>`), any number of publishers (up to
//! `max_senders`) and subscribers (up to `max_subscribers`), each
//! subscriber with a queue of `topic_depth` frames that overflows by
//! dropping its oldest frame (iceoryx2's safe overflow). A publish writes
//! one shared-memory sample that every subscriber reads; a slow subscriber
//! never makes a publish fail or wait.

use ::iceoryx2::port::publisher::Publisher;
use ::iceoryx2::port::update_connections::UpdateConnections;
use ::iceoryx2::port::LoanError;
use ::iceoryx2::prelude::*;
use ::iceoryx2::service::port_factory::publish_subscribe::PortFactory as PubSub;

use super::{engine, service_name, Iceoryx2Rx, Iceoryx2Transport, Ipc};
use crate::link::LinkError;
use crate::topic::{TopicEngine, TopicTx};

/// The publishing side of an iceoryx2 topic.
pub struct Iceoryx2TopicTx {
    // Declared before `service`: the port goes before the service handle.
    publisher: Publisher<Ipc, [u8], ()>,
    service: PubSub<Ipc, [u8], ()>,
    max_frame_len: usize,
}

// SAFETY: as for `Iceoryx2Tx` (see tx.rs): the only thread-bound part of
// an `ipc` publisher is the `Rc` around its port state (iceoryx2 =0.9.3,
// pinned), which it clones into each loaned sample; `publish_frame` sends
// or drops its sample before it returns, unwinding included, so when this
// value moves to another thread the `Rc` has one owner, inside it. Not
// being `Sync`, it is never used from two threads at once.
unsafe impl Send for Iceoryx2TopicTx {}

impl std::fmt::Debug for Iceoryx2TopicTx {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Iceoryx2TopicTx")
            .field("max_frame_len", &self.max_frame_len)
            .field("subscribers", &self.subscribers())
            .finish()
    }
}

impl TopicTx for Iceoryx2TopicTx {
    /// Loans a sample, zeroes it, lets `fill` write it and publishes it to
    /// every subscriber. A subscriber whose queue is full loses its oldest
    /// frame to this one.
    fn publish_frame(
        &mut self,
        len: usize,
        fill: &mut dyn FnMut(&mut [u8]),
    ) -> Result<usize, LinkError> {
        if len > self.max_frame_len {
            return Err(LinkError::TooLarge {
                len,
                max: self.max_frame_len,
            });
        }
        let sample = match self.publisher.loan_slice_uninit(len) {
            Ok(sample) => sample,
            Err(LoanError::OutOfMemory | LoanError::ExceedsMaxLoans) => {
                return Err(LinkError::Full)
            }
            Err(e) => return Err(LinkError::Transport(format!("iceoryx2 loan: {e:?}"))),
        };
        let mut sample = sample.write_from_fn(|_| 0u8);
        fill(sample.payload_mut());
        sample
            .send()
            .map_err(|e| LinkError::Transport(format!("iceoryx2 publish: {e:?}")))
    }

    fn max_frame_len(&self) -> usize {
        self.max_frame_len
    }

    fn subscribers(&self) -> usize {
        self.service.dynamic_config().number_of_subscribers()
    }
}

impl Iceoryx2Transport {
    /// The topic's service, created with this transport's topic settings
    /// if no process has created it yet.
    fn topic_service(&self, topic: &str) -> Result<PubSub<Ipc, [u8], ()>, LinkError> {
        let name = service_name("topic", topic)?;
        let c = &self.config;
        self.node
            .lock()
            .service_builder(&name)
            .publish_subscribe::<[u8]>()
            .enable_safe_overflow(true)
            .subscriber_max_buffer_size(c.topic_depth)
            .subscriber_max_borrowed_samples(1)
            .history_size(0)
            .max_subscribers(c.max_subscribers)
            .max_publishers(c.max_senders)
            .max_nodes(c.max_subscribers + c.max_senders)
            .open_or_create()
            .map_err(|e| engine(topic, "open the topic", e))
    }
}

impl TopicEngine for Iceoryx2Transport {
    type Tx = Iceoryx2TopicTx;
    type Rx = Iceoryx2Rx;

    fn publish(&self, topic: &str) -> Result<Iceoryx2TopicTx, LinkError> {
        let service = self.topic_service(topic)?;
        let publisher = service
            .publisher_builder()
            .initial_max_slice_len(self.config.max_frame_len)
            .allocation_strategy(AllocationStrategy::Static)
            .max_loaned_samples(1)
            .create()
            .map_err(|e| engine(topic, "publish on", e))?;
        publisher
            .update_connections()
            .map_err(|e| engine(topic, "connect the publisher of", e))?;
        Ok(Iceoryx2TopicTx {
            publisher,
            service,
            max_frame_len: self.config.max_frame_len,
        })
    }

    fn subscribe(&self, topic: &str) -> Result<Iceoryx2Rx, LinkError> {
        let service = self.topic_service(topic)?;
        let subscriber = service
            .subscriber_builder()
            .buffer_size(self.config.topic_depth)
            .create()
            .map_err(|e| engine(topic, "subscribe to", e))?;
        // Keeps the cleanup of dead publishers' resources running.
        let watch = self.monitor.watch(None).map_err(LinkError::Transport)?;
        Ok(Iceoryx2Rx::new(
            subscriber,
            service,
            watch,
            topic.to_owned(),
        ))
    }
}
