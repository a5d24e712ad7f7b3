//! The command line of `compare` (see the crate's documentation for the flags).

#[allow(unused_imports)]
use super::*;

/// What the command line asks for.
pub(crate) struct Args {
    pub(crate) loom: bool,
    /// Only the time-to-violation section, printed, the report left as it is.
    pub(crate) verdicts_only: bool,
    /// Only §7b, the bugs only a search finds: printed and written to
    /// `reports/hard-bugs.md`, the full report left as it is.
    pub(crate) hard_only: bool,
    /// Only §11, the sampling strategies on every bug, printed, the report left as it is.
    pub(crate) samplers_only: bool,
    /// Only the gate-at-scale section, printed, the report left as it is.
    pub(crate) gate_only: bool,
    /// Only the full-size proofs section, printed, the report left as it is.
    pub(crate) full_size_only: bool,
    /// Only §2's instruction counts, printed, the report left as it is.
    pub(crate) instructions_only: bool,
    /// Only §2's rate tables and instruction counts: the executor overhead in time and in
    /// instructions, about 1 minute.
    pub(crate) overhead_only: bool,
    /// The budget multiplier of the gate-at-scale section (0: skip it).
    pub(crate) gate_budget: u32,
    /// Hunt this corpus scenario with mcsim's default strategy for a few seconds, for a
    /// profiler (`perf record`, callgrind), and print the executions per hunt.
    pub(crate) profile_hunt: Option<String>,
    /// Run this rate row alone (`--profile-rate ROW`), for a profiler.
    pub(crate) profile_rate: Option<String>,
    /// With `--profile-rate`: run exactly this many executions instead of about 3 s.
    pub(crate) executions: Option<u64>,
    /// Measure this rate table's rows here and print their rounds (`--rate-rounds NAME`,
    /// with `--first-round` and `--rounds`): how §2 runs each share of its rounds in a
    /// child process of its own ([`layouts`]).
    pub(crate) rate_rounds: Option<(String, u64, u64)>,
    pub(crate) serve_only: bool,
    /// Only §12, `mcsim test` on a real program, printed, the report left as it is.
    pub(crate) program_only: bool,
    /// Only §13, serve's memory over a long run and the framing soak, printed.
    pub(crate) soak_only: bool,
    /// Seconds of §13's framing soak.
    pub(crate) soak_seconds: u64,
    /// Commands of the serve memory run (§10).
    pub(crate) serve_commands: u64,
    pub(crate) seeds: u64,
    pub(crate) out: PathBuf,
}

pub(crate) fn parse_args() -> Result<Args, String> {
    let mut args = Args {
        loom: true,
        verdicts_only: false,
        hard_only: false,
        samplers_only: false,
        gate_only: false,
        full_size_only: false,
        instructions_only: false,
        overhead_only: false,
        gate_budget: 100,
        profile_hunt: None,
        profile_rate: None,
        executions: None,
        rate_rounds: None,
        serve_only: false,
        program_only: false,
        soak_only: false,
        soak_seconds: 60,
        serve_commands: 10_000_000,
        seeds: 100,
        out: root().join("reports/bench.md"),
    };
    let mut it = std::env::args().skip(1);
    while let Some(a) = it.next() {
        match a.as_str() {
            "--no-loom" => args.loom = false,
            "--verdicts-only" => args.verdicts_only = true,
            "--hard-only" => args.hard_only = true,
            "--samplers-only" => args.samplers_only = true,
            "--gate-only" => args.gate_only = true,
            "--full-size-only" => args.full_size_only = true,
            "--instructions-only" => args.instructions_only = true,
            "--overhead-only" => args.overhead_only = true,
            "--serve-only" => args.serve_only = true,
            "--program-only" => args.program_only = true,
            "--soak-only" => args.soak_only = true,
            "--soak-seconds" => {
                args.soak_seconds = it
                    .next()
                    .and_then(|v| v.parse().ok())
                    .ok_or("--soak-seconds takes a number")?
            }
            "--serve-commands" => {
                args.serve_commands = it
                    .next()
                    .and_then(|v| v.parse().ok())
                    .ok_or("--serve-commands takes a number")?
            }
            "--gate-budget" => {
                args.gate_budget = it
                    .next()
                    .and_then(|v| v.parse().ok())
                    .ok_or("--gate-budget takes a number")?
            }
            "--profile-hunt" => {
                args.profile_hunt = Some(it.next().ok_or("--profile-hunt takes a scenario name")?)
            }
            "--profile-rate" => {
                args.profile_rate = Some(
                    it.next()
                        .ok_or(format!("--profile-rate takes {}", rates::PROFILE_ROWS))?,
                )
            }
            "--rate-rounds" => {
                let name = it
                    .next()
                    .filter(|n| n == "get-set" || n == "incr-add")
                    .ok_or("--rate-rounds takes get-set or incr-add")?;
                args.rate_rounds = Some((name, 0, ROUNDS));
            }
            "--first-round" | "--rounds" => {
                let n: u64 = it
                    .next()
                    .and_then(|v| v.parse().ok())
                    .ok_or(format!("{a} takes a number"))?;
                let Some((_, first, rounds)) = args.rate_rounds.as_mut() else {
                    return Err(format!("{a} follows --rate-rounds NAME"));
                };
                *if a == "--rounds" { rounds } else { first } = n;
            }
            "--executions" => {
                args.executions = Some(
                    it.next()
                        .and_then(|v| v.parse().ok())
                        .filter(|&n: &u64| n > 0)
                        .ok_or("--executions takes a positive number")?,
                )
            }
            "--seeds" => {
                args.seeds = it
                    .next()
                    .and_then(|v| v.parse().ok())
                    .ok_or("--seeds takes a number")?
            }
            "--out" => args.out = it.next().ok_or("--out takes a path")?.into(),
            other => return Err(format!("unknown argument {other:?}")),
        }
    }
    Ok(args)
}
