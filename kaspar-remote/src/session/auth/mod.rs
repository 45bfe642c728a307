//! Authenticated peers: who may open a session with a node, and proof
//! that each frame of it came from them.
//!
//! With [`NodeConfig::auth`](crate::NodeConfig::auth) set, a node handles
//! nothing of a peer's until the peer has shown it holds a shared key, and
//! shows the peer in turn that it holds the key too. The handshake is a
//! challenge and response over HMAC-SHA256, folded into the hello a lookup
//! sends anyway:
//!
//! 1. hello (client to server, on the client's session `Sc`): the lookup's
//!    fields, the client's key id, a 16-byte nonce `Nc` from the OS, and a
//!    MAC over all of them and `Sc`. A server that cannot verify it sends
//!    nothing anywhere (not even to the endpoint the hello names) and keeps
//!    no state; a hello it has seen verified before is a replay, refused
//!    the same way;
//! 2. challenge (server to client, on the link back, session `Sb`): a
//!    nonce `Ns` and a MAC over both nonces and both sessions: the client
//!    learns that the server holds the key, and that this challenge
//!    answers its own hello;
//! 3. proof (client to server, on `Sc`): a MAC over the same, which no
//!    replayed hello can produce, since `Ns` is new. Only now is `Sc`
//!    authenticated: its tells and asks are handled, its asks answered
//!    over the link back, and the hello's own answer (welcome or refusal)
//!    goes out.
//!
//! Every MAC is keyed by the client's key and bound to both sessions and
//! both nonces, so a message of one handshake is no use in another. What
//! a session may send is then fixed by how it was authenticated: a session
//! that proved itself as a caller sends tells and asks; the link back,
//! authenticated by its challenge, sends replies. Any other frame, from a
//! session that is not authenticated or of a kind it may not send, is
//! dropped unread and counted
//! ([`NodeStats::unauthenticated`](crate::NodeStats::unauthenticated)).
//!
//! What this does not do by itself: a frame of an authenticated session
//! carries no proof of its own, so whoever can write into the node's inbox
//! *and read* the session's id could inject into it. On one host (iceoryx2,
//! Aeron IPC) reading the inbox needs the same rights as writing it; over
//! UDP it needs only a place on the path, so there
//! [`Auth::sign_frames`] adds a 16-byte tag to every frame, an HMAC keyed
//! per session by a key derived from the handshake (the book's remote
//! chapter, section "Trust", says what to turn on for each transport).
//!
//! The hello gate that uses all this, on the node's receiving thread, is
//! the node's (`node::hello`).

pub(crate) mod handshake;

use std::collections::HashMap;
use std::fmt;
use std::sync::Arc;

use hmac::{Hmac, Mac};
use sha2::Sha256;

pub(crate) use handshake::{AuthState, SessionAuth};

type HmacSha256 = Hmac<Sha256>;

/// The shortest key [`Auth`] accepts: 128 bits.
pub const MIN_KEY_LEN: usize = 16;
/// The longest key id, in bytes.
pub const MAX_ID_LEN: usize = 255;
/// The bytes a signed frame carries after its body
/// ([`Auth::sign_frames`]): HMAC-SHA256 truncated to 128 bits.
pub const TAG_LEN: usize = 16;

/// How a node proves itself to its peers and which peers it accepts.
///
/// A node has a key id (its name for authentication, which allow lists
/// name: [`Export::allow`](crate::Export::allow)) and a key. When it looks
/// up an export elsewhere it proves it holds that key; when a peer looks up
/// one of its exports, the peer's key id picks the key to check it against:
/// the one given for that id with [`peer`](Self::peer), else this node's
/// own key. So one key shared by every node is the simplest setup (any
/// holder may then claim any id, so an allow list tells apart only peers
/// with keys of their own), and a key per client, known to the servers it
/// calls, makes each id mean one holder.
///
/// Keys never appear in `Debug` output.
#[derive(Clone)]
pub struct Auth {
    pub(crate) id: Arc<str>,
    key: Key,
    peers: HashMap<Arc<str>, Key>,
    pub(crate) sign_frames: bool,
}

/// A secret key, shared between the holders.
#[derive(Clone)]
struct Key(Arc<[u8]>);

impl Auth {
    /// This node's key id and key. The key must be at least
    /// [`MIN_KEY_LEN`] bytes of secret randomness (32 recommended); the id
    /// at most [`MAX_ID_LEN`] bytes, not empty.
    pub fn new(id: &str, key: &[u8]) -> Result<Auth, AuthError> {
        check(id, key)?;
        Ok(Auth {
            id: id.into(),
            key: Key(key.into()),
            peers: HashMap::new(),
            sign_frames: false,
        })
    }

