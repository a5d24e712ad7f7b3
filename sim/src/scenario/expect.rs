//! What a scenario expects: `pass`, or the invariants its run must find and those it may
//! find beside them.
//!
//! ```toml
//! [expect]
//! verdict = "eventlog.bytes"          # must be found (the headline)
//! also = ["eventlog.spins"]           # must be found too
//! may = ["eventlog.capacity"]         # may also appear; any other is a mismatch
//! ```
//!
//! A run is judged on every invariant any of its executions violated, not on the first
//! one found, so its verdict does not depend on where its seeds start.

use std::collections::BTreeMap;

/// The verdicts a scenario expects.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Expectation {
    /// Verdict labels the run must find, the headline first; empty: `pass`.
    pub must: Vec<String>,
    /// Labels that may also appear.
    pub may: Vec<String>,
    /// What must happen in at least one execution for a pass to mean something: a fault
    /// kind that fired (`faults.evict.injected`) or bit (`faults.evict.bit`), or a metric
    /// the model records that was above zero (`lock.overlap_ms`). A pass in which no
    /// execution met one of them is `vacuous`.
    pub sometimes: Vec<String>,
}

/// How a run's findings compare with an [`Expectation`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Judgement {
    /// True if the run found what was expected and nothing else.
    pub ok: bool,
    /// The verdict to show: the headline when as expected; else the first label found
    /// that was not allowed, or `pass` when an expected one was not found.
    pub got: String,
}

impl Expectation {
    /// The one-verdict form: `pass`, or one label that must be found and nothing else.
    pub fn single(verdict: &str) -> Expectation {
        Expectation {
            must: if verdict == "pass" {
                Vec::new()
            } else {
                vec![verdict.to_string()]
            },
            may: Vec::new(),
            sometimes: Vec::new(),
        }
    }

    /// The headline: the first label that must be found, or `pass`.
    pub fn headline(&self) -> &str {
        self.must.first().map_or("pass", String::as_str)
    }

    /// True once `found` holds every label that must be found (and one was expected): a
    /// run may stop there.
    pub fn satisfied_by(&self, found: &BTreeMap<String, u64>) -> bool {
        !self.must.is_empty() && self.must.iter().all(|m| found.contains_key(m))
    }

    /// Judges the labels a run found (each with the executions that showed it), and, for
    /// a pass, whether every `sometimes` condition was met in some execution (`met`: the
    /// executions that met each).
    pub fn judge(&self, found: &BTreeMap<String, u64>, met: &BTreeMap<String, u64>) -> Judgement {
        let j = self.judge_found(found);
        if j.ok && self.must.is_empty() && !self.unmet(met).is_empty() {
            return Judgement {
                ok: false,
                got: "vacuous".into(),
            };
        }
        j
    }

    /// The `sometimes` conditions no execution met.
    pub fn unmet<'a>(&'a self, met: &BTreeMap<String, u64>) -> Vec<&'a str> {
        self.sometimes
            .iter()
            .filter(|c| met.get(*c).is_none_or(|&n| n == 0))
            .map(String::as_str)
            .collect()
    }

    fn judge_found(&self, found: &BTreeMap<String, u64>) -> Judgement {
        let allowed = |l: &String| self.must.contains(l) || self.may.contains(l);
        if let Some(other) = found.keys().find(|l| !allowed(l)) {
            return Judgement {
                ok: false,
                got: other.clone(),
            };
        }
        if self.must.iter().all(|m| found.contains_key(m)) {
            return Judgement {
                ok: true,
                got: self.headline().to_string(),
            };
        }
        // Something expected is missing: show what was found, or pass.
        let got = found
            .keys()
            .next()
            .cloned()
            .unwrap_or_else(|| "pass".into());
        Judgement { ok: false, got }
    }

    /// As the table and reports write it: `eventlog.bytes (+ eventlog.spins; may:
    /// eventlog.capacity)`, or just the headline.
    pub fn describe(&self) -> String {
        let mut s = self.headline().to_string();
        if self.must.len() > 1 {
            s.push_str(&format!(" + {}", self.must[1..].join(" + ")));
        }
        if !self.may.is_empty() {
            s.push_str(&format!(" (may: {})", self.may.join(", ")));
        }
        s
    }
}

