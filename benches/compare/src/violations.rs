//! Section 3: executions until the first violation, per scenario.

#[allow(unused_imports)]
use super::*;

/// Executions until the first violation for one seed, or `None` within `cap`.
pub(crate) fn first_violation(s: &Scenario, seed: u64, cap: u64) -> Option<(u64, String)> {
    let mut strategy = Random::new(seed);
    let mut e = Execution::default();
    let runs = Runs::new(&s.config);
    (0..cap).find_map(|i| {
        runs.execute_into(&*s.setup, &mut strategy, i, &mut e);
        (!e.verdict.is_pass()).then(|| (i + 1, e.verdict.label()))
    })
}

pub(crate) fn section_first_violation(md: &mut String, seeds: u64) {
    writeln!(
        md,
        "\n## 3. Executions until the first violation (mcsim `random`)\n\n\
         Every scenario in `scenarios/` that expects a violation (sweep files are skipped: \
         their verdict is over several points). For each of {seeds} seeds `k` (strategy \
         `Random::new(k << 32)`, so seeds share no executions) the executions up to and \
         including the first one whose verdict is not `pass`, capped at the scenario's own \
         budget (`[explore] executions`). Median and 90th percentile over seeds; a seed \
         that finds nothing within the cap counts as more than the cap. `label ok`: seeds \
         whose first failure is the verdict the scenario expects.\n\n\
         | scenario | expects | cap | found | label ok | median | p90 | mean (found) | wall time |\n\
         |---|---|---:|---:|---:|---:|---:|---:|---:|"
    )
    .unwrap();
    for path in single_scenarios() {
        let Some(s) = load_or_row(md, &path, path.display(), 9) else {
            continue;
        };
        if s.expect == "pass" {
            continue;
        }
        eprintln!("first violation: {}", s.name);
        let cap = s.executions.max(1);
        let t = Instant::now();
        let runs: Vec<Option<(u64, String)>> = (0..seeds)
            .map(|k| first_violation(&s, k << 32, cap))
            .collect();
        let wall = t.elapsed();
        let found: Vec<u64> = runs.iter().flatten().map(|(n, _)| *n).collect();
        let label_ok = runs
            .iter()
            .flatten()
            .filter(|(_, l)| *l == s.expect)
            .count();
        let mut all: Vec<u64> = runs
            .iter()
            .map(|r| r.as_ref().map_or(u64::MAX, |(n, _)| *n))
            .collect();
        all.sort();
        let at = |q: f64| {
            let v = all[((all.len() as f64 - 1.0) * q).round() as usize];
            if v == u64::MAX {
                format!("> {cap}")
            } else {
                v.to_string()
            }
        };
        let mean = if found.is_empty() {
            "–".to_string()
        } else {
            format!(
                "{:.1}",
                found.iter().sum::<u64>() as f64 / found.len() as f64
            )
        };
        writeln!(
            md,
            "| {} | `{}` | {cap} | {}/{seeds} | {label_ok} | {} | {} | {mean} | {} |",
            s.name,
            s.expect,
            found.len(),
            at(0.5),
            at(0.9),
            ms(wall)
        )
        .unwrap();
    }
}
