//! The handshake's messages and MACs, what a node keeps between its
//! steps, and the replay cache.

use std::collections::{HashSet, VecDeque};
use std::sync::Arc;
use std::time::{Duration, Instant};

use parking_lot::Mutex;

use super::{nonce, Auth, FrameKey, Key, Transcript};
use crate::session::idmap::IdMap;
use crate::session::peer::Peer;
use crate::wire::control::{Challenge, Hello, HelloAuth, Proof};
use crate::wire::frame::Header;

/// Verified hellos remembered to refuse a replay of one. A replay older
/// than that gets a challenge (sent to the endpoint its genuine sender
/// named, which ignores it) and never a session: nobody can answer it.
pub(crate) const SEEN: usize = 4096;

/// The most hellos whose MAC a node checks per [`BUDGET_SPAN`]; the rest
/// are dropped unchecked. A MAC costs a microsecond or two: without a
/// bound, a flood of forged hellos would hold the receiving thread, and
/// every session's frames queued behind them. Under such a flood a
/// genuine lookup may be dropped too, and is retried; sessions already
/// open are not touched.
pub(crate) const HELLO_BUDGET: u32 = 16;
/// The span [`HELLO_BUDGET`] applies to.
pub(crate) const BUDGET_SPAN: Duration = Duration::from_millis(1);

/// A node's authentication: its settings, the hellos it sent that wait
/// for their challenge, and the hellos it has verified lately.
pub(crate) struct AuthState {
    pub(crate) config: Auth,
    /// By the hello's correlation id.
    sent: Mutex<IdMap<Sent>>,
    seen: Mutex<Seen>,
    /// When the current budget span started, and the hellos checked in it.
    budget: Mutex<(Instant, u32)>,
}

/// A hello this node sent, waiting for its challenge.
struct Sent {
    /// The link it went on (its session is the client's `Sc`).
    peer: Arc<Peer>,
    nonce: [u8; 16],
}

#[derive(Default)]
struct Seen {
    macs: HashSet<[u8; 32]>,
    order: VecDeque<[u8; 32]>,
}

/// How an inbound session is authenticated (`None` in
/// [`SessionIn`](crate::session::sessions::SessionIn) until some of it is).
#[derive(Default)]
pub(crate) struct SessionAuth {
    /// The key id the session proved as a caller: it may send tells and
    /// asks (and its asks are answered).
    pub(crate) caller: Option<Arc<str>>,
    /// The session is the link back of a hello of this node's, and
    /// proved the key in its challenge: it may send welcomes, replies and
    /// errors.
    pub(crate) answers: bool,
    /// The key of its frames' tags, when they are tagged; fixed by the
    /// first handshake that set it.
    pub(crate) frame_key: Option<FrameKey>,
    /// A challenge sent, waiting for the proof.
    pub(crate) challenge: Option<Box<Challenged>>,
}

/// A verified hello whose challenge went out.
pub(crate) struct Challenged {
    pub(crate) header: Header,
    pub(crate) hello: Hello,
    pub(crate) back: Arc<Peer>,
    pub(crate) key_id: Arc<str>,
    nonces: [[u8; 16]; 2],
    /// The key of the session's frame tags, when they are tagged.
    pub(crate) frames: Option<FrameKey>,
}

/// The MAC of an authenticated hello, bound to its frame's session,
/// target and correlation.
fn hello_mac(key: &Key, h: &Header, hello: &Hello, a: &HelloAuth) -> Transcript {
    let previous = hello.previous.map_or([0; 2], |p| [p.session, p.sent]);
    let mut t = Transcript::new(key, "hello");
    t.u64(h.session)
        .u64(u64::from(h.target))
        .u64(h.correlation)
        .field(hello.from.as_bytes())
        .field(hello.export.as_bytes())
        .field(hello.actor.as_bytes())
        .u64(hello.schema)
        .u64(u64::from(hello.previous.is_some()))
        .u64(previous[0])
        .u64(previous[1])
        .field(a.key_id.as_bytes())
        .field(&a.nonce)
        .u64(u64::from(a.sign));
    t
}

/// What both ends derive from one handshake: `label`'s MAC over both
/// sessions and nonces.
fn bound(
    key: &Key,
    label: &str,
    sessions: [u64; 2],
    correlation: u64,
    nonces: &[[u8; 16]; 2],
) -> Transcript {
    let mut t = Transcript::new(key, label);
    t.u64(sessions[0])
        .u64(sessions[1])
        .u64(correlation)
        .field(&nonces[0])
        .field(&nonces[1]);
    t
}

fn challenge_mac(key: &Key, s: [u64; 2], c: u64, n: &[[u8; 16]; 2], sign: bool) -> Transcript {
    let mut t = bound(key, "challenge", s, c, n);
    t.u64(u64::from(sign));
    t
}

fn frame_key(key: &Key, s: [u64; 2], c: u64, n: &[[u8; 16]; 2]) -> FrameKey {
    FrameKey::new(&bound(key, "frames", s, c, n).finish())
}

impl AuthState {
    pub(crate) fn new(config: Auth) -> AuthState {
        AuthState {
            config,
            sent: Mutex::new(IdMap::default()),
            seen: Mutex::new(Seen::default()),
            budget: Mutex::new((Instant::now(), 0)),
        }
    }

