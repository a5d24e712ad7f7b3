//! SVG plots: a figure against a swept parameter (one series per value of the other
//! parameters), and a metric's histogram over executions.

use std::fmt::Write as _;

use super::svg::{PALETTE, cut, esc, num};

const W: f64 = 420.0;
const H: f64 = 250.0;
const L: f64 = 56.0;
const R: f64 = 14.0;
const T: f64 = 26.0;
const B: f64 = 42.0;

/// About `n` round tick values covering `[lo, hi]`.
fn ticks(lo: f64, hi: f64, n: usize) -> Vec<f64> {
    if hi <= lo || !hi.is_finite() || !lo.is_finite() {
        return vec![lo];
    }
    let raw = (hi - lo) / n.max(1) as f64;
    let mag = 10f64.powf(raw.log10().floor());
    let step = [1.0, 2.0, 2.5, 5.0, 10.0]
        .iter()
        .map(|m| m * mag)
        .find(|s| *s >= raw)
        .unwrap_or(10.0 * mag);
    let mut out = Vec::new();
    let mut v = (lo / step).ceil() * step;
    while v <= hi + step * 1e-9 {
        out.push(if v.abs() < step * 1e-9 { 0.0 } else { v });
        v += step;
    }
    out
}

/// The frame of a plot: title, axes with ticks, labels; returns the SVG so far and the
/// maps from data to pixels.
struct Frame {
    svg: String,
    x: (f64, f64),
    y: (f64, f64),
}

impl Frame {
    fn new(title: &str, x_label: &str, y_label: &str, x: (f64, f64), y: (f64, f64)) -> Frame {
        let x = if x.1 > x.0 { x } else { (x.0 - 1.0, x.0 + 1.0) };
        let y = if y.1 > y.0 {
            y
        } else {
            (y.0.min(0.0), y.0.max(0.0) + 1.0)
        };
        let mut f = Frame {
            svg: String::new(),
            x,
            y,
        };
        let _ = write!(
            f.svg,
            r##"<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" viewBox="0 0 {W} {H}" role="img" aria-label="{}"><rect width="{W}" height="{H}" fill="#fff"/><text x="{:.0}" y="16" font-size="12.5" font-weight="600" text-anchor="middle" fill="#1f2328">{}</text>"##,
            esc(title),
            W / 2.0,
            esc(&cut(title, 62))
        );
        for v in ticks(y.0, y.1, 5) {
            let py = f.py(v);
            let _ = write!(
                f.svg,
                r##"<line x1="{L}" y1="{py:.1}" x2="{:.0}" y2="{py:.1}" stroke="#eaeef2"/><text x="{:.0}" y="{:.1}" font-size="10" text-anchor="end" fill="#6e7781">{}</text>"##,
                W - R,
                L - 5.0,
                py + 3.5,
                num(v)
            );
        }
        for v in ticks(x.0, x.1, 6) {
            let px = f.px(v);
            let _ = write!(
                f.svg,
                r##"<line x1="{px:.1}" y1="{:.0}" x2="{px:.1}" y2="{:.0}" stroke="#8c959f"/><text x="{px:.1}" y="{:.0}" font-size="10" text-anchor="middle" fill="#6e7781">{}</text>"##,
                H - B,
                H - B + 4.0,
                H - B + 15.0,
                num(v)
            );
        }
        let _ = write!(
            f.svg,
            r##"<line x1="{L}" y1="{:.0}" x2="{:.0}" y2="{:.0}" stroke="#8c959f"/><line x1="{L}" y1="{T}" x2="{L}" y2="{:.0}" stroke="#8c959f"/><text x="{:.0}" y="{:.0}" font-size="11" text-anchor="middle" fill="#424a53">{}</text><text transform="translate(13 {:.0}) rotate(-90)" font-size="11" text-anchor="middle" fill="#424a53">{}</text>"##,
            H - B,
            W - R,
            H - B,
            H - B,
            (L + W - R) / 2.0,
            H - 8.0,
            esc(x_label),
            (T + H - B) / 2.0,
            esc(&cut(y_label, 34))
        );
        f
    }

    fn px(&self, v: f64) -> f64 {
        L + (v - self.x.0) / (self.x.1 - self.x.0) * (W - L - R)
    }

    fn py(&self, v: f64) -> f64 {
        H - B - (v - self.y.0) / (self.y.1 - self.y.0) * (H - B - T)
    }
}

/// One line of a line chart: its name and points.
pub struct Series {
    /// The legend's text (the other parameters' values).
    pub name: String,
    /// `(x, y)` points, in any order.
    pub points: Vec<(f64, f64)>,
}

