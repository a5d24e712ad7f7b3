//! JUnit XML, the one writer behind every JUnit report mcsim writes: `check --junit` (a
//! test case per scenario), shards merged into one suite, and `mcsim test --junit` (one
//! test case, the program).

use std::fmt::Write as _;

/// One test case.
#[derive(Debug, Clone, Copy)]
pub struct Case<'a> {
    /// Its class (`mcsim.` is put before it).
    pub class: &'a str,
    /// Its name.
    pub name: &'a str,
    /// How long it took.
    pub seconds: f64,
    /// How it ended.
    pub outcome: Outcome<'a>,
}

/// How a test case ended.
#[derive(Debug, Clone, Copy)]
pub enum Outcome<'a> {
    /// It passed, with what it says of itself (empty: nothing).
    Passed(&'a str),
    /// It failed: a one-line message and the details.
    Failed {
        /// The message, as an attribute.
        message: &'a str,
        /// The details (a timeline, replay lines), as the failure's text.
        detail: &'a str,
    },
}

impl Case<'_> {
    /// The case's element, indented as a suite's child, ending with a line end.
    fn write(&self, out: &mut String) {
        let _ = write!(
            out,
            r#"  <testcase classname="mcsim.{}" name="{}" time="{:.3}""#,
            xml_escape(self.class),
            xml_escape(self.name),
            self.seconds
        );
        let _ = match self.outcome {
            Outcome::Passed("") => writeln!(out, "/>"),
            Outcome::Passed(said) => writeln!(
                out,
                ">\n    <system-out>{}</system-out>\n  </testcase>",
                xml_escape(said)
            ),
            Outcome::Failed { message, detail } => writeln!(
                out,
                ">\n    <failure message=\"{}\">{}</failure>\n  </testcase>",
                xml_escape(message),
                xml_escape(detail)
            ),
        };
    }
}

/// A JUnit report of one suite named `name`, its cases in order.
pub fn render(name: &str, cases: &[Case<'_>]) -> String {
    let mut body = String::new();
    for case in cases {
        case.write(&mut body);
    }
    let failures = (cases.iter())
        .filter(|c| matches!(c.outcome, Outcome::Failed { .. }))
        .count();
    suite(name, cases.len(), failures, &body)
}

/// A report of one suite named `name` around `body`, cases already written (as in a
/// report being merged), with its totals.
pub fn suite(name: &str, tests: usize, failures: usize, body: &str) -> String {
    format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuite name=\"{}\" tests=\"{tests}\" failures=\"{failures}\">\n{body}</testsuite>\n",
        xml_escape(name)
    )
}

/// `s` as XML text or an attribute's value (`&`, `<`, `>` and `"` escaped).
pub fn xml_escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}
