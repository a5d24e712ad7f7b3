//! The tick-phase dimension of an exhaustive search: the classes of phases that give the
//! same executions, and two searches at different phases read as one.

use std::collections::BTreeSet;

/// Executions a search over tick-phase classes spends, when no cap on classes is given,
/// before it stops taking classes not yet searched (past the first [`PHASE_FLOOR`],
/// always searched): a proof whose classes are cheap covers all of them, and a costly
/// one ends in bounded time and says how far it got. Counted in executions, not time, so
/// the classes searched are the same on every machine.
pub const PHASE_BUDGET: u64 = 20_000;

/// Tick-phase classes searched, when there are as many, whatever [`PHASE_BUDGET`] says.
pub const PHASE_FLOOR: usize = 8;

/// What stopped a search over tick-phase classes before every class it knew of.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PhaseLimit {
    /// The cap on classes given (`[explore] phases`, `--max-phases`, `.max_phases(n)`).
    Classes(usize),
    /// [`PHASE_BUDGET`]: the searches so far took this many executions.
    Executions(u64),
}

/// The tick phases an exhaustive search covered.
///
/// Moving every tick edge changes an execution only where an edge crosses an instant at
/// which a call's result reads the server's clock (the engine records them:
/// [`Execution::phase_points`](crate::exec::Execution::phase_points)). Those instants cut
/// the second into classes of phases that give the same executions. The search starts at
/// phase 0, adds the instants each search met, and goes on at one phase of every class no
/// search has covered, in batches (a batch's phases shared by a pool of threads), until every
/// class known has been searched (new classes can appear only from executions some search
/// ran, so none is left), or the cap on classes or the budget of executions
/// ([`PHASE_BUDGET`]) is reached.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct PhaseCoverage {
    /// The scenario pins the phase (µs): only it was searched.
    pub pinned: Option<u32>,
    /// The phases searched (µs), one per class, in the order searched.
    pub searched: Vec<u32>,
    /// The classes the recorded instants make.
    pub classes: usize,
    /// True if every class was searched.
    pub all: bool,
    /// What stopped the search before every class known (not a counterexample).
    pub stopped: Option<PhaseLimit>,
}

impl PhaseCoverage {
    /// How the statement of a search names its phases: "tick phase pinned at 250 ms",
    /// "all 4 tick-phase classes (phases 0, 0.000401, 0.500101, 0.500501 s)", or
    /// "12 of at least 40 tick-phase classes found so far (…; the cap of 12 classes)":
    /// classes are found by searching, so one stopped early knows only a lower bound.
    pub fn describe(&self) -> String {
        if let Some(p) = self.pinned {
            return format!("tick phase pinned at {}", seconds(p));
        }
        let shown: Vec<String> = self.searched.iter().take(6).map(|&p| seconds(p)).collect();
        let more = if self.searched.len() > 6 { ", …" } else { "" };
        let list = format!("phases {}{more} s", shown.join(", "));
        let (k, n) = (self.searched.len(), self.classes);
        if self.all {
            let classes = if n == 1 {
                "the one tick-phase class".to_string()
            } else {
                format!("all {n} tick-phase classes")
            };
            format!("{classes} ({list})")
        } else if let Some(limit) = self.stopped {
            let limit = match limit {
                PhaseLimit::Classes(c) => format!("the cap of {c} classes"),
                PhaseLimit::Executions(e) => format!("the budget of {e} executions"),
            };
            format!("{k} of at least {n} tick-phase classes found so far ({list}; {limit})")
        } else {
            format!("{k} of {n} tick-phase classes known so far ({list}), searched in turn")
        }
    }
}

/// The tick-phase classes of a search that runs one class at a time, one whole search
/// per class, and learns the instants that cut them from its runs (`mcsim test
/// --exhaustive`, whose runs are a program's): phase 0 first, then, one by one, a phase
/// of a class no search covered, the farthest from every phase searched.
#[derive(Debug, Clone, Default)]
pub struct PhaseClasses {
    pub(super) points: BTreeSet<u32>,
    pub(super) searched: Vec<u32>,
}

impl PhaseClasses {
    /// Nothing searched yet: the first phase is 0.
    pub fn new() -> PhaseClasses {
        PhaseClasses::default()
    }

    /// Instants (µs into a second since the servers' boot) at which a run's outcome
    /// read the clock.
    pub fn met(&mut self, points: impl IntoIterator<Item = u32>) {
        self.points.extend(points);
    }

    /// The search at `phase` (µs) ended: every schedule there was run.
    pub fn searched(&mut self, phase: u32) {
        self.searched.push(phase);
    }

    /// The phase to search next: 0 first, then one of a class no search covered, or
    /// `None` once every class known was searched.
    pub fn next(&self) -> Option<u32> {
        if self.searched.is_empty() {
            return Some(0);
        }
        farthest(&self.points, &self.searched, 1).first().copied()
    }

    /// What the searches covered; `stopped`: what ended them before every class.
    pub fn coverage(&self, stopped: Option<PhaseLimit>) -> PhaseCoverage {
        let covered: BTreeSet<usize> = (self.searched.iter())
            .map(|&p| class_of(&self.points, p))
            .collect();
        let classes = (representatives(&self.points).into_iter())
            .map(|q| class_of(&self.points, q))
            .collect::<BTreeSet<_>>()
            .len();
        let all = covered.len() == classes;
        PhaseCoverage {
            pinned: None,
            searched: self.searched.clone(),
            classes,
            all,
            stopped: stopped.filter(|_| !all),
        }
    }
}

fn seconds(micros: u32) -> String {
    if micros == 0 {
        "0".into()
    } else {
        format!("0.{micros:06}")
    }
}

/// The class of phase `phase` µs among the `points`: with edges `phase + k s`, an instant
/// `f` µs into a second sees the tick advanced iff `f >= phase` (phase 0: edges at the
/// whole seconds, as phase 1 s). So phases with as many points below them are alike.
pub(super) fn class_of(points: &BTreeSet<u32>, phase: u32) -> usize {
    let q = if phase == 0 { 1_000_000 } else { phase };
    points.range(..q).count()
}

/// One phase of every class, the lowest of each (phase 0 stands for the last class).
pub(super) fn representatives(points: &BTreeSet<u32>) -> Vec<u32> {
    let mut out = vec![0];
    if points.first().is_none_or(|&f| f >= 1) {
        out.push(1);
    }
    out.extend(points.iter().map(|f| f + 1).filter(|&q| q < 1_000_000));
    out
}

/// Up to `n` phases of classes no phase in `searched` covers, each the farthest (around
/// the second) from every phase searched or taken before it; ties go to the earlier phase.
pub(super) fn farthest(points: &BTreeSet<u32>, searched: &[u32], n: usize) -> Vec<u32> {
    let mut taken: Vec<u32> = searched.to_vec();
    let mut out = Vec::new();
    for _ in 0..n {
        let covered: BTreeSet<usize> = taken.iter().map(|&p| class_of(points, p)).collect();
        let distance = |q: u32| {
            taken
                .iter()
                .map(|&p| {
                    let d = q.abs_diff(p);
                    d.min(1_000_000 - d)
                })
                .min()
                .unwrap_or(0)
        };
        let Some(next) = representatives(points)
            .into_iter()
            .filter(|&q| !covered.contains(&class_of(points, q)))
            .max_by_key(|&q| (distance(q), std::cmp::Reverse(q)))
        else {
            break;
        };
        taken.push(next);
        out.push(next);
    }
    out
}
