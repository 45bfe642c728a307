//! Maps keyed by the node's own 64-bit ids (sessions, ask correlations),
//! looked up once or twice per frame on the bridge's hot path.
//!
//! std's default hasher (SipHash) resists keys chosen to collide, and
//! costs tens of nanoseconds per lookup for it. These keys are not chosen
//! by an adversary in that sense: correlation ids are this node's own
//! counter, and a session id is a hash a peer draws at random (a peer on
//! the link is trusted with far more than the map's shape). So one
//! folded multiply spreads them over the buckets.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

/// A `HashMap` keyed by a node id, hashed with [`IdHasher`].
pub(crate) type IdMap<V> = HashMap<u64, V, BuildHasherDefault<IdHasher>>;

/// Hashes a `u64` with one folded 64x64→128-bit multiply: every input bit
/// reaches the low bits (the bucket) and the high bits (the control byte).
#[derive(Default, Clone, Copy)]
pub(crate) struct IdHasher(u64);

/// The golden-ratio constant, odd, so the multiply is a bijection.
const K: u64 = 0x9e37_79b9_7f4a_7c15;

impl Hasher for IdHasher {
    fn write(&mut self, bytes: &[u8]) {
        // Not used by `u64` keys; correct for any key all the same.
        for chunk in bytes.chunks(8) {
            let mut b = [0u8; 8];
            b[..chunk.len()].copy_from_slice(chunk);
            self.write_u64(u64::from_le_bytes(b));
        }
    }

    fn write_u64(&mut self, n: u64) {
        let m = u128::from(self.0 ^ n) * u128::from(K);
        self.0 = (m as u64) ^ ((m >> 64) as u64);
    }

    fn finish(&self) -> u64 {
        self.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::hash::BuildHasher;

    fn hash(n: u64) -> u64 {
        BuildHasherDefault::<IdHasher>::default().hash_one(n)
    }

    #[test]
    fn sequential_ids_spread_over_low_and_high_bits() {
        // 4096 consecutive correlation ids into 256 buckets (low byte) and
        // 128 control values (top 7 bits): no bucket may hold more than
        // four times its share.
        let (mut low, mut high) = ([0u32; 256], [0u32; 128]);
        for id in 1..=4096u64 {
            let h = hash(id);
            low[(h & 0xff) as usize] += 1;
            high[(h >> 57) as usize] += 1;
        }
        assert!(low.iter().all(|&c| c <= 4 * 16), "low bits: {low:?}");
        assert!(high.iter().all(|&c| c <= 4 * 32), "high bits: {high:?}");
    }

    #[test]
    fn a_map_keyed_by_ids_finds_what_it_holds() {
        let mut m = IdMap::default();
        for id in 0..10_000u64 {
            m.insert(id.wrapping_mul(0x1_0000_0001), id);
        }
        for id in 0..10_000u64 {
            assert_eq!(m.get(&id.wrapping_mul(0x1_0000_0001)), Some(&id));
        }
        assert_eq!(m.len(), 10_000);
    }
}
