//! A counterexample as an SVG swimlane: one lane per client with a box per call (from the
//! instant the client made it to the instant the server ran it, its reply under it), the
//! keys' states as strips under the lanes, the world's faults and the verdict as vertical
//! marks across everything.
//!
//! Virtual time runs left to right, compressed: the gap between two consecutive instants
//! is drawn by the logarithm of its length, so a 100 µs race and a 60 s expiry are both
//! readable in one picture. Each instant keeps its label on the axis.

use std::fmt::Write as _;

use super::svg::{chars_in, cut, esc, time};
use mcsim::report::timeline::Timeline;

const LEFT: f64 = 120.0;
const TOP: f64 = 34.0;
const LANE: f64 = 50.0;
const STRIP: f64 = 26.0;
const RIGHT: f64 = 40.0;

/// Maps virtual instants to x positions, gaps drawn by their logarithm.
struct Axis {
    instants: Vec<u64>,
    xs: Vec<f64>,
}

impl Axis {
    fn new(mut instants: Vec<u64>) -> Axis {
        instants.sort_unstable();
        instants.dedup();
        let mut xs = Vec::with_capacity(instants.len());
        let mut x = LEFT + 12.0;
        for (i, t) in instants.iter().enumerate() {
            if i > 0 {
                let gap = (t - instants[i - 1]) as f64;
                x += 44.0 + 26.0 * (1.0 + gap / 100.0).log10();
            }
            xs.push(x);
        }
        Axis { instants, xs }
    }

    fn x(&self, t: u64) -> f64 {
        match self.instants.binary_search(&t) {
            Ok(i) => self.xs[i],
            Err(0) => self.xs.first().copied().unwrap_or(LEFT),
            Err(i) if i >= self.instants.len() => self.xs.last().copied().unwrap_or(LEFT),
            Err(i) => {
                let (t0, t1) = (self.instants[i - 1], self.instants[i]);
                let f = (t - t0) as f64 / (t1 - t0) as f64;
                self.xs[i - 1] + f * (self.xs[i] - self.xs[i - 1])
            }
        }
    }

    fn end(&self) -> f64 {
        self.xs.last().copied().unwrap_or(LEFT)
    }
}

