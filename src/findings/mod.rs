//! The findings report: for every recipe family and variant, what its source claims,
//! whether the claim holds, how often and by how much it breaks, under which conditions,
//! its shrunk counterexample, and whether that counterexample breaks a real memcached
//! the same way.
//!
//! [`measure`] runs each scenario file at a fixed budget from its own seed, every
//! execution to its end, so a rate is a rate: [`interval::wilson`] gives its 95%
//! interval. A variant's verdict ([`verdict`]) comes from its scenarios: its plain one
//! (`family-variant`) and those adding a fault or a condition. `mcsim findings` writes
//! the result as Markdown ([`markdown`]), HTML ([`html`]) and JSON.

pub mod html;
pub mod interval;
pub mod markdown;
pub mod measure;
mod semantics;
pub mod text;
pub mod verdict;

use std::collections::BTreeMap;

use serde::Serialize;

pub use measure::{Budgets, ClientPoint, Measured, ScenarioFindings};
pub use semantics::{MODELLED, Modelled};
pub use verdict::{Agreement, Holding};

use mcsim::model::{Claim, Family};

/// One variant of a family, judged.
#[derive(Debug, Clone, Serialize)]
pub struct VariantFindings {
    /// The family.
    pub family: String,
    /// The variant.
    pub variant: String,
    /// What its source claims, if the family states it.
    #[serde(skip)]
    pub claim: Option<Claim>,
    /// mcsim's verdict.
    pub holding: Holding,
    /// How that compares with the source.
    pub agreement: Agreement,
    /// Its scenarios, plain one first.
    pub scenarios: Vec<ScenarioFindings>,
    /// The plain scenario at 2 to 16 clients (empty when it could not run so).
    pub clients: Vec<ClientPoint>,
    /// Why the client sweep did not run, if it did not.
    pub clients_error: Option<String>,
}

impl VariantFindings {
    /// The scenario it is judged plainly by.
    pub fn plain(&self) -> Option<&ScenarioFindings> {
        let all: Vec<&ScenarioFindings> = self.scenarios.iter().collect();
        verdict::plain(&self.family, &self.variant, &all)
    }

    /// The scenario whose numbers the summary shows: the plain one if it breaks, else
    /// the one that breaks most often.
    pub fn headline(&self) -> Option<&ScenarioFindings> {
        match self.plain() {
            Some(p) if p.breaks() || !self.scenarios.iter().any(|s| s.breaks()) => Some(p),
            _ => self
                .scenarios
                .iter()
                .filter(|s| s.breaks())
                .max_by(|a, b| rate(&a.total).total_cmp(&rate(&b.total))),
        }
    }

    /// The headline magnitude: the first of the claim's figures that the headline
    /// scenario recorded above zero (else the first it recorded at all).
    pub fn magnitude(&self) -> Option<&measure::Distribution> {
        let s = self.headline()?;
        let names = self.claim.map(|c| c.magnitude).unwrap_or(&[]);
        let recorded = || names.iter().filter_map(|n| s.total.distribution(n));
        recorded()
            .find(|d| d.max > 0.0)
            .or_else(|| recorded().next())
            .or_else(|| s.total.distributions.iter().find(|d| d.at_violation))
    }
}

/// A measured fraction of failing executions.
pub fn rate(m: &Measured) -> f64 {
    interval::fraction(m.failing, m.executions)
}

/// Every family, judged.
#[derive(Debug, Clone, Serialize)]
pub struct Findings {
    /// The command that made it.
    pub command: String,
    /// mcsim's version.
    pub version: String,
    /// The budgets.
    pub executions: u64,
    /// Per sweep point.
    pub point_executions: u64,
    /// Per client count.
    pub client_executions: u64,
    /// Families in the order given, each with its variants.
    pub variants: Vec<VariantFindings>,
    /// The memcached the counterexamples were confirmed on (`None`: not tried).
    pub memcached: Option<String>,
    /// Why confirmation did not run, when it did not.
    pub confirm_skipped: Option<String>,
}

impl Findings {
    /// Groups measured scenarios by family and variant (every variant of each family
    /// with a scenario, those without one as untested), and judges each.
    pub fn judge(
        families: &[&'static dyn Family],
        scenarios: Vec<ScenarioFindings>,
        mut clients: BTreeMap<(String, String), Result<Vec<ClientPoint>, String>>,
    ) -> Vec<VariantFindings> {
        let mut by_variant: BTreeMap<(String, String), Vec<ScenarioFindings>> = BTreeMap::new();
        for s in scenarios {
            by_variant
                .entry((s.recipe.clone(), s.variant.clone()))
                .or_default()
                .push(s);
        }
        let mut out = Vec::new();
        for f in families {
            if !by_variant.keys().any(|(family, _)| family == f.name()) {
                continue;
            }
            for v in f.variants() {
                let key = (f.name().to_string(), v.to_string());
                let mut scenarios = by_variant.remove(&key).unwrap_or_default();
                let plain_name = format!("{}-{v}", f.name());
                scenarios.sort_by_key(|s| (s.name != plain_name, s.sweep, s.name.clone()));
                let refs: Vec<&ScenarioFindings> = scenarios.iter().collect();
                let holding = verdict::holding(f.name(), v, &refs);
                let claim = f.claims().iter().find(|c| c.variant == v).copied();
                let (points, error) = match clients.remove(&key) {
                    Some(Ok(p)) => (p, None),
                    Some(Err(e)) => (Vec::new(), Some(e)),
                    None => (Vec::new(), None),
                };
                out.push(VariantFindings {
                    family: f.name().to_string(),
                    variant: v.to_string(),
                    agreement: verdict::agreement(claim.as_ref(), &holding),
                    claim,
                    holding,
                    scenarios,
                    clients: points,
                    clients_error: error,
                });
            }
        }
        out
    }

    /// Counterexamples confirmed on memcached, and those tried.
    pub fn confirmed(&self) -> (usize, usize) {
        text::confirmed(self.scenarios())
    }

    /// Every scenario of every variant.
    pub fn scenarios(&self) -> impl Iterator<Item = &ScenarioFindings> {
        self.variants.iter().flat_map(|v| v.scenarios.iter())
    }
}

/// Per swept field, each of its values with the executions and failures of the points
/// that had it: `(field, [(value, executions, failing)])`.
pub type Profile = Vec<(String, Vec<(String, u64, u64)>)>;

/// The [`Profile`] of a sweep's points, fields and values in the sweep's order: where it
/// starts to break.
pub fn profile(points: &[Measured]) -> Profile {
    let mut out: Profile = Vec::new();
    for p in points {
        for assignment in &p.point {
            let (field, value) = assignment.split_once('=').unwrap_or((assignment, ""));
            let at = match out.iter().position(|(f, _)| f == field) {
                Some(i) => i,
                None => {
                    out.push((field.to_string(), Vec::new()));
                    out.len() - 1
                }
            };
            let values = &mut out[at].1;
            match values.iter_mut().find(|(v, _, _)| v == value) {
                Some(row) => {
                    row.1 += p.executions;
                    row.2 += p.failing;
                }
                None => values.push((value.to_string(), p.executions, p.failing)),
            }
        }
    }
    out
}
