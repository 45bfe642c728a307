//! `announce` and `discover` over an announcement stream.
//!
//! Aeron has no service discovery, and a static table cannot carry what an
//! announcement carries (the schema hash, and whether the exporting process
//! is alive now). So every process that announces publishes its records on
//! one well-known stream ([`AnnounceChannel`]: `aeron:ipc` on one host, a
//! multicast channel across hosts), repeating them every `interval` because
//! a subscriber that joins later only hears what is published after it
//! joined. A process that discovers subscribes to the same stream and keeps
//! the records it heard; one not repeated within the liveness timeout (or
//! within three repeat intervals, if that is longer) is gone (its process
//! died or withdrew it). Dropping an [`Announcement`]
//! publishes a withdrawal at once.
//!
//! One background thread per transport (started by the first `announce` or
//! `discover`) repeats this process's records and listens to everyone's.
//!
//! Wire format of one record: `kind: u8` (1 announce, 2 withdraw),
//! `name_len: u16 LE`, `name`, then the record's bytes.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

use rusteron_client::{Aeron, AeronPublication, AeronSubscription, Handlers};

use super::config::AnnounceChannel;
use super::driver::{c_string, engine};
use crate::link::{Announcement, LinkError};

const ANNOUNCE: u8 = 1;
const WITHDRAW: u8 = 2;

/// How long creating the stream's publication and subscription may take.
const SETUP_TIMEOUT: Duration = Duration::from_secs(5);

/// Fragments read per poll of the announcement stream.
const POLL_LIMIT: usize = 64;

/// One record heard on the stream.
struct Heard {
    record: Vec<u8>,
    session: i32,
    at: Instant,
}

/// This process's records, by announcement id.
type Own = HashMap<u64, (String, Vec<u8>)>;

struct State {
    own: Mutex<Own>,
    heard: Mutex<HashMap<String, Heard>>,
    /// When the listener joined the stream.
    since: Instant,
    stop: AtomicBool,
    next_id: AtomicU64,
}

/// The announcement stream of one transport: its publication, its
/// listener thread, and what it heard.
pub(crate) struct Registry {
    state: Arc<State>,
    // Concurrent (not exclusive) publication: `announce` and the drop of an
    // `Announcement` publish from the caller's thread while the listener
    // repeats from its own.
    publication: Arc<AeronPublication>,
    listener: Option<JoinHandle<()>>,
    channel: AnnounceChannel,
    liveness: Duration,
}

impl Registry {
    pub(crate) fn start(
        aeron: &Aeron,
        channel: &AnnounceChannel,
        liveness: Duration,
    ) -> Result<Self, LinkError> {
        // A record is heard once an interval at best: keep it three
        // intervals (two repeats may be lost), however short the liveness
        // timeout, or a live export would flicker in and out of view.
        let liveness = liveness.max(channel.interval * 3);
        let uri = c_string(&channel.channel)?;
        let subscription = aeron
            .add_subscription(
                &uri,
                channel.stream_id,
                Handlers::NONE,
                Handlers::NONE,
                SETUP_TIMEOUT,
            )
            .map_err(|e| engine("announcement subscription", e))?;
        let publication = Arc::new(
            aeron
                .add_publication(&uri, channel.stream_id, SETUP_TIMEOUT)
                .map_err(|e| engine("announcement publication", e))?,
        );
        let state = Arc::new(State {
            own: Mutex::new(HashMap::new()),
            heard: Mutex::new(HashMap::new()),
            since: Instant::now(),
            stop: AtomicBool::new(false),
            next_id: AtomicU64::new(0),
        });
        let listener = {
            let state = Arc::clone(&state);
            let publication = Arc::clone(&publication);
            let interval = channel.interval;
            thread::Builder::new()
                .name("kaspar-aeron-announce".to_owned())
                .spawn(move || listen(&state, &publication, subscription, interval, liveness))
                .map_err(|e| LinkError::Transport(format!("announcement thread: {e}")))?
        };
        Ok(Registry {
            state,
            publication,
            listener: Some(listener),
            channel: channel.clone(),
            liveness,
        })
    }

    pub(crate) fn announce(&self, name: &str, record: &[u8]) -> Result<Announcement, LinkError> {
        let frame = encode(ANNOUNCE, name, record)?;
        let id = self.state.next_id.fetch_add(1, Ordering::Relaxed);
        lock(&self.state.own).insert(id, (name.to_owned(), record.to_vec()));
        // Best effort now; the listener repeats it every interval anyway.
        let _ = self.publication.offer(&frame);
        Ok(Announcement::new(Withdraw {
            state: Arc::clone(&self.state),
            publication: Arc::clone(&self.publication),
            id,
            withdrawal: encode(WITHDRAW, name, &[])?,
        }))
    }

