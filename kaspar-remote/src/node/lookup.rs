//! Looking an export up by name: its announced record, the checks of the
//! actor's type and schema, and the hello (authenticated where the node
//! requires it) that opens or joins the link to it.
//!
//! It needs nothing of the actor's type but its name and schema hash, so
//! [`Node::lookup`](crate::Node::lookup) and a reconnecting address
//! ([`Reconnect`](crate::Reconnect)) go through the same steps: a new
//! session after a reconnect is checked, said hello to and authenticated
//! exactly as the first one was.

use std::sync::Arc;

use kaspar::AskError;

use crate::link::policy::SendPolicy;
use crate::link::LinkError;
use crate::node::error::LookupError;
use crate::node::shared::Shared;
use crate::session::acks::READS_ACKS;
use crate::session::peer::Peer;
use crate::session::pending::{Complete, Outcome};
use crate::wire::control::{ExportRecord, Hello};
use crate::wire::decode_exact;
use crate::wire::frame::{Header, Kind};
use crate::wire::Refused;

/// Finds the record announced under a name: the transport's
/// [`discover`](crate::Transport::discover), with its type erased.
pub(crate) type Discover = Box<dyn Fn(&str) -> Result<Option<Vec<u8>>, LinkError> + Send + Sync>;

/// A hello sent, waiting for its answer: the link it went on, the
/// export's slot, the hello's correlation id and the handle its answer
/// completes.
pub(crate) struct HelloSent {
    pub(crate) peer: Arc<Peer>,
    pub(crate) slot: u32,
    pub(crate) id: u64,
    pub(crate) answer: kaspar::Ask<Result<(), Refused>>,
}

impl Shared {
    /// Finds the export `name`, checks that it is an `actor` with schema
    /// `schema`, connects to its node (or joins the live link there) and
    /// says hello; returns the link and the export's slot once the
    /// exporting node has welcomed the hello. Waits at most the connect
    /// timeout twice: once to connect, once for the answer.
    pub(crate) fn lookup(
        &self,
        name: &str,
        actor: &'static str,
        schema: u64,
    ) -> Result<(Arc<Peer>, u32), LookupError> {
        let mut sent = self.say_hello(name, actor, schema)?;
        let answered = sent.answer.wait_timeout(self.config.connect_timeout);
        self.welcomed(sent, answered, actor, schema)
    }

    /// The lookup's first half: finds and checks the record, connects
    /// (or joins the live link) and sends the hello.
    pub(crate) fn say_hello(
        &self,
        name: &str,
        actor: &'static str,
        schema: u64,
    ) -> Result<HelloSent, LookupError> {
        let bytes = (self.discover)(name)?.ok_or_else(|| LookupError::NotFound(name.to_owned()))?;
        let record: ExportRecord =
            decode_exact(&bytes).map_err(|e| LookupError::BadRecord(e.to_string()))?;
        if record.actor != actor {
            return Err(LookupError::WrongActor {
                expected: actor,
                found: record.actor,
            });
        }
        if record.schema != schema {
            return Err(LookupError::SchemaMismatch {
                actor,
                expected: schema,
                found: record.schema,
            });
        }
        let (peer, previous) = self.peer(&record.endpoint)?;
        let hello = Hello {
            from: self.endpoint.clone(),
            export: name.to_owned(),
            actor: actor.to_owned(),
            schema,
            previous,
            auth: None,
        };
        let timeout = self.config.connect_timeout;
        let (answer, route) = kaspar::__private::ask_pair::<Result<(), Refused>>();
        let id = self.pending.next_id();
        self.pending.insert(
            id,
            peer.id,
            timeout,
            Complete::Call(Box::new(move |outcome: Outcome<'_>| match outcome {
                // A welcome's body is `()`: no bytes.
                Outcome::Reply(body) => route.deliver(
                    body.decode::<()>()
                        .map_err(|e| Refused::Decode(e.to_string())),
                ),
                Outcome::Refused(why) => route.deliver(Err(why)),
                Outcome::Lost => route.fail(AskError::PeerLost),
            })),
        );
        let policy = SendPolicy::Wait(timeout);
        let sent = match &self.auth {
            None => peer.send(Kind::Hello, record.slot, READS_ACKS, id, &hello, policy),
            // An authenticated hello: the fields above, then the proof of
            // this node's key (its MAC bound to the frame's session,
            // target and correlation).
            Some(auth) => {
                let header = Header {
                    kind: Kind::Hello,
                    target: record.slot,
                    wire_id: 0,
                    body_len: 0,
                    correlation: id,
                    session: peer.session,
                    seq: 0,
                };
                match auth.start_hello(&peer, &header, &hello) {
                    Some(proof) => peer.send(
                        Kind::Hello,
                        record.slot,
                        READS_ACKS,
                        id,
                        &(&hello, &proof),
                        policy,
                    ),
                    None => {
                        self.pending.cancel(id);
                        return Err(LookupError::Link(LinkError::Transport(
                            "the OS gave no randomness for the hello's nonce".into(),
                        )));
                    }
                }
            }
        };
        if sent.is_err() {
            self.pending.cancel(id);
            if let Some(auth) = &self.auth {
                auth.forget(id);
            }
            return Err(LookupError::Link(LinkError::PeerLost));
        }
        Ok(HelloSent {
            peer,
            slot: record.slot,
            id,
            answer,
        })
    }

    /// The lookup's second half: what the hello's answer (`answered`)
    /// means for it.
    pub(crate) fn welcomed(
        &self,
        sent: HelloSent,
        answered: Result<Result<(), Refused>, AskError>,
        actor: &'static str,
        schema: u64,
    ) -> Result<(Arc<Peer>, u32), LookupError> {
        let HelloSent { peer, slot, id, .. } = sent;
        if let Some(auth) = &self.auth {
            auth.forget(id);
        }
        match answered {
            Ok(Ok(())) => Ok((peer, slot)),
            Ok(Err(Refused::WrongActor { actor: found, .. })) if found != actor => {
                Err(LookupError::WrongActor {
                    expected: actor,
                    found,
                })
            }
            Ok(Err(Refused::WrongActor { schema: found, .. })) => {
                Err(LookupError::SchemaMismatch {
                    actor,
                    expected: schema,
                    found,
                })
            }
            Ok(Err(why)) => Err(LookupError::Refused(why)),
            Err(AskError::Timeout(_)) => {
                self.pending.cancel(id);
                Err(LookupError::Timeout)
            }
            Err(_) => Err(LookupError::Link(LinkError::PeerLost)),
        }
    }
}
