//! Fuzzing the inputs: scenario files of the suite, mutated (values replaced by zeros,
//! negatives, huge numbers, wrong types; lines dropped, doubled or cut short) and schedule
//! strings, mutated the same way. Every case must end in a clean error or a run; never a
//! panic, never a hang. `MCSIM_FUZZ_CASES` sets the number of cases (CI runs the default).

mod support;

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::time::{Duration, Instant};

use mcsim::explore::Schedule;
use mcsim::scenario::Scenario;
use mcsim::{Verdict, run};
use mcsim_models::RECIPES;

/// A small deterministic generator (xorshift64*): the cases are the same on every run.
struct Gen(u64);

impl Gen {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

const VALUES: &[&str] = &[
    "0",
    "-1",
    "1",
    "7",
    "2147483648",
    "9223372036854775807",
    "-9223372036854775808",
    "1e300",
    "-0.5",
    "0.0001",
    "nan",
    "inf",
    "\"x\"",
    "\"\"",
    "true",
    "[]",
    "[1]",
    "[-5, 5]",
    "[9223372036854775807, 9223372036854775807]",
    "{}",
];

/// One mutation of a file's text.
fn mutate(text: &str, g: &mut Gen) -> String {
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    if lines.is_empty() {
        return String::new();
    }
    let i = g.below(lines.len());
    match g.below(6) {
        // A value replaced (the most telling mutation, so the most frequent).
        0..=2 => {
            if let Some((k, _)) = lines[i].split_once('=') {
                let v = VALUES[g.below(VALUES.len())];
                lines[i] = format!("{k}= {v}");
            }
        }
        3 => {
            lines.remove(i);
        }
        4 => {
            let l = lines[i].clone();
            lines.insert(i, l);
        }
        _ => {
            let cut = g.below(text.len() + 1);
            let mut end = cut;
            while !text.is_char_boundary(end) {
                end -= 1;
            }
            return text[..end].to_string();
        }
    }
    lines.join("\n")
}

/// Runs one execution of a scenario that loaded, with its budgets capped so a case stays
/// short; the verdict must not be a panic of mcsim's own (recipe panics are findings).
fn run_once(s: &Scenario) -> Result<Verdict, String> {
    let s = s
        .with_set(&[
            "timing.max_steps=5000".into(),
            "timing.max_time_s=600".into(),
        ])
        .map_err(|e| e.to_string())?;
    let strategy = s.strategy;
    Ok(run::run_seed(&s, strategy, 0).verdict)
}

fn cases() -> usize {
    std::env::var("MCSIM_FUZZ_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(600)
}

#[test]
fn mutated_scenario_files_give_a_clean_error_or_a_run() {
    let files: Vec<(std::path::PathBuf, String)> = support::all_scenarios()
        .into_iter()
        .map(|p| {
            let t = std::fs::read_to_string(&p).unwrap();
            (p, t)
        })
        .collect();
    let mut g = Gen(0x9e37_79b9_7f4a_7c15);
    let mut problems = Vec::new();
    let (mut errors, mut runs) = (0, 0);
    for case in 0..cases() {
        let (path, text) = &files[g.below(files.len())];
        let mut mutated = mutate(text, &mut g);
        if g.below(3) == 0 {
            mutated = mutate(&mutated, &mut g);
        }
        if std::env::var_os("MCSIM_FUZZ_VERBOSE").is_some() {
            eprintln!("case {case}: {}\n{mutated}\n", path.display());
        }
        let started = Instant::now();
        let outcome = catch_unwind(AssertUnwindSafe(|| {
            match Scenario::parse(path, &mutated, RECIPES) {
                Err(e) => {
                    assert!(
                        !e.to_string().is_empty() && e.file == *path,
                        "error without its file: {e}"
                    );
                    Ok(None)
                }
                Ok(s) => run_once(&s).map(Some),
            }
        }));
        let elapsed = started.elapsed();
        match outcome {
            Err(_) => problems.push(format!("case {case}: PANIC on\n{mutated}")),
            Ok(Err(e)) => problems.push(format!("case {case}: {e}")),
            Ok(Ok(None)) => errors += 1,
            Ok(Ok(Some(v))) => {
                runs += 1;
                if let Verdict::Panic { message, .. } = &v
                    && !message.contains("recipe")
                {
                    problems.push(format!("case {case}: recipe panic {message} on\n{mutated}"));
                }
            }
        }
        if elapsed > Duration::from_secs(5) {
            problems.push(format!("case {case}: took {elapsed:?} on\n{mutated}"));
        }
    }
    eprintln!("{errors} clean errors, {runs} runs");
    assert!(problems.is_empty(), "{}", problems.join("\n\n"));
}

#[test]
fn mutated_schedule_strings_give_a_clean_error_or_a_replay() {
    let s = support::load("lock-get-set");
    let found = support::quick(&s, 100, false);
    let schedule = found
        .first_failure
        .expect("lock-get-set fails")
        .execution
        .schedule
        .to_string();
    let alphabet: Vec<char> = "mc1:.+*-_sEFRLCKX0123456789abcdefz,;~ ".chars().collect();
    let mut g = Gen(0x5151_2323_7878_abab);
    for _ in 0..cases() {
        let mut t: Vec<char> = schedule.chars().collect();
        for _ in 0..=g.below(4) {
            match g.below(4) {
                0 if !t.is_empty() => {
                    let i = g.below(t.len());
                    t.remove(i);
                }
                1 => {
                    let i = g.below(t.len() + 1);
                    t.insert(i, alphabet[g.below(alphabet.len())]);
                }
                2 if !t.is_empty() => {
                    let i = g.below(t.len());
                    t.truncate(i);
                }
                _ => {
                    let i = g.below(t.len() + 1);
                    t.splice(i..i, "99999999999999999999".chars());
                }
            }
        }
        let text: String = t.into_iter().collect();
        let outcome = catch_unwind(AssertUnwindSafe(|| {
            if let Ok(schedule) = Schedule::parse(&text) {
                // A schedule that reads is replayed: a step that is not possible is a
                // `diverged` verdict, not a crash.
                let _ = run::replay(&s, &schedule);
            }
        }));
        assert!(outcome.is_ok(), "panic on schedule {text:?}");
    }
}