    /// The freshest live record for `name`. The first call waits until the
    /// listener has heard one full round of repeats.
    pub(crate) fn discover(&self, name: &str) -> Option<Vec<u8>> {
        let warm = self.channel.interval * 2;
        let listened = self.state.since.elapsed();
        if listened < warm {
            thread::sleep(warm - listened);
        }
        let heard = lock(&self.state.heard);
        heard
            .get(name)
            .filter(|h| h.at.elapsed() <= self.liveness)
            .map(|h| h.record.clone())
    }
}

impl Drop for Registry {
    fn drop(&mut self) {
        self.state.stop.store(true, Ordering::Release);
        if let Some(listener) = self.listener.take() {
            let _ = listener.join();
        }
    }
}

/// Withdraws one record when the [`Announcement`] guard drops.
struct Withdraw {
    state: Arc<State>,
    publication: Arc<AeronPublication>,
    id: u64,
    withdrawal: Vec<u8>,
}

impl Drop for Withdraw {
    fn drop(&mut self) {
        lock(&self.state.own).remove(&self.id);
        // If this offer is refused, the record still ages out after the
        // liveness timeout in every listener.
        let _ = self.publication.offer(&self.withdrawal);
    }
}

/// The listener thread: repeats this process's records every `interval`,
/// reads everyone's, forgets what was not repeated within `liveness`.
fn listen(
    state: &State,
    publication: &AeronPublication,
    subscription: AeronSubscription,
    interval: Duration,
    liveness: Duration,
) {
    let tick = (interval / 4).clamp(Duration::from_millis(1), Duration::from_millis(50));
    let mut next_repeat = Instant::now();
    let mut frames = Vec::new();
    while !state.stop.load(Ordering::Acquire) {
        let now = Instant::now();
        if now >= next_repeat {
            next_repeat = now + interval;
            frames.clear();
            for (name, record) in lock(&state.own).values() {
                if let Ok(frame) = encode(ANNOUNCE, name, record) {
                    frames.push(frame);
                }
            }
            for frame in &frames {
                let _ = publication.offer(frame);
            }
        }
        let mut heard = lock(&state.heard);
        let read = subscription.poll_fn(
            |bytes: &[u8], header| {
                let session = header.session_id().unwrap_or(0);
                apply(&mut heard, bytes, session, now);
            },
            POLL_LIMIT,
        );
        heard.retain(|_, h| now.duration_since(h.at) <= liveness);
        drop(heard);
        if !matches!(read, Ok(n) if n > 0) {
            thread::sleep(tick);
        }
    }
}

/// Applies one record frame; malformed frames are ignored (another
/// program on the stream, or another version of this one).
fn apply(heard: &mut HashMap<String, Heard>, bytes: &[u8], session: i32, now: Instant) {
    let Some((kind, name, record)) = decode(bytes) else {
        return;
    };
    match kind {
        ANNOUNCE => {
            heard.insert(
                name.to_owned(),
                Heard {
                    record: record.to_vec(),
                    session,
                    at: now,
                },
            );
        }
        WITHDRAW if heard.get(name).is_some_and(|h| h.session == session) => {
            heard.remove(name);
        }
        _ => {}
    }
}

fn encode(kind: u8, name: &str, record: &[u8]) -> Result<Vec<u8>, LinkError> {
    let name_len = u16::try_from(name.len()).map_err(|_| {
        LinkError::Transport(format!("announced name is {} bytes long", name.len()))
    })?;
    let mut frame = Vec::with_capacity(3 + name.len() + record.len());
    frame.push(kind);
    frame.extend_from_slice(&name_len.to_le_bytes());
    frame.extend_from_slice(name.as_bytes());
    frame.extend_from_slice(record);
    Ok(frame)
}

fn decode(bytes: &[u8]) -> Option<(u8, &str, &[u8])> {
    let (&kind, rest) = bytes.split_first()?;
    let (len, rest) = rest.split_at_checked(2)?;
    let len = usize::from(u16::from_le_bytes([len[0], len[1]]));
    let (name, record) = rest.split_at_checked(len)?;
    Some((kind, std::str::from_utf8(name).ok()?, record))
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|e| e.into_inner())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_round_trip_and_bad_frames_are_ignored() {
        let frame = encode(ANNOUNCE, "desk", b"\x01\x02").unwrap();
        assert_eq!(decode(&frame), Some((ANNOUNCE, "desk", &b"\x01\x02"[..])));
        assert_eq!(decode(&frame[..4]), None);
        assert_eq!(decode(&[]), None);
        let mut heard = HashMap::new();
        let now = Instant::now();
        apply(&mut heard, &frame, 7, now);
        apply(&mut heard, &frame[..3], 7, now);
        assert_eq!(heard["desk"].record, b"\x01\x02");
        // A withdrawal from another session leaves the record alone.
        apply(&mut heard, &encode(WITHDRAW, "desk", &[]).unwrap(), 8, now);
        assert!(heard.contains_key("desk"));
        apply(&mut heard, &encode(WITHDRAW, "desk", &[]).unwrap(), 7, now);
        assert!(heard.is_empty());
    }
}
