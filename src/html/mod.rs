//! One self-contained HTML page for a suite run: the sortable suite table, each
//! counterexample as a swimlane timeline with its replay lines, sweeps as plots and
//! metrics as histograms. No network, no external script, style or font: it opens from
//! disk and from a CI artifact alike. The page checks itself when it loads (every link
//! has its target, every plot drew) and says so in `data-selfcheck` on `<html>`.

mod plot;
mod svg;
mod swimlane;

use std::collections::BTreeMap;
use std::fmt::Write as _;

use self::plot::Series;
use self::svg::num;
use mcsim::report::{Row, short_name as short};

pub use self::plot::{Series as PlotSeries, histogram, lines};
pub(crate) use self::svg::esc;
pub use self::swimlane::render as swimlane;

/// The page's style, for other pages drawn from the same parts (the findings report).
pub const CSS: &str = include_str!("page.css");
/// The page's script: sortable tables, copy buttons and the self-check.
pub const JS: &str = include_str!("page.js");

/// What the page's header says about the run.
#[derive(Debug, Clone, Default)]
pub struct Heading {
    /// `mcsim check`, `mcsim run scenarios/x.toml`, `mcsim merge`.
    pub title: String,
    /// Extra facts: jobs, shards, wall time.
    pub facts: Vec<String>,
}

/// An anchor name for a scenario.
fn anchor(scenario: &str) -> String {
    scenario
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect()
}

/// The whole page for `rows`.
pub fn page(heading: &Heading, rows: &[Row]) -> String {
    let failed = rows.iter().filter(|r| !r.ok()).count();
    let executions: u64 = rows.iter().map(|r| r.executions).sum();
    let mut s = String::with_capacity(64 * 1024);
    let _ = write!(
        s,
        "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><meta name=\"viewport\" content=\"width=device-width\"><title>{}</title><style>{CSS}</style></head><body>",
        esc(&heading.title)
    );
    s.push_str("<div id=\"selfcheck-broken\"></div><header>");
    let _ = write!(s, "<h1>{}</h1><p class=\"summary\">", esc(&heading.title));
    let _ = write!(
        s,
        "{} scenarios: <b class=\"ok\">{} as expected</b>, <b class=\"{}\">{failed} mismatched</b> · {} executions",
        rows.len(),
        rows.len() - failed,
        if failed > 0 { "bad" } else { "ok" },
        group(executions)
    );
    for f in &heading.facts {
        let _ = write!(s, " · {}", esc(f));
    }
    s.push_str("</p></header><main>");
    suite_table(&mut s, rows);
    findings(&mut s, rows);
    sweeps(&mut s, rows);
    metrics(&mut s, rows);
    let _ = writeln!(s, "</main><script>{JS}</script></body></html>");
    s
}