    /// Accepts the peer whose key id is `id` when it proves it holds
    /// `key` (instead of this node's own key).
    pub fn peer(mut self, id: &str, key: &[u8]) -> Result<Auth, AuthError> {
        check(id, key)?;
        self.peers.insert(id.into(), Key(key.into()));
        Ok(self)
    }

    /// Tags every frame of an authenticated session (both ways) with a
    /// [`TAG_LEN`]-byte MAC, keyed per session, and drops frames whose tag
    /// does not verify. For transports whose frames others can read or
    /// rewrite on the way (Aeron UDP); one HMAC per frame on each side.
    /// A session tags its frames when either end asks for it.
    pub fn sign_frames(mut self, on: bool) -> Auth {
        self.sign_frames = on;
        self
    }

    /// This node's key id.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// The key a peer that says it is `id` must hold.
    fn key_for(&self, id: &str) -> &Key {
        self.peers.get(id).unwrap_or(&self.key)
    }
}

fn check(id: &str, key: &[u8]) -> Result<(), AuthError> {
    if id.is_empty() || id.len() > MAX_ID_LEN {
        return Err(AuthError::BadId(id.len()));
    }
    if key.len() < MIN_KEY_LEN {
        return Err(AuthError::ShortKey(key.len()));
    }
    Ok(())
}

impl fmt::Debug for Auth {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut peers: Vec<&str> = self.peers.keys().map(|k| &**k).collect();
        peers.sort_unstable();
        f.debug_struct("Auth")
            .field("id", &self.id)
            .field("peers", &peers)
            .field("sign_frames", &self.sign_frames)
            .finish_non_exhaustive()
    }
}

/// Why an [`Auth`] was not built.
#[derive(Clone, PartialEq, Eq, Debug)]
#[non_exhaustive]
pub enum AuthError {
    /// The key is shorter than [`MIN_KEY_LEN`] bytes (its length).
    ShortKey(usize),
    /// The key id is empty or longer than [`MAX_ID_LEN`] bytes (its
    /// length).
    BadId(usize),
}

impl fmt::Display for AuthError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            AuthError::ShortKey(n) => write!(
                f,
                "a key of {n} bytes is too short: at least {MIN_KEY_LEN} bytes of secret randomness"
            ),
            AuthError::BadId(n) => write!(
                f,
                "a key id of {n} bytes: it must be 1 to {MAX_ID_LEN} bytes long"
            ),
        }
    }
}

impl std::error::Error for AuthError {}

/// The key of one session's frame tags, with its HMAC state keyed once (a
/// tag then costs no key schedule, only a clone and the frame's blocks).
#[derive(Clone)]
pub(crate) struct FrameKey(HmacSha256);

impl FrameKey {
    fn new(secret: &[u8; 32]) -> FrameKey {
        FrameKey(HmacSha256::new_from_slice(secret).expect("HMAC takes any key length"))
    }

    /// Writes the tag of `frame` into `tag` ([`TAG_LEN`] bytes).
    pub(crate) fn sign(&self, frame: &[u8], tag: &mut [u8]) {
        let mut m = self.0.clone();
        m.update(frame);
        let full = m.finalize().into_bytes();
        tag.copy_from_slice(&full[..TAG_LEN]);
    }

    /// `bytes` without its trailing tag, if the tag is the frame's (in
    /// constant time).
    pub(crate) fn verify<'b>(&self, bytes: &'b [u8]) -> Option<&'b [u8]> {
        let at = bytes.len().checked_sub(TAG_LEN)?;
        let (frame, tag) = bytes.split_at(at);
        let mut m = self.0.clone();
        m.update(frame);
        m.verify_truncated_left(tag).ok().map(|()| frame)
    }
}

/// 16 bytes from the operating system's randomness.
pub(crate) fn nonce() -> Option<[u8; 16]> {
    let mut n = [0; 16];
    getrandom::fill(&mut n).ok()?;
    Some(n)
}

/// Feeds fields into a MAC, each prefixed by its length, so no two
/// different sequences of fields feed the same bytes.
struct Transcript(HmacSha256);

impl Transcript {
    fn new(key: &Key, label: &str) -> Transcript {
        let mut t =
            Transcript(HmacSha256::new_from_slice(&key.0).expect("HMAC takes any key length"));
        t.field(b"kaspar-remote/auth/1");
        t.field(label.as_bytes());
        t
    }

    fn field(&mut self, bytes: &[u8]) -> &mut Self {
        self.0.update(&(bytes.len() as u64).to_le_bytes());
        self.0.update(bytes);
        self
    }

    fn u64(&mut self, n: u64) -> &mut Self {
        self.field(&n.to_le_bytes())
    }

    fn finish(self) -> [u8; 32] {
        self.0.finalize().into_bytes().into()
    }

    /// Whether `mac` is this transcript's, in constant time.
    fn verify(self, mac: &[u8; 32]) -> bool {
        self.0.verify_slice(mac).is_ok()
    }
}
