//! A small deterministic generator (SplitMix64) for the random histories the models' tests
//! hold their checks to: seeded, no thread RNG, the same draws on every machine.

/// Draws from a SplitMix64 stream seeded with its field.
pub(crate) struct Draw(pub(crate) u64);

impl Draw {
    /// A number below `n` (`n` > 0).
    pub(crate) fn below(&mut self, n: u64) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        (z ^ (z >> 31)) % n
    }
}
