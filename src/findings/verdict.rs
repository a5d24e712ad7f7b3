//! A variant's verdict on its claim, from what its scenarios measured: it holds in
//! every scenario, breaks in its plain scenario, or holds only where the scenarios that
//! break it do not apply. And whether that agrees with what its source says.

use serde::Serialize;

use crate::findings::measure::ScenarioFindings;
use mcsim::model::Claim;

/// What mcsim found of a variant's claim.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub enum Holding {
    /// No execution of any of its scenarios broke it.
    Holds,
    /// Its plain scenario (no fault, no condition beyond the recipe's defaults) breaks.
    Broken,
    /// Its plain scenario holds; the named scenarios break it.
    OnlyWhenNot(Vec<String>),
    /// No scenario of it ran.
    Untested,
}

impl Holding {
    /// One word or phrase, for the summary table.
    pub fn word(&self) -> &'static str {
        match self {
            Holding::Holds => "holds",
            Holding::Broken => "broken",
            Holding::OnlyWhenNot(_) => "holds only under conditions",
            Holding::Untested => "untested",
        }
    }
}

/// How mcsim's finding compares with the source's word.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum Agreement {
    /// The source's word holds (a correct recipe holds, a broken one breaks).
    Confirmed,
    /// The source presents it as correct, and it breaks in its plain scenario.
    Refuted,
    /// The source presents it as correct; it holds only under conditions the source
    /// does not state.
    Refined,
    /// The source presents it as broken, yet no scenario broke it.
    NotReproduced,
    /// Nothing to compare: no claim, or no scenario.
    NoClaim,
}

impl Agreement {
    /// The phrase for the report.
    pub fn phrase(self) -> &'static str {
        match self {
            Agreement::Confirmed => "confirmed",
            Agreement::Refuted => "refuted",
            Agreement::Refined => "refined",
            Agreement::NotReproduced => "not reproduced",
            Agreement::NoClaim => "no claim",
        }
    }
}

/// The scenario a variant is judged plainly by: the one named `family-variant`, else
/// its first scenario that is not a sweep.
pub fn plain<'a>(
    family: &str,
    variant: &str,
    of: &[&'a ScenarioFindings],
) -> Option<&'a ScenarioFindings> {
    let name = format!("{family}-{variant}");
    of.iter()
        .find(|s| s.name == name)
        .or_else(|| of.iter().find(|s| !s.sweep && s.error.is_none()))
        .copied()
}

/// The verdict on a variant from its scenarios.
pub fn holding(family: &str, variant: &str, of: &[&ScenarioFindings]) -> Holding {
    let ran: Vec<&ScenarioFindings> = of.iter().filter(|s| s.error.is_none()).copied().collect();
    if ran.is_empty() {
        return Holding::Untested;
    }
    let breaking: Vec<String> = ran
        .iter()
        .filter(|s| s.breaks())
        .map(|s| s.name.clone())
        .collect();
    if breaking.is_empty() {
        return Holding::Holds;
    }
    match plain(family, variant, &ran) {
        Some(p) if p.breaks() => Holding::Broken,
        _ => Holding::OnlyWhenNot(breaking),
    }
}

/// How `holding` compares with `claim`.
pub fn agreement(claim: Option<&Claim>, holding: &Holding) -> Agreement {
    let Some(claim) = claim else {
        return Agreement::NoClaim;
    };
    match (claim.presented_as_correct, holding) {
        (_, Holding::Untested) => Agreement::NoClaim,
        (true, Holding::Holds) | (false, Holding::Broken) => Agreement::Confirmed,
        (true, Holding::Broken) => Agreement::Refuted,
        (true, Holding::OnlyWhenNot(_)) => Agreement::Refined,
        // Shown as broken: breaking only under conditions still confirms it.
        (false, Holding::OnlyWhenNot(_)) => Agreement::Confirmed,
        (false, Holding::Holds) => Agreement::NotReproduced,
    }
}
