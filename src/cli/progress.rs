//! Progress bars on long runs and suites: shown on a terminal only, never when stderr is
//! redirected or `CI` is set (a CI log wants the result lines, not redraws).

use std::io::IsTerminal as _;
use std::time::Duration;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// Units per second, whole: `380721/s`.
fn rate(state: &indicatif::ProgressState, w: &mut dyn std::fmt::Write) {
    let _ = write!(w, "{:.0}/s", state.per_sec());
}

/// True when a bar may be drawn: stderr is a terminal and `CI` is not set.
pub(crate) fn wanted() -> bool {
    std::io::stderr().is_terminal() && std::env::var_os("CI").is_none()
}

/// A bar of `len` units (`executions`, `scenarios`), hidden where bars are not wanted.
pub(crate) fn bar(len: u64, unit: &str) -> ProgressBar {
    if !wanted() {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::with_draw_target(Some(len), ProgressDrawTarget::stderr_with_hz(8));
    let template = format!(
        "{{bar:32.cyan/blue}} {{human_pos}}/{{human_len}} {unit} · {{rate}} · ETA {{eta}} {{msg}}"
    );
    if let Ok(style) = ProgressStyle::with_template(&template) {
        bar.set_style(style.with_key("rate", rate).progress_chars("█▉▊▋▌▍▎▏ "));
    }
    bar.enable_steady_tick(Duration::from_millis(250));
    bar
}

/// A counter without a known end (an exhaustive search), hidden likewise.
pub(crate) fn spinner(unit: &str) -> ProgressBar {
    if !wanted() {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr_with_hz(8));
    let template = format!("{{spinner}} {{human_pos}} {unit} · {{rate}} · {{elapsed}} {{msg}}");
    if let Ok(style) = ProgressStyle::with_template(&template) {
        bar.set_style(style.with_key("rate", rate));
    }
    bar.enable_steady_tick(Duration::from_millis(250));
    bar
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_bar_when_ci_is_set_or_stderr_is_not_a_terminal() {
        // Under `cargo test` stderr is captured (not a terminal), and CI sets CI.
        assert!(!wanted());
        assert!(bar(10, "executions").is_hidden());
    }
}
