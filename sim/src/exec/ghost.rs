//! Fingerprints of a model's ghost state: the bookkeeping a harness keeps beside the
//! servers (who is inside the critical section, how many increments completed), hashed
//! so the explorer can tell two states apart, or know them for the same.
//!
//! The hash is FNV-1a over what the model feeds it, taken a word at a time for integers
//! and eight bytes at a time for byte strings: stable across runs, machines and Rust
//! versions (std's `DefaultHasher` promises none of that), and cheap enough to run at
//! every choice point of an exhaustive search.

use std::hash::Hasher;

/// A 64-bit FNV-1a-style [`Hasher`] a model feeds its ghost state to
/// ([`crate::Sim::ghost`]). Its value depends only on what is written, in order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Fingerprint(u64);

impl Default for Fingerprint {
    fn default() -> Fingerprint {
        Fingerprint(0xcbf2_9ce4_8422_2325)
    }
}

impl Fingerprint {
    /// Continues a fingerprint from a value [`Hasher::finish`] returned.
    pub(crate) fn resume(state: u64) -> Fingerprint {
        Fingerprint(state)
    }
}

const PRIME: u64 = 0x0100_0000_01b3;

impl Fingerprint {
    fn mix(&mut self, word: u64) {
        // FNV's xor-multiply on a whole word, with a rotation so high bits reach low ones.
        self.0 = (self.0 ^ word).wrapping_mul(PRIME).rotate_left(23);
    }
}

impl Hasher for Fingerprint {
    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for c in &mut chunks {
            self.mix(u64::from_le_bytes(c.try_into().expect("eight bytes")));
        }
        let rest = chunks.remainder();
        let mut last = [0u8; 8];
        last[..rest.len()].copy_from_slice(rest);
        // The length keeps "ab" + "c" apart from "a" + "bc".
        self.mix(u64::from_le_bytes(last) ^ ((bytes.len() as u64) << 56));
    }

    fn write_u8(&mut self, i: u8) {
        self.mix(u64::from(i));
    }

    fn write_u16(&mut self, i: u16) {
        self.mix(u64::from(i));
    }

    fn write_u32(&mut self, i: u32) {
        self.mix(u64::from(i));
    }

    fn write_u64(&mut self, i: u64) {
        self.mix(i);
    }

    fn write_usize(&mut self, i: usize) {
        self.mix(i as u64);
    }

    fn finish(&self) -> u64 {
        self.0
    }
}

/// What a model registers: feeds its ghost state to the fingerprint.
pub(crate) type GhostHash = Box<dyn Fn(&mut Fingerprint)>;

/// One client's ghost state, fed to a fingerprint ([`crate::Sim::symmetric`]).
pub(crate) type ClientGhostHash = Box<dyn Fn(usize, &mut Fingerprint)>;

/// The fingerprint of every registered ghost, in registration order.
pub(crate) fn fingerprint(ghosts: &[GhostHash]) -> u64 {
    let mut h = Fingerprint::default();
    for ghost in ghosts {
        ghost(&mut h);
    }
    h.finish()
}

#[cfg(test)]
mod tests {
    use std::hash::Hash;

    use super::*;

    #[test]
    fn the_same_state_gives_the_same_fingerprint_and_another_differs() {
        let of = |n: u32, who: &[usize]| {
            let (who, n) = (who.to_vec(), n);
            let ghosts: Vec<GhostHash> = vec![
                Box::new(move |h: &mut Fingerprint| n.hash(h)),
                Box::new(move |h: &mut Fingerprint| who.hash(h)),
            ];
            fingerprint(&ghosts)
        };
        assert_eq!(of(2, &[0, 1]), of(2, &[0, 1]));
        assert_ne!(of(2, &[0, 1]), of(2, &[1, 0]));
        assert_ne!(of(2, &[0, 1]), of(3, &[0, 1]));
        // FNV-1a of nothing is its offset basis: no run-dependent seed.
        assert_eq!(fingerprint(&[]), 0xcbf2_9ce4_8422_2325);
    }
}
