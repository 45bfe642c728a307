//! The node's side of acknowledgements (see [`acks`](crate::session::acks)):
//! acknowledging what its inbound sessions handled, reading the acks its
//! peers send, and accounting for a lost peer's unacknowledged sends.

use crate::link::policy::SendPolicy;
use crate::node::shared::Shared;
use crate::session::counters::Counters;
use crate::session::peer::Peer;
use crate::session::sessions::Sessions;
use crate::wire::decode_exact;
use crate::wire::frame::{Header, Kind};

impl Shared {
    /// The receiver's side, from the bridge's periodic work: an ack on the
    /// link back of every session whose sender reads acks and that has
    /// handled frames since it last said so.
    pub(crate) fn acknowledge(&self, sessions: &mut Sessions) {
        for (&id, s) in sessions.iter_mut() {
            let (Some(said), Some(back)) = (s.acked, s.reply.as_ref()) else {
                continue;
            };
            if s.expected <= said || back.is_lost() {
                continue;
            }
            let count = s.expected;
            if back
                .send(Kind::Ack, 0, 0, id, &count, SendPolicy::Fail)
                .is_ok()
            {
                s.acked = Some(count);
            }
        }
    }

    /// The sender's side: an ack from a peer, for the link whose session
    /// its correlation names.
    pub(crate) fn on_ack(&self, sessions: &mut Sessions, h: &Header, body: &[u8]) {
        let count = match decode_exact::<u64>(body) {
            Ok(n) => n,
            Err(e) => {
                if e.is_trailing() {
                    Counters::bump(&self.counters.trailing, 1);
                }
                Counters::bump(&self.counters.rejected, 1);
                return;
            }
        };
        // An ack needs no ack: if nothing but it arrived since this node
        // last acknowledged the session, it stays acknowledged.
        if let Some(s) = sessions.get_mut(&h.session) {
            if s.acked == Some(h.seq) {
                s.acked = h.seq.checked_add(1);
            }
        }
        if let Some(link) = self.link_of_session(h.correlation) {
            link.acknowledge(count);
        }
    }

    /// Settles a lost link: counts what it sent that was never
    /// acknowledged, and hands what it still holds to dead letters. Once
    /// per link, before its watchers are told.
    pub(crate) fn account_loss(&self, peer: &Peer) {
        let settled = peer.settle();
        // Only a lookup's link is acknowledged; a link that was only the
        // way back for another node's asks carried replies (whose asker is
        // the one lost) and acks.
        if !peer.said_hello() {
            return;
        }
        let retain = self.config.retain.as_ref();
        self.losses
            .account(&peer.endpoint, peer.session, settled, retain);
    }
}
