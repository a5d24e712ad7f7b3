//! §2's instruction counts: the rate rows of the two counters run under callgrind, so
//! the executor's overhead over the shared work is counted in instructions, a figure
//! that other jobs on a shared machine do not move (the wall-clock ratio swings by a
//! third between runs, most of it in the minimal scheduler's few hundred nanoseconds),
//! the misses of the simulated instruction cache, and, against §2's times, how many
//! instructions each overhead runs per nanosecond: whether the ratio in time differs
//! from the one in instructions because mcsim's code stalls more or only because it
//! runs more instructions.

use std::process::Command;

use super::*;
use mcsim_compare::footprint;

/// Executions per counted run. A row is run twice, with this many executions and with
/// twice as many; the difference, divided by this, is one execution's instructions
/// without the program's start and end.
const EXECUTIONS: u64 = 10_000;

/// The rows, as `--profile-rate` names them: mcsim `random`, the minimal scheduler and
/// the floor of each counter, and mcsim's fixed cost.
const ROWS: [(&str, &str, &str); 2] = [
    ("get-set", "minimal", "floor"),
    ("incr-add", "minimal-incr-add", "floor-incr-add"),
];

/// What callgrind counts for one row: instructions, and the misses of its simulated
/// level-1 instruction cache (`--cache-sim=yes`, sized as this machine's).
#[derive(Clone, Copy)]
struct Counts {
    instructions: f64,
    i1_misses: f64,
}

/// What `valgrind --tool=callgrind --cache-sim=yes` counts for this binary running
/// `--profile-rate row --executions n`.
fn counted(row: &str, n: u64) -> Result<Counts, String> {
    let stderr = footprint::callgrind(
        &["--cache-sim=yes", "--callgrind-out-file=/dev/null"],
        row,
        n,
    )?;
    // `Collected : Ir Dr Dw I1mr D1mr D1mw ILmr DLmr DLmw`.
    stderr
        .lines()
        .find_map(|l| {
            let (_, after) = l.split_once("Collected :")?;
            let mut events = after.split_whitespace().map(|e| e.parse::<u64>().ok());
            let instructions = events.next()??;
            let i1_misses = events.nth(2)??;
            Some(Counts {
                instructions: instructions as f64,
                i1_misses: i1_misses as f64,
            })
        })
        .ok_or_else(|| format!("no counts in valgrind's output for row {row}"))
}

/// One execution's counts in `row`.
fn per_execution(row: &str) -> Result<Counts, String> {
    let (once, twice) = (counted(row, EXECUTIONS)?, counted(row, 2 * EXECUTIONS)?);
    let per = |a: f64, b: f64| (b - a).max(0.0) / EXECUTIONS as f64;
    Ok(Counts {
        instructions: per(once.instructions, twice.instructions),
        i1_misses: per(once.i1_misses, twice.i1_misses),
    })
}

/// The bytes of code one execution of mcsim `random` and of the minimal scheduler runs
/// on each counter ([`footprint::code_per_execution`]), beside the size of this
/// machine's level-1 instruction cache, as a paragraph and a table.
fn code_table() -> Result<(String, CodeSize), String> {
    let cache = footprint::instruction_cache();
    let mut table = format!(
        "The code one execution runs: the 64-byte lines of machine code run at least once \
         per execution (counted by `valgrind --tool=callgrind --dump-instr=yes`, {EXECUTIONS} \
         and then {} executions, so the program's start is not counted). Where it exceeds \
         the level-1 instruction cache ({}), the cache cannot keep it from one execution \
         to the next; the excess over the minimal scheduler's is what the executor's own \
         code adds.\n\n\
         | counter | mcsim `random` | minimal scheduler | mcsim over the minimal scheduler |\n\
         |---|---:|---:|---:|\n",
        2 * EXECUTIONS,
        cache.map_or("its size not reported by this system".to_string(), |c| {
            format!("{} per core on this machine", kib(c))
        }),
    );
    let mut get_set = None;
    for (mcsim, minimal, _) in ROWS {
        let m = footprint::code_per_execution(mcsim, EXECUTIONS)?;
        let s = footprint::code_per_execution(minimal, EXECUTIONS)?;
        get_set.get_or_insert((m, s));
        writeln!(
            table,
            "| {mcsim} | {} | {} | {} |",
            kib(m),
            kib(s),
            kib(m.saturating_sub(s))
        )
        .unwrap();
    }
    let (mcsim, minimal) = get_set.unwrap_or_default();
    Ok((
        table,
        CodeSize {
            mcsim,
            minimal,
            cache,
        },
    ))
}

/// `bytes` in KiB, as the tables and the summary write code and cache sizes.
fn kib(bytes: u64) -> String {
    format!("{:.1} KiB", bytes as f64 / 1024.0)
}

/// The code one get/set execution runs, in bytes, and the level-1 instruction cache.
#[derive(Clone, Copy)]
struct CodeSize {
    mcsim: u64,
    minimal: u64,
    cache: Option<u64>,
}

/// What §2's counts give the targets' summary: mcsim's overhead over the floor in units
/// of the minimal scheduler's, for get/set and incr/add, and the code a get/set
/// execution runs.
pub(crate) struct Counted {
    ratios: (f64, f64),
    code: CodeSize,
}