/// A line chart of `series` against `x_label`.
pub fn lines(title: &str, x_label: &str, y_label: &str, series: &[Series]) -> String {
    let all = || series.iter().flat_map(|s| s.points.iter());
    let (mut x0, mut x1, mut y1) = (f64::INFINITY, f64::NEG_INFINITY, f64::NEG_INFINITY);
    let mut y0: f64 = 0.0;
    for &(x, y) in all() {
        x0 = x0.min(x);
        x1 = x1.max(x);
        y0 = y0.min(y);
        y1 = y1.max(y);
    }
    if !x0.is_finite() {
        (x0, x1, y1) = (0.0, 1.0, 1.0);
    }
    let mut f = Frame::new(title, x_label, y_label, (x0, x1), (y0, y1 * 1.05));
    for (i, s) in series.iter().enumerate() {
        let colour = PALETTE[i % PALETTE.len()];
        let mut points = s.points.clone();
        points.sort_by(|a, b| a.0.total_cmp(&b.0));
        let path: Vec<String> = points
            .iter()
            .map(|&(x, y)| format!("{:.1},{:.1}", f.px(x), f.py(y)))
            .collect();
        let _ = write!(
            f.svg,
            r#"<polyline points="{}" fill="none" stroke="{colour}" stroke-width="2"/>"#,
            path.join(" ")
        );
        for &(x, y) in &points {
            let _ = write!(
                f.svg,
                r#"<circle cx="{:.1}" cy="{:.1}" r="3" fill="{colour}"><title>{}: {} = {}</title></circle>"#,
                f.px(x),
                f.py(y),
                esc(&s.name),
                num(x),
                num(y)
            );
        }
        if series.len() > 1 && !s.name.is_empty() {
            // The legend, right-aligned in the top corner, a line per series.
            let ly = T + 8.0 + 12.0 * i as f64;
            let _ = write!(
                f.svg,
                r##"<text x="{:.0}" y="{:.0}" font-size="10" text-anchor="end" fill="{colour}" stroke="#fff" stroke-width="3" paint-order="stroke">— {}</text>"##,
                W - R - 2.0,
                ly,
                esc(&cut(&s.name, 40))
            );
        }
    }
    f.svg.push_str("</svg>");
    f.svg
}

/// Bars drawn at most.
const MAX_BARS: usize = 40;

/// A histogram of `(value, count)` pairs: one bar per value when there are few, else
/// values grouped into equal-width bins.
pub fn histogram(title: &str, x_label: &str, counts: &[(f64, u64)]) -> String {
    let lo = counts.first().map_or(0.0, |c| c.0);
    let hi = counts.last().map_or(1.0, |c| c.0);
    let bars: Vec<(f64, f64, u64)> = if counts.len() <= MAX_BARS {
        let gap = counts
            .windows(2)
            .map(|w| w[1].0 - w[0].0)
            .fold(f64::INFINITY, f64::min);
        let half = if gap.is_finite() { gap * 0.4 } else { 0.4 };
        counts
            .iter()
            .map(|&(v, c)| (v - half, v + half, c))
            .collect()
    } else {
        let width = (hi - lo) / MAX_BARS as f64;
        let mut bins = vec![0u64; MAX_BARS];
        for &(v, c) in counts {
            let i = (((v - lo) / width) as usize).min(MAX_BARS - 1);
            bins[i] += c;
        }
        bins.iter()
            .enumerate()
            .map(|(i, &c)| {
                let a = lo + width * i as f64;
                (a, a + width, c)
            })
            .collect()
    };
    let top = bars.iter().map(|b| b.2).max().unwrap_or(1) as f64;
    let x = (
        bars.first().map_or(0.0, |b| b.0),
        bars.last().map_or(1.0, |b| b.1),
    );
    let mut f = Frame::new(title, x_label, "executions", x, (0.0, top * 1.08));
    for &(a, b, c) in &bars {
        let (x0, x1) = (f.px(a), f.px(b));
        let y = f.py(c as f64);
        let _ = write!(
            f.svg,
            r##"<rect x="{x0:.1}" y="{y:.1}" width="{:.1}" height="{:.1}" fill="#54aeff" stroke="#0969da"><title>{}…{}: {c}</title></rect>"##,
            (x1 - x0 - 1.0).max(1.0),
            (H - B - y).max(0.0),
            num(a),
            num(b)
        );
    }
    f.svg.push_str("</svg>");
    f.svg
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ticks_are_round_and_cover_the_range() {
        assert_eq!(ticks(0.0, 10.0, 5), vec![0.0, 2.0, 4.0, 6.0, 8.0, 10.0]);
        let t = ticks(0.3, 0.9, 4);
        assert!(t.first().is_some_and(|v| *v >= 0.3) && t.last().is_some_and(|v| *v <= 0.9));
    }

    #[test]
    fn a_line_chart_has_a_line_per_series_and_a_dot_per_point() {
        let series = [
            Series {
                name: "phase_ms=0".into(),
                points: vec![(1.0, 0.0), (2.0, 0.5), (5.0, 1.0)],
            },
            Series {
                name: "phase_ms=500".into(),
                points: vec![(1.0, 0.1), (2.0, 0.2)],
            },
        ];
        let svg = lines("shift", "rate_per_s", "mean shift (s)", &series);
        assert_eq!(svg.matches("<polyline").count(), 2);
        assert_eq!(svg.matches("<circle").count(), 5);
        assert!(svg.contains("phase_ms=500"));
    }

    #[test]
    fn a_histogram_bins_many_values_and_not_few() {
        let few = histogram("lost", "lost", &[(0.0, 10), (1.0, 5), (2.0, 1)]);
        assert_eq!(few.matches("<rect x").count(), 3);
        let many: Vec<(f64, u64)> = (0..1000).map(|i| (f64::from(i), 1)).collect();
        let binned = histogram("shift", "s", &many);
        assert_eq!(binned.matches("<rect x").count(), MAX_BARS);
    }
}