    /// The authentication of `hello`, about to go out on `peer` as
    /// `header` (its session, target and correlation set), remembered
    /// until its challenge comes or [`forget`](Self::forget); `None` when
    /// the OS gives no randomness.
    pub(crate) fn start_hello(
        &self,
        peer: &Arc<Peer>,
        header: &Header,
        hello: &Hello,
    ) -> Option<HelloAuth> {
        let mut a = HelloAuth {
            key_id: self.config.id.to_string(),
            nonce: nonce()?,
            sign: self.config.sign_frames,
            mac: [0; 32],
        };
        a.mac = hello_mac(&self.config.key, header, hello, &a).finish();
        self.sent.lock().insert(
            header.correlation,
            Sent {
                peer: peer.clone(),
                nonce: a.nonce,
            },
        );
        Some(a)
    }

    /// The hello `correlation` is answered, or given up.
    pub(crate) fn forget(&self, correlation: u64) {
        self.sent.lock().remove(&correlation);
    }

    /// Whether a hello of this node's waits for the challenge `correlation`.
    pub(crate) fn awaits(&self, correlation: u64) -> bool {
        self.sent.lock().contains_key(&correlation)
    }

    /// Whether `hello` (the frame's header `h`) carries a valid MAC under
    /// the key of the id it names, and is not one verified before. A
    /// verified one is remembered from now on.
    pub(crate) fn verify_hello(&self, h: &Header, hello: &Hello) -> Verdict {
        let Some(a) = &hello.auth else {
            return Verdict::Forged;
        };
        {
            let mut budget = self.budget.lock();
            let now = Instant::now();
            if now.duration_since(budget.0) >= BUDGET_SPAN {
                *budget = (now, 0);
            }
            if budget.1 >= HELLO_BUDGET {
                return Verdict::OverBudget;
            }
            budget.1 += 1;
        }
        let key = self.config.key_for(&a.key_id);
        if !hello_mac(key, h, hello, a).verify(&a.mac) {
            return Verdict::Forged;
        }
        let mut seen = self.seen.lock();
        if !seen.macs.insert(a.mac) {
            return Verdict::Replayed;
        }
        seen.order.push_back(a.mac);
        if seen.order.len() > SEEN {
            if let Some(old) = seen.order.pop_front() {
                seen.macs.remove(&old);
            }
        }
        Verdict::Good
    }

    /// The challenge to a verified hello (header `h`) whose link back is
    /// `back`, and the state kept for its proof; `None` without
    /// randomness.
    pub(crate) fn challenge(
        &self,
        h: &Header,
        hello: &Hello,
        back: &Arc<Peer>,
    ) -> Option<(Challenge, Box<Challenged>)> {
        let a = hello.auth.as_ref()?;
        let key = self.config.key_for(&a.key_id);
        let nonces = [a.nonce, nonce()?];
        let sessions = [h.session, back.session];
        let sign = a.sign || self.config.sign_frames;
        let mac = challenge_mac(key, sessions, h.correlation, &nonces, sign).finish();
        let frames = sign.then(|| frame_key(key, sessions, h.correlation, &nonces));
        let kept = Box::new(Challenged {
            header: *h,
            hello: hello.clone(),
            back: back.clone(),
            key_id: a.key_id.as_str().into(),
            nonces,
            frames,
        });
        Some((
            Challenge {
                nonce: nonces[1],
                sign,
                mac,
            },
            kept,
        ))
    }

    /// Whether `proof` answers the challenge `c`.
    pub(crate) fn check_proof(&self, c: &Challenged, proof: &Proof) -> bool {
        let key = self.config.key_for(&c.key_id);
        let sessions = [c.header.session, c.back.session];
        bound(key, "proof", sessions, c.header.correlation, &c.nonces).verify(&proof.mac)
    }

    /// Verifies the challenge `ch` that came on session `sb` for this
    /// node's hello `correlation`; if it is genuine, forgets the hello and
    /// returns the proof to send on the hello's link, that link, and the
    /// frame key when the session's frames are tagged. A challenge that
    /// does not verify leaves the hello waiting (a forged one must not
    /// spoil the genuine).
    pub(crate) fn answer(
        &self,
        sb: u64,
        correlation: u64,
        ch: &Challenge,
    ) -> Option<(Proof, Arc<Peer>, Option<FrameKey>)> {
        let mut sent = self.sent.lock();
        let s = sent.get(&correlation)?;
        let key = &self.config.key;
        let sessions = [s.peer.session, sb];
        let nonces = [s.nonce, ch.nonce];
        if !challenge_mac(key, sessions, correlation, &nonces, ch.sign).verify(&ch.mac) {
            return None;
        }
        let s = sent.remove(&correlation)?;
        let proof = Proof {
            mac: bound(key, "proof", sessions, correlation, &nonces).finish(),
        };
        let frames = ch
            .sign
            .then(|| frame_key(key, sessions, correlation, &nonces));
        Some((proof, s.peer, frames))
    }
}

/// What [`AuthState::verify_hello`] found.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Verdict {
    /// A genuine hello, seen for the first time.
    Good,
    /// No MAC, or one that does not verify.
    Forged,
    /// A genuine hello seen before.
    Replayed,
    /// Not checked: past [`HELLO_BUDGET`].
    OverBudget,
}
