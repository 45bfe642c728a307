//! The gate every frame passes on a node that requires authentication,
//! and the handshake's steps as the node's receiving thread takes them.

use std::sync::Arc;

use crate::node::shared::Shared;
use crate::session::auth::handshake::Verdict;
use crate::session::auth::AuthState;
use crate::session::counters::Counters;
use crate::session::idmap::IdMap;
use crate::session::peer::Peer;
use crate::session::sessions::SessionIn;
use crate::wire::control::{decode_hello, Challenge, Hello, Proof};
use crate::wire::decode_exact;
use crate::wire::frame::{Frame, Header, Kind};
use crate::wire::Refused;

impl Shared {
    /// With authentication on: `bytes` without its tag, if its session
    /// may send it (see [`auth`](crate::auth)); `None` if not, counted in
    /// `unauthenticated` (a tell or ask past an export's allow list is
    /// refused as a message instead, its asker told). Bytes that are no
    /// frame pass, for the frame parser to reject and count.
    pub(crate) fn admit<'b>(
        &self,
        auth: &AuthState,
        sessions: &mut IdMap<SessionIn>,
        bytes: &'b [u8],
    ) -> Option<&'b [u8]> {
        let (Some(&kind), Some(id)) = (bytes.get(3), bytes.get(24..32)) else {
            return Some(bytes);
        };
        let mut session = [0; 8];
        session.copy_from_slice(id);
        let s = sessions.get(&u64::from_le_bytes(session));
        let state = s.and_then(|s| s.auth.as_deref());
        // A hello and a challenge carry MACs of their own, and come before
        // a session has a frame key.
        let tagged = kind != Kind::Hello as u8 && kind != Kind::Challenge as u8;
        let bytes = match state.and_then(|a| a.frame_key.as_ref()) {
            Some(key) if tagged => match key.verify(bytes) {
                Some(frame) => frame,
                None => return self.unauthenticated(),
            },
            _ => bytes,
        };
        let Ok(frame) = Frame::parse(bytes) else {
            return Some(bytes);
        };
        let h = frame.header;
        let admitted = match h.kind {
            Kind::Hello => match decode_hello(frame.body) {
                // Malformed: the bridge rejects it.
                Err(_) => true,
                Ok(hello) => match auth.verify_hello(&h, &hello) {
                    Verdict::Good => true,
                    Verdict::Replayed => {
                        Counters::bump(&self.counters.replayed, 1);
                        false
                    }
                    Verdict::Forged | Verdict::OverBudget => false,
                },
            },
            Kind::Challenge => auth.awaits(h.correlation),
            Kind::Proof => state.is_some_and(|a| a.challenge.is_some()),
            Kind::Tell | Kind::Ask => match state.and_then(|a| a.caller.as_deref()) {
                None => false,
                Some(caller) => {
                    if let Err(why) = self.allowed(h.target, caller) {
                        if let Some(back) = s.and_then(|s| s.reply.as_ref()) {
                            if h.kind == Kind::Ask {
                                let _ = back.send(
                                    Kind::Error,
                                    0,
                                    0,
                                    h.correlation,
                                    &why,
                                    self.config.policy,
                                );
                            }
                        }
                        Counters::bump(&self.counters.refused, 1);
                        return None;
                    }
                    true
                }
            },
            Kind::Welcome | Kind::Reply | Kind::Error => state.is_some_and(|a| a.answers),
            // Both ends of a conversation send these: either kind of
            // authenticated session may.
            Kind::Bye | Kind::Ack => state.is_some_and(|a| a.answers || a.caller.is_some()),
        };
        if admitted {
            Some(bytes)
        } else {
            self.unauthenticated()
        }
    }

    fn unauthenticated<T>(&self) -> Option<T> {
        Counters::bump(&self.counters.unauthenticated, 1);
        None
    }

    /// Whether the export in slot `target` admits the peer `caller`
    /// (there is no allow list, or `caller` is on it). An empty slot
    /// passes: the bridge refuses it as an unknown target.
    pub(crate) fn allowed(&self, target: u32, caller: &str) -> Result<(), Refused> {
        let exports = self.exports.read();
        let export = usize::try_from(target)
            .ok()
            .and_then(|i| exports.get(i))
            .and_then(Option::as_ref);
        match export.and_then(|e| e.allow.as_deref().map(|a| (e, a))) {
            Some((e, allow)) if !allow.iter().any(|id| **id == *caller) => {
                Err(Refused::NotAllowed {
                    export: e.name.clone(),
                    peer: caller.to_owned(),
                })
            }
            _ => Ok(()),
        }
    }

    /// A hello whose link back is open: answered now, or, with
    /// authentication on, challenged (the answer follows the proof).
    pub(crate) fn hello_landed(
        &self,
        sessions: &mut IdMap<SessionIn>,
        h: &Header,
        hello: &Hello,
        back: &Arc<Peer>,
    ) {
        let Some(auth) = &self.auth else {
            return self.answer_hello(sessions, h, hello, back);
        };
        // (The session may have been evicted meanwhile: nothing to do.)
        let Some(s) = sessions.get_mut(&h.session) else {
            return;
        };
        let Some((challenge, kept)) = auth.challenge(h, hello, back) else {
            // No randomness from the OS: no answer; the lookup times out.
            Counters::bump(&self.counters.refused, 1);
            return;
        };
        let a = s.auth.get_or_insert_with(Box::default);
        if a.frame_key.is_none() {
            a.frame_key = kept.frames.clone();
        }
        a.challenge = Some(kept);
        let _ = back.send(
            Kind::Challenge,
            0,
            0,
            h.correlation,
            &challenge,
            self.config.policy,
        );
    }

    /// A challenge to a hello of this node's (admitted: one is waiting):
    /// if it verifies, its session may answer from now on, and the proof
    /// goes back on the hello's link.
    pub(crate) fn on_challenge(&self, sessions: &mut IdMap<SessionIn>, h: &Header, body: &[u8]) {
        let (Some(auth), Ok(challenge)) = (&self.auth, decode_exact::<Challenge>(body)) else {
            Counters::bump(&self.counters.rejected, 1);
            return;
        };
        let Some((proof, link, frames)) = auth.answer(h.session, h.correlation, &challenge) else {
            Counters::bump(&self.counters.unauthenticated, 1);
            // No state for a forger's session: the frame opened it.
            if sessions.get(&h.session).is_some_and(|s| s.auth.is_none()) {
                sessions.remove(&h.session);
            }
            return;
        };
        if let Some(s) = sessions.get_mut(&h.session) {
            let a = s.auth.get_or_insert_with(Box::default);
            a.answers = true;
            if a.frame_key.is_none() {
                a.frame_key = frames.clone();
            }
        }
        if let Some(key) = frames {
            link.sign_with(key);
        }
        let _ = link.send(Kind::Proof, 0, 0, h.correlation, &proof, self.config.policy);
    }

    /// The proof that answers this node's challenge (admitted: one is
    /// waiting): the session becomes its key id's, and the hello gets its
    /// answer.
    pub(crate) fn on_proof(&self, sessions: &mut IdMap<SessionIn>, h: &Header, body: &[u8]) {
        let Some(auth) = &self.auth else {
            Counters::bump(&self.counters.rejected, 1);
            return;
        };
        let Some(a) = sessions.get_mut(&h.session).and_then(|s| s.auth.as_mut()) else {
            return;
        };
        let Some(c) = a.challenge.take() else {
            return;
        };
        let proven = decode_exact::<Proof>(body).is_ok_and(|p| auth.check_proof(&c, &p));
        if !proven {
            Counters::bump(&self.counters.unauthenticated, 1);
            return;
        }
        a.caller = Some(c.key_id.clone());
        if let Some(key) = &c.frames {
            c.back.sign_with(key.clone());
        }
        if let Err(why) = self.allowed(c.header.target, &c.key_id) {
            let _ = c.back.send(
                Kind::Error,
                0,
                0,
                c.header.correlation,
                &why,
                self.config.policy,
            );
            return;
        }
        self.answer_hello(sessions, &c.header, &c.hello, &c.back);
    }
}