/// `1234567` as `1,234,567`.
fn group(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

fn suite_table(s: &mut String, rows: &[Row]) {
    s.push_str(
        "<h2 id=\"suite\">Scenarios</h2><table class=\"suite\"><thead><tr><th></th><th>scenario</th><th>expected</th><th>found</th><th>executions</th><th>ms</th><th>figures</th></tr></thead><tbody>",
    );
    for r in rows {
        let got = if r.error.is_some() { "error" } else { &r.got };
        let class = if r.ok() { "ok" } else { "fail" };
        let found = if r.timeline.is_some() || r.detail.is_some() {
            format!("<a href=\"#f-{}\">{}</a>", anchor(&r.scenario), esc(got))
        } else {
            esc(got)
        };
        let mut figure = esc(r.error.as_deref().unwrap_or(&r.numbers));
        if r.exhaustive.is_some() {
            figure.push_str(" <span class=\"pill\">exhaustive</span>");
        }
        if !r.coverage.is_empty() {
            let _ = write!(figure, "<br><small>{}</small>", esc(&r.coverage));
        }
        if !r.points.is_empty() {
            let _ = write!(figure, " <a href=\"#s-{}\">plots</a>", anchor(&r.scenario));
        }
        let _ = write!(
            s,
            "<tr class=\"{class}\"><td class=\"mark\">{}</td><td title=\"{}\">{}</td><td class=\"verdict\">{}</td><td class=\"verdict{}\">{found}</td><td class=\"num\" data-sort=\"{}\">{}</td><td class=\"num\" data-sort=\"{}\">{}</td><td class=\"figure\">{figure}</td></tr>",
            if r.ok() { "ok" } else { "FAIL" },
            esc(&r.file),
            esc(&r.scenario),
            esc(&r.expected),
            if got == "pass" { "" } else { " violation" },
            r.executions,
            group(r.executions),
            r.millis,
            group(r.millis),
        );
    }
    s.push_str("</tbody></table>");
}

fn findings(s: &mut String, rows: &[Row]) {
    let with: Vec<&Row> = rows
        .iter()
        .filter(|r| r.timeline.is_some() || r.detail.is_some())
        .collect();
    if with.is_empty() {
        return;
    }
    let _ = write!(
        s,
        "<h2 id=\"findings\">Counterexamples ({})</h2><p class=\"legend\">One lane per client, a box per call from the instant it was made to the instant the server ran it, its reply under it; the keys' states under the lanes<i style=\"background:#dafbe1\"></i>stored<i style=\"background:#f6f8fa\"></i>expired; ⚡ the world's faults; the red line is where the verdict fell. Time runs left to right, long gaps compressed (hover for exact instants).</p>",
        with.len()
    );
    for r in with {
        let class = if r.ok() {
            "finding"
        } else {
            "finding mismatch"
        };
        let _ = write!(
            s,
            "<article class=\"{class}\" id=\"f-{}\"><h3>{} — {} {}</h3>",
            anchor(&r.scenario),
            esc(&r.scenario),
            esc(&r.got),
            if r.ok() {
                "(as expected)".to_string()
            } else {
                format!("(expected {})", esc(&r.expected))
            }
        );
        if let Some(t) = &r.timeline {
            let _ = write!(s, "<p class=\"verdict-text\">{}</p>", esc(&t.verdict.text));
        }
        for line in &r.replays {
            let _ = write!(
                s,
                "<div class=\"replay\"><span class=\"what\">{}</span><code>{}</code><button class=\"copy\" type=\"button\">copy</button></div>",
                esc(&line.what),
                esc(&line.command)
            );
        }
        if let Some(t) = &r.timeline {
            if t.omitted > 0 {
                let _ = write!(
                    s,
                    "<p class=\"legend\">The last {} calls, up to the verdict ({} earlier ones left out; the text report below has them all).</p>",
                    t.calls.len(),
                    t.omitted
                );
            }
            if t.keys_omitted > 0 {
                let _ = write!(
                    s,
                    "<p class=\"legend\">The {} keys that changed last are drawn; {} more are left out.</p>",
                    t.keys.len(),
                    t.keys_omitted
                );
            }
            let _ = write!(s, "<div class=\"lanes\">{}</div>", swimlane::render(t));
        }
        if let Some(d) = &r.detail {
            let _ = write!(
                s,
                "<details><summary>the report as text</summary><pre class=\"trace\">{}</pre></details>",
                esc(&head_and_tail(d, 80, 200))
            );
        }
        s.push_str("</article>");
    }
}

/// The first `head` and last `tail` lines of `text`, with how many were left out.
fn head_and_tail(text: &str, head: usize, tail: usize) -> String {
    let lines: Vec<&str> = text.lines().collect();
    if lines.len() <= head + tail {
        return text.to_string();
    }
    format!(
        "{}\n… {} lines left out (mcsim replay prints them all) …\n{}",
        lines[..head].join("\n"),
        lines.len() - head - tail,
        lines[lines.len() - tail..].join("\n")
    )
}

/// A sweep point's values: `rate_per_s=5,phase_ms=250` as pairs.
fn point_values(point: &str) -> Vec<(String, String)> {
    point
        .split(',')
        .filter_map(|kv| kv.split_once('='))
        .map(|(k, v)| (k.trim().to_string(), v.trim().to_string()))
        .collect()
}

fn sweeps(s: &mut String, rows: &[Row]) {
    let swept: Vec<&Row> = rows.iter().filter(|r| !r.points.is_empty()).collect();
    if swept.is_empty() {
        return;
    }
    s.push_str("<h2 id=\"sweeps\">Sweeps</h2>");
    for r in swept {
        let _ = write!(
            s,
            "<h3 id=\"s-{}\">{}</h3><div class=\"plots\">",
            anchor(&r.scenario),
            esc(&r.scenario)
        );
        // The figures: the share of failing executions, then every metric's mean that is
        // not zero everywhere.
        let mut figures: Vec<(String, Vec<f64>)> = vec![(
            "failing executions (share)".into(),
            r.points
                .iter()
                .map(|p| p.failing() as f64 / p.executions.max(1) as f64)
                .collect(),
        )];
        let mut names: Vec<&String> = r.points.iter().flat_map(|p| p.metrics.keys()).collect();
        names.sort();
        names.dedup();
        for n in names {
            let ys: Vec<f64> = r
                .points
                .iter()
                .map(|p| p.metrics.get(n).copied().unwrap_or(0.0))
                .collect();
            if ys.iter().any(|y| *y != 0.0) {
                figures.push((format!("mean {}", short(n)), ys));
            }
        }
        let values: Vec<Vec<(String, String)>> =
            r.points.iter().map(|p| point_values(&p.point)).collect();
        let params: Vec<String> = values
            .first()
            .map(|v| v.iter().map(|(k, _)| k.clone()).collect())
            .unwrap_or_default();
        for (pi, param) in params.iter().enumerate() {
            // Only a numeric parameter makes an axis.
            let xs: Option<Vec<f64>> = values
                .iter()
                .map(|v| v.get(pi).and_then(|(_, x)| x.parse::<f64>().ok()))
                .collect();
            let Some(xs) = xs else { continue };
            for (figure, ys) in &figures {
                let mut series: BTreeMap<String, Series> = BTreeMap::new();
                for (i, v) in values.iter().enumerate() {
                    let others: Vec<String> = v
                        .iter()
                        .enumerate()
                        .filter(|(j, _)| *j != pi)
                        .map(|(_, (k, x))| format!("{}={x}", short(k)))
                        .collect();
                    let name = others.join(", ");
                    series
                        .entry(name.clone())
                        .or_insert_with(|| Series {
                            name,
                            points: Vec::new(),
                        })
                        .points
                        .push((xs[i], ys[i]));
                }
                let series: Vec<Series> = series.into_values().collect();
                let _ = write!(
                    s,
                    "<figure>{}<figcaption>{} against {}</figcaption></figure>",
                    plot::lines(figure, short(param), figure, &series),
                    esc(figure),
                    esc(short(param))
                );
            }
        }
        s.push_str("</div>");
    }
}

fn metrics(s: &mut String, rows: &[Row]) {
    let with: Vec<&Row> = rows.iter().filter(|r| !r.metrics.is_empty()).collect();
    if with.is_empty() {
        return;
    }
    s.push_str("<h2 id=\"metrics\">Metrics over executions</h2><p class=\"legend\">Each metric's distribution over every execution of the scenario (all points of a sweep together).</p>");
    for r in with {
        let _ = write!(
            s,
            "<details><summary>{} — {} metrics</summary><div class=\"plots\">",
            esc(&r.scenario),
            r.metrics.len()
        );
        for (name, m) in &r.metrics {
            let counts: Vec<(f64, u64)> = m.histogram.counts().collect();
            let title = format!(
                "{} · mean {} · min {} · max {}",
                short(name),
                num(m.mean),
                num(m.min),
                num(m.max)
            );
            let _ = write!(
                s,
                "<figure>{}<figcaption>{} over {} executions</figcaption></figure>",
                plot::histogram(&title, short(name), &counts),
                esc(name),
                group(m.count)
            );
        }
        s.push_str("</div></details>");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_are_grouped_and_points_split() {
        assert_eq!(group(1_234_567), "1,234,567");
        assert_eq!(group(12), "12");
        assert_eq!(
            point_values("params.rate_per_s=5,phase_ms=250"),
            vec![
                ("params.rate_per_s".to_string(), "5".to_string()),
                ("phase_ms".to_string(), "250".to_string())
            ]
        );
    }
}
