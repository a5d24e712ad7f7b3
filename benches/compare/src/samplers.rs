//! Section 11: the sampling strategies side by side on every bug of the suite: how many
//! executions of a fixed number each one fails, for `swarm`, `random`, `pct` and `pos`.

use mcsim::explore::Pos;
use mcsim::explore::Swarm;

#[allow(unused_imports)]
use super::*;

/// Executions per scenario and strategy.
const EXECUTIONS: u64 = 2000;

/// Executions of `s` (of `EXECUTIONS`, from seed 0) whose verdict is not a pass.
fn failing(s: &Scenario, strategy: &mut dyn Strategy) -> u64 {
    let mut e = Execution::default();
    let runs = Runs::new(&s.config);
    (0..EXECUTIONS)
        .filter(|&i| {
            runs.execute_into(&*s.setup, strategy, i, &mut e);
            !e.verdict.is_pass()
        })
        .count() as u64
}

pub(crate) fn section_samplers(md: &mut String) {
    writeln!(
        md,
        "\n## 11. The sampling strategies on every bug\n\n\
         Every scenario in `scenarios/` that expects a violation (sweeps skipped): the \
         executions, of {EXECUTIONS} from seed 0, whose verdict is not `pass`, under each \
         sampling strategy. `swarm` is the scenario files' default (fault rates scaled per \
         execution, faults aimed, calls at the ends of their windows in half of the \
         executions); `random` is a uniform walk with the plan's fault probabilities; `pct` \
         is PCT at depth 3 with the file's step estimate (100 where it gives none); `pos` \
         is partial order sampling (Yuan, Yang and Gu, CAV 2018; `mcsim::explore::pos`): a \
         random priority per pending call, the highest runs, and only the calls that race \
         with it (same key, not both reads) draw again, with the plan's fault \
         probabilities as `random` has them. `faults`: `plan` where the file gives the \
         strategies faults to fire, `none` where they fire none (the interleaving, the \
         timing, or faults the file scripts at fixed times break the recipe). The last \
         column divides `pos`'s count by `random`'s.\n\n\
         | scenario | faults | swarm | random | pct | pos | pos ÷ random |\n\
         |---|---|---:|---:|---:|---:|---:|"
    )
    .unwrap();
    let t = Instant::now();
    // Per scenario without faults where `random` does not fail every execution: the
    // ratio of `pos`'s failing executions to `random`'s.
    let mut ratios: Vec<(String, f64)> = Vec::new();
    for path in single_scenarios() {
        let Some(s) = load_or_row(md, &path, path.display(), 7) else {
            continue;
        };
        if s.expect == "pass" {
            continue;
        }
        eprintln!("samplers: {}", s.name);
        let swarm = failing(&s, &mut Swarm::new(0));
        let random = failing(&s, &mut Random::new(0));
        let pct = failing(&s, &mut Pct::new(0, 3, s.strategy.pct_steps()));
        let pos = failing(&s, &mut Pos::new(0));
        let planned = !s.config.faults.is_empty();
        let ratio = if random == 0 {
            "–".to_string()
        } else {
            format!("{:.2}", pos as f64 / random as f64)
        };
        if !planned && random > 0 && random < EXECUTIONS {
            ratios.push((s.name.clone(), pos.max(1) as f64 / random as f64));
        }
        writeln!(
            md,
            "| {} | {} | {swarm} | {random} | {pct} | {pos} | {ratio} |",
            s.name,
            if planned { "plan" } else { "none" }
        )
        .unwrap();
    }
    let n = ratios.len();
    let mean = (ratios.iter().map(|(_, r)| r.ln()).sum::<f64>() / n.max(1) as f64).exp();
    let best = ratios
        .iter()
        .max_by(|a, b| a.1.total_cmp(&b.1))
        .map_or(String::new(), |(name, r)| {
            format!("; most on {name}, {r:.2}×")
        });
    let worst = ratios
        .iter()
        .min_by(|a, b| a.1.total_cmp(&b.1))
        .map_or(String::new(), |(name, r)| {
            format!("; least on {name}, {r:.2}×")
        });
    writeln!(
        md,
        "\nOn the {n} bugs without faults that `random` does not hit in every execution, \
         `pos` fails {mean:.2}× as many executions as `random` (geometric mean{best}{worst}). \
         The whole section: {:.1} s.",
        t.elapsed().as_secs_f64()
    )
    .unwrap();
}
