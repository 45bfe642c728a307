//! Names through iceoryx2's own service discovery.
//!
//! Announcing `name` creates an event service `kaspar/name/<name>` whose
//! attributes carry the record (hex, in chunks of at most 128 bytes, plus
//! its length). The service lives as long as the announcing node holds it:
//! the [`Announcement`] guard drops it, and a dead process's service is
//! found dead (its only node is) and removed by the next `discover` or
//! `announce` of that name, or by any liveness monitor.

use std::time::{Duration, Instant};

use ::iceoryx2::config::Config as IceConfig;
use ::iceoryx2::prelude::*;
use ::iceoryx2::service::attribute::{AttributeKey, AttributeValue};
use ::iceoryx2::service::builder::event::EventCreateError;

use super::{service_name, Ipc};
use crate::link::{Announcement, LinkError};

const LEN_KEY: &str = "kaspar.record.len";
const CHUNK_KEY: &str = "kaspar.record";
/// Bytes per attribute value (256 hex digits, iceoryx2's value limit).
const CHUNK: usize = 128;
/// iceoryx2 allows 8 attributes per service: one for the length, seven
/// for the chunks.
pub(super) const MAX_RECORD_LEN: usize = 7 * CHUNK;

pub(super) fn announce(
    node: &Node<Ipc>,
    config: &IceConfig,
    name: &str,
    record: &[u8],
    patience: Duration,
) -> Result<Announcement, LinkError> {
    if record.len() > MAX_RECORD_LEN {
        return Err(LinkError::Transport(format!(
            "a record of {} bytes is longer than iceoryx2 discovery carries ({MAX_RECORD_LEN})",
            record.len()
        )));
    }
    let service = service_name("name", name)?;
    let mut spec = AttributeSpecifier::new()
        .define(&key(LEN_KEY)?, &value(&record.len().to_string())?)
        .map_err(attr_err)?;
    for chunk in record.chunks(CHUNK) {
        spec = spec
            .define(&key(CHUNK_KEY)?, &value(&hex(chunk))?)
            .map_err(attr_err)?;
    }
    let deadline = Instant::now() + patience;
    loop {
        let retry = match node
            .service_builder(&service)
            .event()
            .create_with_attributes(&spec)
        {
            Ok(factory) => return Ok(Announcement::new(factory)),
            // Taken, or held only by dead nodes: remove those (waiting for
            // whoever else is removing them) and try again.
            Err(EventCreateError::AlreadyExists) => {
                if live_details(&service, config, patience)?.is_some() {
                    return Err(LinkError::Transport(format!(
                        "the name {name:?} is already announced by a live process"
                    )));
                }
                "a dead process's announcement could not be removed"
            }
            Err(EventCreateError::IsBeingCreatedByAnotherInstance) => {
                "another process keeps announcing it"
            }
            Err(e) => {
                return Err(LinkError::Transport(format!(
                    "iceoryx2 cannot announce {name:?}: {e:?}"
                )))
            }
        };
        if Instant::now() >= deadline {
            return Err(LinkError::Transport(format!(
                "cannot announce {name:?} within {patience:?}: {retry}"
            )));
        }
        std::thread::sleep(Duration::from_millis(1));
    }
}

pub(super) fn discover(config: &IceConfig, name: &str) -> Result<Option<Vec<u8>>, LinkError> {
    let service = service_name("name", name)?;
    let Some(attributes) = live_details(&service, config, Duration::ZERO)? else {
        return Ok(None);
    };
    decode(&attributes).map(Some).ok_or_else(|| {
        LinkError::Transport(format!("the record announced as {name:?} is malformed"))
    })
}

/// The attributes of the named service if a live node holds it; removes
/// the resources of the dead nodes that hold it, waiting up to `wait` for
/// another cleaner of the same node (zero: not at all).
fn live_details(
    service: &ServiceName,
    config: &IceConfig,
    wait: Duration,
) -> Result<Option<AttributeSet>, LinkError> {
    let details = Ipc::details(service, config, MessagingPattern::Event)
        .map_err(|e| LinkError::Transport(format!("iceoryx2 discovery: {e:?}")))?;
    let Some(details) = details else {
        return Ok(None);
    };
    let mut live = false;
    for node in details.dynamic_details.map(|d| d.nodes).unwrap_or_default() {
        match node {
            NodeState::Alive(_) => live = true,
            // An error means someone else is removing it (past `wait`):
            // dead either way.
            NodeState::Dead(view) if wait.is_zero() => drop(view.try_remove_stale_resources()),
            NodeState::Dead(view) => drop(view.blocking_remove_stale_resources(wait)),
            NodeState::Inaccessible(_) | NodeState::Undefined(_) => {}
        }
    }
    Ok(live.then(|| details.static_details.attributes().clone()))
}

fn decode(attributes: &AttributeSet) -> Option<Vec<u8>> {
    let len_key = AttributeKey::try_from(LEN_KEY).ok()?;
    let chunk_key = AttributeKey::try_from(CHUNK_KEY).ok()?;
    let len: usize = attributes
        .key_value(&len_key, 0)?
        .to_string()
        .parse()
        .ok()?;
    let mut record = Vec::with_capacity(len);
    for i in 0..attributes.number_of_key_values(&chunk_key) {
        unhex(
            &attributes.key_value(&chunk_key, i)?.to_string(),
            &mut record,
        )?;
    }
    (record.len() == len).then_some(record)
}

fn key(k: &str) -> Result<AttributeKey, LinkError> {
    AttributeKey::try_from(k).map_err(|e| LinkError::Transport(format!("attribute key: {e:?}")))
}

fn value(v: &str) -> Result<AttributeValue, LinkError> {
    AttributeValue::try_from(v).map_err(|e| LinkError::Transport(format!("attribute value: {e:?}")))
}

fn attr_err(e: impl std::fmt::Debug) -> LinkError {
    LinkError::Transport(format!("iceoryx2 attributes: {e:?}"))
}

fn hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut s = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        s.push(DIGITS[usize::from(b >> 4)] as char);
        s.push(DIGITS[usize::from(b & 0xf)] as char);
    }
    s
}

fn unhex(s: &str, out: &mut Vec<u8>) -> Option<()> {
    let digit = |c: u8| (c as char).to_digit(16).map(|d| d as u8);
    let s = s.as_bytes();
    if !s.len().is_multiple_of(2) {
        return None;
    }
    for pair in s.chunks(2) {
        out.push(digit(pair[0])? << 4 | digit(pair[1])?);
    }
    Some(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hex_round_trips_every_byte() {
        let bytes: Vec<u8> = (0..=255).collect();
        let mut back = Vec::new();
        unhex(&hex(&bytes), &mut back).unwrap();
        assert_eq!(back, bytes);
        assert_eq!(unhex("abc", &mut Vec::new()), None);
        assert_eq!(unhex("zz", &mut Vec::new()), None);
    }
}
