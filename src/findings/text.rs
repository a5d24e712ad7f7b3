//! The report's wording, shared by its Markdown and HTML forms: what each cell and
//! sentence says, before either form marks it up.

use super::interval::percent;
use super::measure::{Distribution, ScenarioFindings};
use super::{Findings, Holding, VariantFindings};
use mcsim::model::Claim;

/// `N of M counterexamples confirmed on memcached 1.6.18`, or why it was not tried.
pub fn confirm_line(f: &Findings) -> String {
    let (ok, n) = f.confirmed();
    match (&f.memcached, &f.confirm_skipped) {
        (Some(version), _) => {
            format!("{ok} of {n} counterexamples confirmed on memcached {version}")
        }
        (None, Some(why)) => format!("Counterexamples not confirmed on memcached: {why}."),
        (None, None) => "Counterexamples not confirmed on memcached.".into(),
    }
}

/// Of `scenarios`, those confirmed on memcached and those tried.
pub fn confirmed<'a>(scenarios: impl Iterator<Item = &'a ScenarioFindings>) -> (usize, usize) {
    let (mut ok, mut tried) = (0, 0);
    for s in scenarios.filter(|s| s.confirmed.is_some()) {
        tried += 1;
        ok += usize::from(matches!(s.confirmed, Some(Ok(_))));
    }
    (ok, tried)
}

/// How the source presents a recipe, as a sentence.
pub fn stance(c: &Claim) -> &'static str {
    if c.presented_as_correct {
        "The source presents it as correct."
    } else {
        "The source presents it as broken."
    }
}

impl VariantFindings {
    /// The claim in one cell: `source: what it says`.
    pub fn claim_text(&self) -> String {
        self.claim
            .map(|c| format!("{}: {}", c.source, c.says))
            .unwrap_or_else(|| "(none stated)".into())
    }

    /// The verdict, naming the scenarios that break a conditional one.
    pub fn verdict_text(&self) -> String {
        match &self.holding {
            Holding::OnlyWhenNot(breaking) => format!(
                "holds in its plain scenario; broken in {}",
                breaking.join(", ")
            ),
            other => other.word().to_string(),
        }
    }

    /// The headline scenario's rate and name: `74.6% (71.8–77.2%) in lock-get-set`.
    pub fn rate_text(&self) -> String {
        self.headline()
            .map(|h| {
                format!(
                    "{} in {}",
                    percent(h.total.failing, h.total.executions),
                    h.name
                )
            })
            .unwrap_or_else(|| "–".into())
    }

    /// The headline magnitude, when the headline scenario breaks.
    pub fn magnitude_text(&self) -> String {
        self.magnitude()
            .filter(|_| self.headline().is_some_and(ScenarioFindings::breaks))
            .map(|d| format!("{}: {}", d.name, d.brief()))
            .unwrap_or_else(|| "–".into())
    }

    /// Its counterexamples confirmed on memcached: `2 of 3`, or `–`.
    pub fn confirmed_text(&self) -> String {
        match confirmed(self.scenarios.iter()) {
            (_, 0) => "–".into(),
            (ok, tried) => format!("{ok} of {tried}"),
        }
    }

    /// The distributions that say by how much it breaks, with their scenario: the
    /// claim's figures (or, without any, every violation's numbers) in each scenario that
    /// breaks, leaving out a figure that is zero in every execution (it says nothing of
    /// that scenario: `set.lost` where the loss is undone before the end).
    pub fn shown_magnitudes(&self) -> Vec<(&ScenarioFindings, &Distribution)> {
        let names = self.claim.map(|c| c.magnitude).unwrap_or(&[]);
        let mut out = Vec::new();
        for sc in self.scenarios.iter().filter(|sc| sc.breaks()) {
            for d in &sc.total.distributions {
                let wanted =
                    names.contains(&d.name.as_str()) || (names.is_empty() && d.at_violation);
                if wanted && d.count > 0 && d.max > 0.0 {
                    out.push((sc, d));
                }
            }
        }
        out
    }
}

/// A swept field's values with their rates: `0.5: 78.4% (75.4–81.1%); 2: …`.
pub fn value_rates(values: &[(String, u64, u64)]) -> String {
    let cells: Vec<String> = values
        .iter()
        .map(|(v, n, k)| format!("{v}: {}", percent(*k, *n)))
        .collect();
    cells.join("; ")
}
