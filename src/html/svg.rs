//! Small helpers for writing SVG by hand: escaping, times, text that fits.

/// Text escaped for XML (element content and attribute values).
pub(crate) fn esc(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c if (c as u32) < 0x20 && c != '\n' && c != '\t' => out.push('·'),
            c => out.push(c),
        }
    }
    out
}

/// Characters of 11-px text that fit in `px` pixels (a conservative average width).
pub(crate) fn chars_in(px: f64) -> usize {
    (px / 6.4).max(0.0) as usize
}

/// `text` cut to `n` characters with `…`.
pub(crate) fn cut(text: &str, n: usize) -> String {
    if text.chars().count() <= n {
        return text.to_string();
    }
    if n == 0 {
        return String::new();
    }
    let mut s: String = text.chars().take(n - 1).collect();
    s.push('…');
    s
}

/// A virtual instant for an axis label: `850 µs`, `12.5 ms`, `3.200 s`, `2 min 5 s`.
pub(crate) fn time(us: u64) -> String {
    if us < 1_000 {
        format!("{us} µs")
    } else if us < 1_000_000 {
        format!("{:.1} ms", us as f64 / 1e3)
    } else if us < 120_000_000 {
        format!("{:.3} s", us as f64 / 1e6)
    } else {
        let s = us / 1_000_000;
        format!("{} min {} s", s / 60, s % 60)
    }
}

/// A number for an axis or a label: integers as integers, others with 3 significant
/// digits.
pub(crate) fn num(v: f64) -> String {
    if v == v.trunc() && v.abs() < 1e12 {
        format!("{}", v as i64)
    } else if v.abs() >= 100.0 {
        format!("{v:.0}")
    } else if v.abs() >= 10.0 {
        format!("{v:.1}")
    } else if v.abs() >= 1.0 {
        format!("{v:.2}")
    } else {
        format!("{v:.3}")
    }
}

/// Colours of series, in order.
pub(crate) const PALETTE: [&str; 8] = [
    "#0969da", "#cf222e", "#1a7f37", "#9a6700", "#8250df", "#bc4c00", "#1b7c83", "#6e7781",
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_is_escaped_and_cut() {
        assert_eq!(esc("a<b & \"c\""), "a&lt;b &amp; &quot;c&quot;");
        assert_eq!(cut("abcdef", 4), "abc…");
        assert_eq!(cut("abc", 4), "abc");
    }

    #[test]
    fn instants_read_in_their_unit() {
        assert_eq!(time(850), "850 µs");
        assert_eq!(time(12_500), "12.5 ms");
        assert_eq!(time(3_200_000), "3.200 s");
        assert_eq!(time(125_000_000), "2 min 5 s");
        assert_eq!(num(3.0), "3");
        assert_eq!(num(0.25), "0.250");
    }
}