impl Counted {
    /// The summary's words on these counts, after the overhead in time.
    pub(crate) fn summary(&self) -> String {
        let (gs, ia) = self.ratios;
        let cache = self.code.cache.map_or(String::new(), |c| {
            format!(", with a {} level-1 instruction cache", kib(c))
        });
        format!(
            "; in instructions, which other jobs on the machine do not disturb: get/set \
             {gs:.1}×, incr/add {ia:.1}×; the code one get/set execution runs: {} against \
             the minimal scheduler's {}{cache}",
            kib(self.code.mcsim),
            kib(self.code.minimal)
        )
    }
}

/// Writes the instruction tables; returns what the targets' summary says of them
/// (`None` without valgrind). `times`, when
/// the rate rows ran: per counter, mcsim `random`'s and the minimal scheduler's
/// overheads over the shared work in ns per execution ([`Rates::overhead_ns`]).
pub(crate) fn section_instructions(
    md: &mut String,
    times: Option<[(f64, f64); 2]>,
) -> Option<Counted> {
    writeln!(
        md,
        "\n### Instructions per execution\n\n\
         The same rows counted by callgrind (`valgrind --tool=callgrind`): each row runs \
         {EXECUTIONS} and then {} executions (`compare --profile-rate ROW --executions N`), \
         and the difference is divided by {EXECUTIONS}, so the program's start is not \
         counted. Instructions are not time (a stall costs cycles, not instructions), but \
         they do not move with the machine's load: the overhead ratio below is the one to \
         compare between runs.\n",
        2 * EXECUTIONS
    )
    .unwrap();
    let probe = Command::new("valgrind").arg("--version").output();
    if !probe.is_ok_and(|o| o.status.success()) {
        writeln!(md, "Not measured: `valgrind` is not installed.").unwrap();
        return None;
    }
    eprintln!(
        "instructions: {} rows under callgrind, {} for the code they run",
        3 * ROWS.len() + 1,
        2 * ROWS.len()
    );
    let measure = || -> Result<(String, Counted), String> {
        let mut table = String::from(
            "| counter | mcsim `random` | minimal scheduler | no checker (floor) | mcsim over the floor | minimal over the floor | overhead |\n\
             |---|---:|---:|---:|---:|---:|---:|\n",
        );
        let mut ratios = [0.0; 2];
        let mut speeds = String::new();
        let mut misses = String::from(
            "| counter | mcsim `random` | minimal scheduler | no checker (floor) |\n\
             |---|---:|---:|---:|\n",
        );
        for (i, (mcsim, minimal, floor)) in ROWS.iter().enumerate() {
            let (m, s, f) = (
                per_execution(mcsim)?,
                per_execution(minimal)?,
                per_execution(floor)?,
            );
            let (mi, si, fi) = (m.instructions, s.instructions, f.instructions);
            ratios[i] = (mi - fi) / (si - fi);
            if let Some(times) = times {
                let (mcsim_ns, minimal_ns) = times[i];
                let (a, b) = ((mi - fi) / mcsim_ns, (si - fi) / minimal_ns);
                writeln!(
                    speeds,
                    "| {mcsim} | {:.0} in {mcsim_ns:.0} ns: {a:.1} | {:.0} in {minimal_ns:.0} \
                     ns: {b:.1} | {:.2} |",
                    mi - fi,
                    si - fi,
                    b / a
                )
                .unwrap();
            }
            writeln!(
                table,
                "| {mcsim} | {mi:.0} | {si:.0} | {fi:.0} | {:.0} | {:.0} | {:.2}× |",
                mi - fi,
                si - fi,
                ratios[i]
            )
            .unwrap();
            writeln!(
                misses,
                "| {mcsim} | {:.0} | {:.0} | {:.0} |",
                m.i1_misses, s.i1_misses, f.i1_misses
            )
            .unwrap();
        }
        let (footprint, code) = code_table()?;
        let fixed = per_execution("fixed")?;
        writeln!(
            table,
            "\nAn execution with no clients and one failing end check (mcsim's fixed cost): \
             {:.0} instructions, {:.0} instruction-cache misses.\n\n\
             Instruction-cache misses per execution, in callgrind's simulation of this \
             machine's level-1 instruction cache (`--cache-sim=yes`, which reads its size \
             from the processor): where mcsim's are many and the others' near none, the \
             code one execution runs does not fit in that cache and is fetched again at \
             every execution. Whether that costs time shows in the table after it.\n\n\
             {misses}\n{footprint}",
            fixed.instructions, fixed.i1_misses
        )
        .unwrap();
        if !speeds.is_empty() {
            writeln!(
                table,
                "\nInstructions per nanosecond of each overhead over the shared work: the \
                 counts above against the times of the rate rows above. Where mcsim's \
                 overhead runs fewer per nanosecond than the minimal scheduler's, its code \
                 stalls more (instruction-cache misses, mispredicted branches, loads that \
                 wait on loads), and its overhead in time exceeds the one in instructions \
                 by the factor in the last column; near 1, the ratio in time is the ratio \
                 in instructions, and only fewer instructions lower it. The times are \
                 medians over rounds on a shared machine, so that factor moves between \
                 runs by more than the counts do.\n\n\
                 | counter | mcsim `random`: instructions in time, per ns | minimal \
                 scheduler: instructions in time, per ns | time ratio ÷ instruction ratio |\n\
                 |---|---:|---:|---:|\n{speeds}"
            )
            .unwrap();
        }
        Ok((
            table,
            Counted {
                ratios: (ratios[0], ratios[1]),
                code,
            },
        ))
    };
    match measure() {
        Ok((table, counted)) => {
            md.push_str(&table);
            Some(counted)
        }
        Err(e) => {
            writeln!(md, "Not measured: {e}").unwrap();
            None
        }
    }
}
