//! Section 4: the loom cross-check table.

#[allow(unused_imports)]
use super::*;

pub(crate) fn section_xcheck(md: &mut String, loom: &[String]) -> bool {
    writeln!(
        md,
        "\n## 4. Loom cross-check (`models/tests/loom.rs`)\n\n\
         The same recipe code as loom threads over `mcsim::loom::LoomServer` and as \
         `mcsim explore` of the equivalent scenario (latency window `[100, 100000]` µs, no \
         faults). Both stop at the first violation; executions are those run up to it (or \
         all of them, for a pass).\n\n\
         | case | clients | expected | loom | loom executions | loom time | explore | explore executions (reduction / none) | explore time | agree |\n\
         |---|---:|---|---|---:|---:|---|---:|---:|---|"
    )
    .unwrap();
    let mut all_agree = true;
    for l in loom.iter().filter(|l| l.starts_with("xcheck ")) {
        let f = |k| field(l, k).unwrap_or("?");
        let agree = f("loom") == f("explore");
        all_agree &= agree;
        writeln!(
            md,
            "| {} | {} | {} | {} | {} | {} ms | {} | {} / {} | {} ms | {} |",
            l.split_whitespace().nth(1).unwrap_or("?"),
            f("clients"),
            f("expect"),
            f("loom"),
            f("loom_executions"),
            f("loom_ms"),
            f("explore"),
            f("explore_executions"),
            f("explore_noreduction_executions"),
            f("explore_ms"),
            if agree { "yes" } else { "**no**" }
        )
        .unwrap();
    }
    all_agree
}
