//! The capture file: the exchange's packet stream, one record per packet
//! with its send time, in send order. The simulation replay takes each
//! datagram's bytes from it.

use std::fs::File;
use std::io::{self, BufWriter, Read, Write};
use std::path::Path;

/// The capture file: an 8-byte magic, then one record per packet:
/// `u32` LE payload length, `u64` LE send time (ns since the Unix epoch),
/// the packet bytes.
pub const CAPTURE_MAGIC: &[u8; 8] = b"KSPCAP01";

/// Writes a capture file.
#[derive(Debug)]
pub struct CaptureWriter {
    out: BufWriter<File>,
}

impl CaptureWriter {
    /// Creates (truncates) `path` and writes the magic.
    pub fn create(path: &Path) -> io::Result<Self> {
        let mut out = BufWriter::new(File::create(path)?);
        out.write_all(CAPTURE_MAGIC)?;
        Ok(CaptureWriter { out })
    }

    /// Appends one packet.
    pub fn record(&mut self, sent_ns: u64, packet: &[u8]) -> io::Result<()> {
        self.out.write_all(&(packet.len() as u32).to_le_bytes())?;
        self.out.write_all(&sent_ns.to_le_bytes())?;
        self.out.write_all(packet)
    }

    /// Flushes the file.
    pub fn finish(mut self) -> io::Result<()> {
        self.out.flush()
    }
}

/// Reads every record of a capture file: `(send time ns, packet bytes)`.
pub fn read_capture(path: &Path) -> io::Result<Vec<(u64, Vec<u8>)>> {
    let mut bytes = Vec::new();
    File::open(path)?.read_to_end(&mut bytes)?;
    let bad = |what: &str| io::Error::new(io::ErrorKind::InvalidData, what.to_string());
    if bytes.get(..8) != Some(&CAPTURE_MAGIC[..]) {
        return Err(bad("not a kaspar capture file"));
    }
    let mut at = 8;
    let mut out = Vec::new();
    while at < bytes.len() {
        let head = bytes
            .get(at..at + 12)
            .ok_or_else(|| bad("truncated record"))?;
        let len = u32::from_le_bytes(head[..4].try_into().expect("4 bytes")) as usize;
        let t = u64::from_le_bytes(head[4..].try_into().expect("8 bytes"));
        let body = bytes
            .get(at + 12..at + 12 + len)
            .ok_or_else(|| bad("truncated record"))?;
        out.push((t, body.to_vec()));
        at += 12 + len;
    }
    Ok(out)
}