/// The swimlane of a timeline, as an `<svg>` element.
pub fn render(t: &Timeline) -> String {
    let mut instants = vec![t.from_us, t.end_us, t.verdict.at_us];
    for c in &t.calls {
        instants.extend([c.issued_us, c.at_us]);
    }
    instants.extend(t.faults.iter().map(|f| f.at_us));
    for k in &t.keys {
        for s in &k.states {
            instants.push(s.from_us);
            if let Some(e) = s.expires_us.filter(|e| *e <= t.end_us) {
                instants.push(e);
            }
        }
    }
    let axis = Axis::new(instants);
    let lanes_bottom = TOP + LANE * t.clients as f64;
    let height = lanes_bottom + 8.0 + STRIP * t.keys.len() as f64 + 42.0;
    let width = (axis.end() + RIGHT + 160.0).max(LEFT + 560.0);
    let mut s = String::new();
    let _ = write!(
        s,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{width:.0}" height="{height:.0}" viewBox="0 0 {width:.0} {height:.0}" role="img" aria-label="timeline of the counterexample">"#
    );
    s.push_str(
        r##"<defs><pattern id="expired" width="6" height="6" patternUnits="userSpaceOnUse" patternTransform="rotate(45)"><rect width="6" height="6" fill="#f6f8fa"/><line x1="0" y1="0" x2="0" y2="6" stroke="#d0d7de" stroke-width="3"/></pattern></defs>"##,
    );
    // Lanes.
    for c in 0..t.clients {
        let y = TOP + LANE * c as f64;
        let fill = if c % 2 == 0 { "#ffffff" } else { "#f6f8fa" };
        let _ = write!(
            s,
            r##"<rect x="0" y="{y}" width="{width:.0}" height="{LANE}" fill="{fill}"/><text x="10" y="{:.0}" font-size="13" font-weight="600" fill="#1f2328">{}</text>"##,
            y + LANE / 2.0 + 4.0,
            match t.lanes.get(c) {
                Some(name) => esc(&cut(name, 14)),
                None => format!("client {c}"),
            }
        );
    }
    // The axis: a tick at every instant, a label wherever there is room.
    let mut last_label = f64::NEG_INFINITY;
    for (i, &at) in axis.instants.iter().enumerate() {
        let x = axis.xs[i];
        let _ = write!(
            s,
            r##"<line x1="{x:.1}" y1="{:.0}" x2="{x:.1}" y2="{lanes_bottom:.0}" stroke="#eaeef2"/>"##,
            TOP - 4.0
        );
        if x - last_label >= 64.0 {
            let _ = write!(
                s,
                r##"<text x="{x:.1}" y="{:.0}" font-size="10" fill="#6e7781" text-anchor="middle">{}</text>"##,
                TOP - 10.0,
                esc(&time(at))
            );
            last_label = x;
        }
    }
    // Calls. A label has the room up to the next box of its lane.
    let starts: Vec<(f64, f64)> = t
        .calls
        .iter()
        .map(|c| {
            let (x0, x1) = (axis.x(c.issued_us), axis.x(c.at_us));
            if x1 - x0 < 10.0 {
                (x1 - 10.0, 10.0)
            } else {
                (x0, x1 - x0)
            }
        })
        .collect();
    for (i, c) in t.calls.iter().enumerate() {
        let (x0, w) = starts[i];
        let room = t.calls[i + 1..]
            .iter()
            .zip(&starts[i + 1..])
            .find(|(n, _)| n.client == c.client)
            .map_or(width - x0, |(_, (nx, _))| nx - x0)
            .max(w)
            - 4.0;
        let y = TOP + LANE * c.client as f64 + 7.0;
        let (fill, stroke) = match &c.fault {
            Some(_) => ("#ffebe9", "#cf222e"),
            None => ("#ddf4ff", "#54aeff"),
        };
        let title = format!(
            "step {} · s{} · {} → {}{}\nmade at {}, run at {}",
            c.step,
            c.server,
            c.request,
            c.reply,
            c.fault
                .as_ref()
                .map(|f| format!(" · FAULT {f}"))
                .unwrap_or_default(),
            time(c.issued_us),
            time(c.at_us)
        );
        let _ = write!(
            s,
            r#"<g><title>{}</title><rect x="{x0:.1}" y="{y:.0}" width="{w:.1}" height="18" rx="3" fill="{fill}" stroke="{stroke}"/>"#,
            esc(&title)
        );
        let label = cut(&c.request, chars_in(room - 4.0));
        let _ = write!(
            s,
            r##"<text x="{:.1}" y="{:.0}" font-size="11" fill="#0a3069">{}</text>"##,
            x0 + 3.0,
            y + 13.0,
            esc(&label)
        );
        let reply = match &c.fault {
            Some(f) => format!("→ {} ✗ {}", c.reply, f),
            None => format!("→ {}", c.reply),
        };
        let _ = write!(
            s,
            r##"<text x="{:.1}" y="{:.0}" font-size="10" fill="{}">{}</text></g>"##,
            x0 + 3.0,
            y + 32.0,
            if c.fault.is_some() {
                "#cf222e"
            } else {
                "#57606a"
            },
            esc(&cut(&reply, chars_in(room)))
        );
    }
    // Key strips.
    for (i, k) in t.keys.iter().enumerate() {
        let y = lanes_bottom + 8.0 + STRIP * i as f64;
        let name = if k.server == 0 {
            k.key.clone()
        } else {
            format!("{} @s{}", k.key, k.server)
        };
        let _ = write!(
            s,
            r##"<text x="10" y="{:.0}" font-size="11" fill="#424a53"><title>{}</title>{}</text><line x1="{LEFT}" y1="{:.0}" x2="{:.0}" y2="{:.0}" stroke="#d0d7de"/>"##,
            y + 15.0,
            esc(&name),
            esc(&cut(&name, 17)),
            y + 11.0,
            axis.end() + RIGHT,
            y + 11.0
        );
        for (j, span) in k.states.iter().enumerate() {
            let Some(value) = &span.value else { continue };
            let end = k.states.get(j + 1).map_or(t.end_us, |n| n.from_us);
            let expiry = span.expires_us.filter(|e| *e < end);
            let live_end = expiry.unwrap_or(end);
            let (x0, x1) = (axis.x(span.from_us), axis.x(live_end));
            let w = (x1 - x0).max(4.0);
            let title = format!(
                "{} = {:?} ({} bytes) from {}{}",
                k.key,
                value,
                span.len,
                time(span.from_us),
                span.expires_us
                    .map(|e| format!(", expires at {}", time(e)))
                    .unwrap_or_default()
            );
            let _ = write!(
                s,
                r##"<g><title>{}</title><rect x="{x0:.1}" y="{:.0}" width="{w:.1}" height="18" rx="2" fill="#dafbe1" stroke="#4ac26b"/><text x="{:.1}" y="{:.0}" font-size="10.5" fill="#116329">{}</text></g>"##,
                esc(&title),
                y + 2.0,
                x0 + 3.0,
                y + 15.0,
                esc(&cut(value, chars_in(w - 6.0)))
            );
            if let Some(e) = expiry {
                let (x0, x1) = (axis.x(e), axis.x(end));
                let _ = write!(
                    s,
                    r##"<g><title>{} expired at {}</title><rect x="{x0:.1}" y="{:.0}" width="{:.1}" height="18" fill="url(#expired)" stroke="#d0d7de"/></g>"##,
                    esc(&k.key),
                    time(e),
                    y + 2.0,
                    (x1 - x0).max(3.0)
                );
            }
        }
    }
    // Faults of the world and the verdict, across everything.
    let bottom = height - 36.0;
    for f in &t.faults {
        let x = axis.x(f.at_us);
        let _ = write!(
            s,
            r##"<g><title>step {} · {} · FAULT {}</title><line x1="{x:.1}" y1="{:.0}" x2="{x:.1}" y2="{bottom:.0}" stroke="#bc4c00" stroke-width="2" stroke-dasharray="5 3"/><text x="{:.1}" y="{:.0}" font-size="10.5" fill="#bc4c00">⚡ {}</text></g>"##,
            f.step,
            time(f.at_us),
            esc(&f.text),
            TOP - 2.0,
            x + 3.0,
            bottom + 13.0,
            esc(&cut(&f.text, 28))
        );
    }
    let x = axis.x(t.verdict.at_us);
    // The verdict's label reads away from the nearer edge.
    let (lx, anchor) = if x < width / 2.0 {
        (x + 4.0, "start")
    } else {
        (x - 4.0, "end")
    };
    let _ = write!(
        s,
        r##"<g><title>step {} · {} · {}</title><line x1="{x:.1}" y1="{:.0}" x2="{x:.1}" y2="{:.0}" stroke="#cf222e" stroke-width="3"/><text x="{lx:.1}" y="{:.0}" font-size="12" font-weight="700" fill="#cf222e" text-anchor="{anchor}">✗ {}</text></g>"##,
        t.verdict.step,
        time(t.verdict.at_us),
        esc(&t.verdict.text),
        TOP - 4.0,
        bottom + 18.0,
        bottom + 30.0,
        esc(&cut(t.verdict.text.lines().next().unwrap_or(""), 60))
    );
    s.push_str("</svg>");
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use mcsim::report::timeline::{CallBox, KeySpan, KeyTrack, Mark};

    fn call(client: usize, issued_us: u64, at_us: u64, request: &str) -> CallBox {
        CallBox {
            step: 0,
            client,
            issued_us,
            at_us,
            server: 0,
            request: request.into(),
            reply: "STORED".into(),
            fault: None,
        }
    }

    #[test]
    fn a_lane_per_client_a_box_per_call_and_a_strip_per_key() {
        let t = Timeline {
            lanes: Vec::new(),
            clients: 2,
            end_us: 70_000_000,
            calls: vec![
                call(0, 0, 300, "set views 0 0 1"),
                call(1, 100, 900, "get views"),
            ],
            faults: vec![Mark {
                step: 2,
                at_us: 1_000,
                text: "evict views on s0".into(),
            }],
            keys: vec![KeyTrack {
                key: "views".into(),
                server: 0,
                states: vec![KeySpan {
                    from_us: 300,
                    step: 1,
                    value: Some("1".into()),
                    len: 1,
                    expires_us: Some(60_000_000),
                }],
            }],
            verdict: Mark {
                step: 3,
                at_us: 70_000_000,
                text: "counter.no_lost_increments violated".into(),
            },
            omitted: 0,
            from_us: 0,
            keys_omitted: 0,
        };
        let svg = render(&t);
        assert!(svg.starts_with("<svg") && svg.ends_with("</svg>"));
        assert_eq!(svg.matches("client ").count(), 2);
        assert!(svg.contains("set views 0 0 1") && svg.contains("→ STORED"));
        assert!(svg.contains("url(#expired)"), "the expiry is drawn");
        assert!(svg.contains("⚡ evict views"));
        assert!(svg.contains("✗ counter.no_lost_increments"));
    }

    #[test]
    fn the_axis_keeps_order_and_compresses_long_gaps() {
        let a = Axis::new(vec![0, 100, 1_000_000, 60_000_000]);
        assert!(a.x(0) < a.x(100) && a.x(100) < a.x(1_000_000));
        let short = a.x(100) - a.x(0);
        let long = a.x(60_000_000) - a.x(1_000_000);
        assert!(long < 6.0 * short, "a minute is not 600,000 times 100 µs");
        assert!(a.x(500_000) > a.x(100) && a.x(500_000) < a.x(1_000_000));
    }
}
