//! The `mcsim` command line as a library: `run`, `replay`, `explore` and `check` (the
//! gate) for any list of families. The shipped binary is
//! `mcsim_cli::main(mcsim_models::RECIPES)`; a crate with its own recipes writes the same
//! `main` with its own list and gets the whole command line, reports and gate:
//!
//! ```no_run
//! # use mcsim::prelude::*;
//! # #[derive(Debug, Clone, Copy, PartialEq)] struct MyRecipe;
//! # impl Model for MyRecipe {
//! #     const NAME: &'static str = "mine";
//! #     const VARIANTS: &'static [(&'static str, MyRecipe)] = &[("as-written", MyRecipe)];
//! #     const INVARIANTS: &'static [&'static str] = &[];
//! #     type Params = ();
//! #     fn setup(&self, _: &(), _: &Context, _: &mut Sim) {}
//! # }
//! fn main() -> std::process::ExitCode {
//!     mcsim_cli::main(&[family::<MyRecipe>()])
//! }
//! ```
//!
//! Exit codes: 0 when every verdict is the one expected, 1 on a mismatch, 2 when something
//! could not run: bad input (a scenario file, an argument, a schedule that does not fit),
//! with one line saying what.

#[macro_use]
mod out;
mod args;
mod commands;
mod confirm;
mod explore;
mod findings;
mod gate;
mod merge;
mod program;
mod progress;
mod run;
mod serve;
mod usage;
mod vacuous;

use std::ffi::OsString;
use std::path::Path;
use std::process::ExitCode;

use clap::Parser;

use mcsim::model::Family;

pub use mcsim::report::program;

/// `jobs` if given, else the number of cores; at least 1.
pub(crate) fn jobs_or_cores(jobs: Option<usize>) -> usize {
    jobs.unwrap_or_else(mcsim::run::cores).max(1)
}

/// Each of `items` through `work`, `jobs` at a time, results in the order of `items`.
pub(crate) fn parallel<T: Sync, R: Send>(
    items: &[T],
    jobs: usize,
    work: impl Fn(&T) -> R + Sync,
) -> Vec<R> {
    let next = std::sync::atomic::AtomicUsize::new(0);
    let out = std::sync::Mutex::new(Vec::new());
    std::thread::scope(|scope| {
        for _ in 0..jobs.clamp(1, 64) {
            scope.spawn(|| {
                loop {
                    let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    let Some(item) = items.get(i) else { break };
                    let r = work(item);
                    out.lock().expect("a job panicked").push((i, r));
                }
            });
        }
    });
    let mut out = out.into_inner().expect("a job panicked");
    out.sort_by_key(|(i, _)| *i);
    out.into_iter().map(|(_, r)| r).collect()
}

/// Parses the process's arguments and runs the command against `families`.
pub fn main(families: &[&'static dyn Family]) -> ExitCode {
    main_with(std::env::args_os(), families)
}

/// Like [`main`], with the arguments given (the first is the program's name).
pub fn main_with(
    args: impl IntoIterator<Item = OsString>,
    families: &[&'static dyn Family],
) -> ExitCode {
    let args: Vec<OsString> = args.into_iter().collect();
    if let Some(name) = args
        .first()
        .and_then(|a| Path::new(a).file_stem())
        .and_then(|s| s.to_str())
    {
        mcsim::report::name_program(name);
    }
    let cli = match args::Cli::try_parse_from(&args) {
        Ok(cli) => cli,
        Err(e) if e.use_stderr() => {
            eprintln!("{}", usage::one_line(&e, &args));
            return ExitCode::from(2);
        }
        Err(e) => {
            let _ = e.print();
            return ExitCode::SUCCESS;
        }
    };
    match commands::dispatch(cli.command, families) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::from(2)
        }
    }
}
