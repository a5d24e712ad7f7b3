//! What only some executions record, behind one type parameter of the engine.
//!
//! Most executions of a search or a gate record nothing beside their verdict: no
//! timeline, no phase points. The [`Engine`] is
//! generic over an [`Observer`] that holds what they would record; [`Unobserved`] holds
//! nothing and answers every question with `None`, so that its engine's step loop has
//! none of the tests and none of the work compiled in. [`Observed`] holds it all, each
//! part on when the execution asks for it:
//! - the timeline ([`Timeline`]) of a traced execution ([`ExecConfig::trace`]);
//! - the phase points ([`PhasePoints`]) of a strategy that searches timing
//!   ([`crate::explore::Needs::timing`]) on a scenario that leaves the phase free.
//!
//! [`super::Runs`] keeps one engine of each kind and runs an execution on the observed
//! one only when it asks for one of these. An observer only records: nothing the
//! engine decides reads it (what a fault aims at is the faults' own, `faults`), so the
//! same schedule gives the same execution on either engine.

use crate::exec::{ExecConfig, Execution};

use super::phase::PhasePoints;
use super::timeline::Timeline;

/// What an engine records beyond the verdict. Implemented by [`Unobserved`] and
/// [`Observed`] alone.
pub(super) trait Observer: Sized + 'static {
    /// Nothing recorded.
    fn new() -> Self;

    /// Applies the configuration's settings (whether executions are traced).
    fn configure(&mut self, config: &ExecConfig);

    /// Starts an execution of `clients` clients. The phase points, when `phase_points`,
    /// are recorded into `out`'s buffer, taken emptied.
    fn begin(&mut self, out: &mut Execution, clients: usize, phase_points: bool);

    /// Hands what was recorded to `out` and keeps `out`'s old buffers, emptied, for the
    /// next execution.
    fn hand_over(&mut self, out: &mut Execution);

    /// The timeline, when the execution is traced.
    fn timeline(&mut self) -> Option<&mut Timeline>;

    /// The phase points, when the execution records them.
    fn phase_points(&mut self) -> Option<&mut PhasePoints>;

    /// True if a call has anything to record: one of the above is on.
    fn watches_calls(&self) -> bool;
}

/// Records nothing: the engine of executions that need nothing beside their verdict.
pub(super) struct Unobserved;

impl Observer for Unobserved {
    fn new() -> Self {
        Unobserved
    }

    fn configure(&mut self, config: &ExecConfig) {
        debug_assert!(!config.trace, "a traced execution runs observed");
    }

    fn begin(&mut self, _: &mut Execution, _: usize, phase_points: bool) {
        debug_assert!(!phase_points, "recorded only when observed");
    }

    fn hand_over(&mut self, out: &mut Execution) {
        out.trace.lines.clear();
        out.events.clear();
        out.key_states.clear();
        out.phase_points.clear();
    }

    fn timeline(&mut self) -> Option<&mut Timeline> {
        None
    }

    fn phase_points(&mut self) -> Option<&mut PhasePoints> {
        None
    }

    fn watches_calls(&self) -> bool {
        false
    }
}

/// Records what the execution asks for: its timeline, its phase points.
pub(super) struct Observed {
    /// Record the timeline ([`ExecConfig::trace`]).
    recording: bool,
    timeline: Timeline,
    phase: PhasePoints,
}

impl Observer for Observed {
    fn new() -> Self {
        Observed {
            recording: false,
            timeline: Timeline::default(),
            phase: PhasePoints::default(),
        }
    }

    fn configure(&mut self, config: &ExecConfig) {
        self.recording = config.trace;
    }

    fn begin(&mut self, out: &mut Execution, clients: usize, phase_points: bool) {
        if phase_points {
            self.phase.points = Some(emptied(&mut out.phase_points));
            self.phase.begin(clients);
        }
    }

    fn hand_over(&mut self, out: &mut Execution) {
        let timeline = &mut self.timeline;
        swap_emptied(&mut out.trace.lines, &mut timeline.trace.lines);
        swap_emptied(&mut out.events, &mut timeline.events);
        swap_emptied(&mut out.key_states, &mut timeline.key_states);
        timeline.clear();
        match self.phase.points.take() {
            Some(points) => out.phase_points = points,
            None => out.phase_points.clear(),
        }
        self.phase.repeating = false;
    }

    fn timeline(&mut self) -> Option<&mut Timeline> {
        self.recording.then_some(&mut self.timeline)
    }

    fn phase_points(&mut self) -> Option<&mut PhasePoints> {
        self.phase.points.is_some().then_some(&mut self.phase)
    }

    fn watches_calls(&self) -> bool {
        self.recording || self.phase.points.is_some()
    }
}
/// Hands `mine`, filled, to `theirs`, and keeps `theirs`'s buffer, emptied, for the next
/// execution: one swap per execution, the result's old content dropped as it comes back.
pub(super) fn swap_emptied<T>(theirs: &mut Vec<T>, mine: &mut Vec<T>) {
    std::mem::swap(theirs, mine);
    mine.clear();
}

/// `v`'s buffer, emptied, leaving an empty vector in its place.
fn emptied<T>(v: &mut Vec<T>) -> Vec<T> {
    let mut v = std::mem::take(v);
    v.clear();
    v
}
