//! `mcsim findings`: every scenario measured at a fixed budget, each variant's plain
//! scenario at 2 to 16 clients, every counterexample replayed on a real memcached, and
//! the findings report written as Markdown, HTML and JSON.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use anyhow::{Context, Result, bail};

use crate::findings::{self, Budgets, Findings, ScenarioFindings, measure};
use mcsim::model::Family;
use mcsim_real::MemcachedDaemon;

/// The variants' plain scenario files, for the client sweep.
fn plain_paths(scenarios: &[ScenarioFindings]) -> Vec<((String, String), PathBuf)> {
    let mut by: BTreeMap<(String, String), Vec<&ScenarioFindings>> = BTreeMap::new();
    for s in scenarios.iter().filter(|s| s.error.is_none()) {
        by.entry((s.recipe.clone(), s.variant.clone()))
            .or_default()
            .push(s);
    }
    by.into_iter()
        .filter_map(|((f, v), of)| {
            let p = findings::verdict::plain(&f, &v, &of)?;
            Some(((f, v), PathBuf::from(&p.file)))
        })
        .collect()
}

/// Replays every counterexample on memcached; the version that answered, if any.
fn confirm(
    families: &[&'static dyn Family],
    paths: &[PathBuf],
    scenarios: &mut [ScenarioFindings],
) -> Option<String> {
    let options = mcsim_real::ConfirmOptions {
        max_wait: Duration::from_secs_f64(crate::cli::confirm::MAX_WAIT_S),
        attempts: crate::cli::confirm::ATTEMPTS,
        ..Default::default()
    };
    let lines = crate::cli::confirm::confirm_lines(
        families,
        paths,
        crate::cli::confirm::ALL_JOBS,
        &options,
    );
    let mut version = None;
    for l in lines {
        if let Some(s) = scenarios.iter_mut().find(|s| s.name == l.name) {
            s.confirmed = Some(match l.confirmed {
                Some(v) => {
                    version.get_or_insert(v.clone());
                    Ok(v)
                }
                None => Err(l.text),
            });
        }
    }
    version
}

/// Runs `mcsim findings`.
pub(crate) fn run(
    families: &[&'static dyn Family],
    inputs: &[PathBuf],
    out: &Path,
    jobs: Option<usize>,
    budgets: Budgets,
    replay_on_memcached: bool,
) -> Result<ExitCode> {
    let paths = crate::cli::gate::scenario_paths(inputs)?;
    if paths.is_empty() {
        bail!("no scenario files (*.toml) in the inputs");
    }
    let jobs = crate::cli::jobs_or_cores(jobs);
    let mut command = format!("{} findings", mcsim::report::program());
    for i in inputs {
        command.push_str(&format!(" {}", i.display()));
    }
    command.push_str(&format!(
        " --executions {} --point-executions {} --client-executions {}",
        budgets.executions, budgets.point_executions, budgets.client_executions
    ));
    if !replay_on_memcached {
        command.push_str(" --no-confirm");
    }

    eprintln!("measuring {} scenario files on {jobs} jobs", paths.len());
    let mut scenarios =
        crate::cli::parallel(&paths, jobs, |p| measure::scenario(p, families, budgets));
    let mut clients = BTreeMap::new();
    if budgets.client_executions > 0 {
        let plain = plain_paths(&scenarios);
        eprintln!("client sweep of {} variants", plain.len());
        let swept = crate::cli::parallel(&plain, jobs, |(_, p)| {
            measure::clients(p, families, budgets)
        });
        for ((key, _), r) in plain.into_iter().zip(swept) {
            clients.insert(key, r);
        }
    }
    let (memcached, confirm_skipped) = if !replay_on_memcached {
        (None, Some("not asked (--no-confirm)".to_string()))
    } else if MemcachedDaemon::find_binary().is_none() {
        (
            None,
            Some("no memcached binary on this machine (apt-get install -y memcached)".into()),
        )
    } else {
        eprintln!("replaying the counterexamples on memcached");
        let v = confirm(families, &paths, &mut scenarios);
        let skipped = v
            .is_none()
            .then(|| "no counterexample was confirmed".to_string());
        (v, skipped)
    };
    let f = Findings {
        command,
        version: env!("CARGO_PKG_VERSION").to_string(),
        executions: budgets.executions,
        point_executions: budgets.point_executions,
        client_executions: budgets.client_executions,
        variants: Findings::judge(families, scenarios, clients),
        memcached,
        confirm_skipped,
    };
    std::fs::create_dir_all(out).with_context(|| format!("creating {}", out.display()))?;
    let write = |name: &str, text: String| -> Result<PathBuf> {
        let path = out.join(name);
        std::fs::write(&path, text).with_context(|| format!("writing {}", path.display()))?;
        Ok(path)
    };
    let md = write("findings.md", findings::markdown::render(&f))?;
    let html = write("findings.html", findings::html::render(&f))?;
    let json = write(
        "findings.json",
        serde_json::to_string_pretty(&f).context("serializing the findings")?,
    )?;
    for v in &f.variants {
        outln!(
            "{:<9} {:<16} {:<28} {}",
            v.family,
            v.variant,
            v.holding.word(),
            v.agreement.phrase()
        );
    }
    outln!("\n{}", findings::text::confirm_line(&f));
    outln!(
        "reports: {}, {}, {}",
        md.display(),
        html.display(),
        json.display()
    );
    let errors: Vec<&ScenarioFindings> = f.scenarios().filter(|s| s.error.is_some()).collect();
    for s in &errors {
        outln!("error: {}: {}", s.file, s.error.as_deref().unwrap_or(""));
    }
    Ok(if errors.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(2)
    })
}
