//! What an [`Iceoryx2Transport`](super::Iceoryx2Transport) is built with.

use std::time::Duration;

use crate::link::LinkError;

/// What a sender meets when an inbox holds `inbox_depth` unread frames
/// from it.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default)]
pub enum Overflow {
    /// The send fails at once with [`LinkError::Full`] and nothing is
    /// written (back-pressure; iceoryx2's safe overflow off).
    #[default]
    Fail,
    /// The send succeeds and the oldest unread frame from that sender is
    /// dropped (market data; iceoryx2's safe overflow on).
    DropOldest,
}

/// The settings of an [`Iceoryx2Transport`](super::Iceoryx2Transport).
///
/// Inbox settings (`inbox_depth`, `overflow`, `max_senders`) belong to the
/// process that listens: a sender adopts those of the inbox it connects
/// to. `max_frame_len` belongs to the sender.
#[derive(Clone, Debug)]
pub struct Iceoryx2Config {
    pub(super) max_frame_len: usize,
    pub(super) inbox_depth: usize,
    pub(super) overflow: Overflow,
    pub(super) liveness_timeout: Duration,
    pub(super) max_senders: usize,
    pub(super) namespace: Option<String>,
    pub(super) topic_depth: usize,
    pub(super) max_subscribers: usize,
}

impl Default for Iceoryx2Config {
    /// 4 KiB frames, 1024 frames per sender and inbox, [`Overflow::Fail`],
    /// a 100 ms liveness timeout, 16 senders per inbox, iceoryx2's default
    /// namespace; topics of 1024 frames per subscriber, 16 subscribers and
    /// 16 publishers each.
    fn default() -> Self {
        Iceoryx2Config {
            max_frame_len: 4096,
            inbox_depth: 1024,
            overflow: Overflow::Fail,
            liveness_timeout: Duration::from_millis(100),
            max_senders: 16,
            namespace: None,
            topic_depth: 1024,
            max_subscribers: 16,
        }
    }
}

impl Iceoryx2Config {
    /// The longest frame a sender of this transport writes. Each sender
    /// reserves `inbox_depth` slots of this size in shared memory.
    pub fn max_frame_len(mut self, bytes: usize) -> Self {
        self.max_frame_len = bytes;
        self
    }

    /// How many unread frames an inbox of this transport holds per sender
    /// before [`Overflow`] applies.
    pub fn inbox_depth(mut self, frames: usize) -> Self {
        self.inbox_depth = frames;
        self
    }

    /// What a full inbox of this transport does to its senders.
    pub fn overflow(mut self, policy: Overflow) -> Self {
        self.overflow = policy;
        self
    }

    /// The longest a dead receiving process goes unreported: a link's
    /// [`peer`](crate::LinkTx::peer) turns [`Lost`](crate::PeerState::Lost)
    /// within this time of the process's death.
    pub fn liveness_timeout(mut self, timeout: Duration) -> Self {
        self.liveness_timeout = timeout;
        self
    }

    /// How many sending processes (links) one inbox of this transport
    /// accepts at once.
    pub fn max_senders(mut self, senders: usize) -> Self {
        self.max_senders = senders;
        self
    }

    /// Keeps this transport's endpoints and names apart from those of every
    /// other namespace on the host (iceoryx2's resource prefix): processes
    /// see each other only when they use the same namespace. At most 32
    /// ASCII letters, digits and `_`.
    pub fn namespace(mut self, namespace: impl Into<String>) -> Self {
        self.namespace = Some(namespace.into());
        self
    }

    /// How many unread frames each subscriber of a
    /// [`topic`](crate::topic) holds; when full, its oldest is dropped for
    /// the newest. Belongs to the process that creates the topic (the
    /// first to open it); later ones adopt it.
    pub fn topic_depth(mut self, frames: usize) -> Self {
        self.topic_depth = frames;
        self
    }

    /// How many subscribers one topic admits at once (and, with
    /// `max_senders`, publishers). Belongs to the process that creates the
    /// topic.
    pub fn max_subscribers(mut self, subscribers: usize) -> Self {
        self.max_subscribers = subscribers;
        self
    }

    /// Checks the settings; each bad one is a clear error.
    pub(super) fn validate(&self) -> Result<(), LinkError> {
        let bad = |why: String| Err(LinkError::Transport(why));
        if self.max_frame_len == 0 {
            return bad("max_frame_len must be at least 1 byte".into());
        }
        if self.inbox_depth == 0 {
            return bad("inbox_depth must be at least 1 frame".into());
        }
        if self.max_senders == 0 {
            return bad("max_senders must be at least 1".into());
        }
        if self.topic_depth == 0 {
            return bad("topic_depth must be at least 1 frame".into());
        }
        if self.max_subscribers == 0 {
            return bad("max_subscribers must be at least 1".into());
        }
        if self.liveness_timeout < Duration::from_millis(4) {
            return bad(format!(
                "liveness_timeout must be at least 4 ms, not {:?}",
                self.liveness_timeout
            ));
        }
        if let Some(ns) = &self.namespace {
            let ok = !ns.is_empty()
                && ns.len() <= 32
                && ns.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_');
            if !ok {
                return bad(format!(
                    "namespace {ns:?} must be 1 to 32 ASCII letters, digits or '_'"
                ));
            }
        }
        Ok(())
    }

    /// How often the liveness monitor looks at the peers: four times per
    /// timeout, so that a death is reported well within it.
    pub(super) fn check_interval(&self) -> Duration {
        self.liveness_timeout / 4
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bad_settings_are_named() {
        let err = |c: Iceoryx2Config| match c.validate() {
            Err(LinkError::Transport(why)) => why,
            other => panic!("expected an error, got {other:?}"),
        };
        assert!(err(Iceoryx2Config::default().max_frame_len(0)).contains("max_frame_len"));
        assert!(err(Iceoryx2Config::default().inbox_depth(0)).contains("inbox_depth"));
        assert!(err(Iceoryx2Config::default().max_senders(0)).contains("max_senders"));
        assert!(err(Iceoryx2Config::default().topic_depth(0)).contains("topic_depth"));
        assert!(err(Iceoryx2Config::default().max_subscribers(0)).contains("max_subscribers"));
        assert!(
            err(Iceoryx2Config::default().liveness_timeout(Duration::from_millis(1)))
                .contains("liveness_timeout")
        );
        assert!(err(Iceoryx2Config::default().namespace("a/b")).contains("namespace"));
        assert!(err(Iceoryx2Config::default().namespace("")).contains("namespace"));
        assert_eq!(
            Iceoryx2Config::default().namespace("desk_1").validate(),
            Ok(())
        );
    }
}
