//! What a recipe's source says about a variant: the claim the findings report judges.

/// A variant's claim, as its source states it, paraphrased: the findings report
/// (`mcsim findings`) runs every scenario of the variant and says whether it holds, is
/// broken, or holds only under conditions, and by how much it breaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Claim {
    /// The variant, by its name in scenario files.
    pub variant: &'static str,
    /// Where the claim comes from: the article and the recipe's name in it
    /// (`DS MCLock`), or `mcsim` for a fix the source does not give.
    pub source: &'static str,
    /// What the source says the recipe guarantees, in one sentence.
    pub says: &'static str,
    /// True when the source presents the recipe as correct; false when it shows it as
    /// the broken way (HL's "obvious but incorrect" lock).
    pub presented_as_correct: bool,
    /// The figures that say by how much it breaks, best first: metric names
    /// (`counter.lost`) or a violated invariant's numbers (`lock.exclusion.held_ms`).
    pub magnitude: &'static [&'static str],
}