/// The `sometimes` conditions of a scenario: the ones it gives, checked; else, for a
/// `pass` with faults in its plan, that each kind of fault in it bit at least once.
pub(super) fn sometimes(
    e: &super::file::ExpectFile,
    plan: &crate::fault::FaultPlan,
    expect: &str,
) -> Result<Vec<String>, super::FieldError> {
    let kinds = || crate::fault::FaultKind::ALL.iter().map(|k| k.name());
    let Some(list) = &e.sometimes else {
        if expect != "pass" {
            return Ok(Vec::new());
        }
        return Ok(plan
            .rules
            .iter()
            .filter(|(_, r)| r.max > 0 && r.probability > 0.0)
            .map(|(k, _)| format!("faults.{}.bit", k.name()))
            .collect());
    };
    if expect != "pass" {
        return Err(super::FieldError::new(
            "expect.sometimes",
            Some(list.span()),
            "only a pass needs a danger that happened: a violation found shows one".to_string(),
        ));
    }
    for c in list.get_ref() {
        let bad = match c.strip_prefix("faults.") {
            Some(rest) => match rest.rsplit_once('.') {
                Some((kind, "bit" | "injected")) if kinds().any(|k| k == kind) => None,
                _ => Some(format!(
                    "{c:?}: a fault condition is faults.KIND.bit or faults.KIND.injected, KIND one of {}",
                    kinds().collect::<Vec<_>>().join(", ")
                )),
            },
            None if c.is_empty() || c.contains(char::is_whitespace) => Some(format!(
                "{c:?}: name a metric the model records, or faults.KIND.bit"
            )),
            None => None,
        };
        if let Some(message) = bad {
            return Err(super::FieldError::new(
                "expect.sometimes",
                Some(list.span()),
                message,
            ));
        }
    }
    Ok(list.get_ref().clone())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn found(labels: &[&str]) -> BTreeMap<String, u64> {
        labels.iter().map(|l| (l.to_string(), 1)).collect()
    }

    #[test]
    fn pass_expects_nothing_found() {
        let e = Expectation::single("pass");
        assert!(e.judge(&found(&[]), &found(&[])).ok);
        assert_eq!(e.judge(&found(&["a"]), &found(&[])).got, "a");
        assert!(!e.satisfied_by(&found(&[])));
    }

    #[test]
    fn every_must_is_needed_and_only_may_is_allowed_beside() {
        let e = Expectation {
            must: vec!["a".into(), "b".into()],
            may: vec!["c".into()],
            sometimes: Vec::new(),
        };
        let none = found(&[]);
        assert!(!e.judge(&found(&["a"]), &none).ok);
        assert!(!e.satisfied_by(&found(&["a", "c"])));
        let j = e.judge(&found(&["a", "b", "c"]), &none);
        assert!(j.ok && j.got == "a");
        assert_eq!(e.judge(&found(&["a", "b", "d"]), &none).got, "d");
        assert_eq!(e.judge(&found(&[]), &none).got, "pass");
        assert_eq!(e.describe(), "a + b (may: c)");
    }

    #[test]
    fn a_pass_whose_danger_never_happened_is_vacuous() {
        let e = Expectation {
            sometimes: vec!["faults.evict.bit".into()],
            ..Expectation::single("pass")
        };
        let none = found(&[]);
        assert_eq!(e.judge(&none, &none).got, "vacuous");
        let mut met = BTreeMap::new();
        met.insert("faults.evict.bit".to_string(), 0);
        assert_eq!(e.judge(&none, &met).got, "vacuous");
        met.insert("faults.evict.bit".to_string(), 3);
        assert!(e.judge(&none, &met).ok);
        // A violation is judged as before.
        assert_eq!(e.judge(&found(&["x"]), &met).got, "x");
    }
}
