//! Whether a program is deterministic under a fixed schedule: a run and its replay
//! compared line by line, and the verdict when they differ (never a judgement of the
//! program's recipe).

use mcsim::trace::first_difference;

use super::{NOT_JUDGED, Outcome};

/// `run` gave another trace when its schedule was replayed: said so with where the two
/// differ, and not judged.
pub(super) fn not_deterministic(run: &str, difference: &str) -> (u8, &'static str) {
    outln!(
        "NOT DETERMINISTIC: {run} gave another trace when its schedule was replayed; not judged"
    );
    outln!("{difference}");
    (NOT_JUDGED, "not judged")
}

/// Where a run and its replay under the same schedule differ, if they do. A program that
/// exited non-zero in both may have exited at another point of its schedule (its exit is
/// not a step of the schedule): only what both traces hold is compared.
pub(super) fn diverges(run: &Outcome, replay: &Outcome) -> Option<String> {
    let (a, b) = (&run.trace, &replay.trace);
    if run.kind.1 && replay.kind.1 {
        // Both exited badly: the exit is no step of the schedule, so each trace is
        // compared up to where the program began to end (a participant's connection
        // closed before it said it was done), or up to the shorter one's end.
        let ending = |o: &Outcome| o.vanished.unwrap_or(o.trace.len());
        let n = ending(run).min(ending(replay)).min(a.len()).min(b.len());
        return shown_difference(&a[..n], &b[..n]);
    }
    shown_difference(a, b)
}

/// The first line where two traces differ, shown from both with the lines around it.
fn shown_difference(a: &[String], b: &[String]) -> Option<String> {
    let at = first_difference(a, b)?;
    let from = at.saturating_sub(4);
    let show = |trace: &[String]| -> String {
        (from..(at + 3).min(trace.len().max(at + 1)))
            .map(|i| {
                let mark = if i == at { ">" } else { " " };
                let line = trace.get(i).map_or("(no line)", String::as_str);
                format!("\n    {mark} {line}")
            })
            .collect()
    };
    Some(format!(
        "  line {} differs; the first run:{}\n  its replay:{}",
        at + 1,
        show(a),
        show(b)
    ))
}
