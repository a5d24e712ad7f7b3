//! Scenarios: a recipe and variant, its parameters, the clients, the servers, the fault
//! plan, the strategy and budget, and the verdict expected — read from TOML.
//!
//! A malformed file gets a [`ScenarioError`] naming the file, the line and the field; the
//! loader never panics on user input. The format is documented in `scenarios/README.md`.

mod error;
mod expect;
mod file;
mod limits;
mod portable;
mod source;
mod strategy;
mod surroundings;
mod sweep;

pub(crate) use portable::Portable;

use std::path::{Path, PathBuf};
use std::rc::Rc;
use std::time::Duration;

pub use crate::model::field::{FieldError, did_you_mean, key_at, line_col};
pub use error::ScenarioError;
pub use expect::{Expectation, Judgement};
pub use limits::{MAX_CLIENTS, MAX_SERVERS};
pub use source::MAX_FILE_BYTES;
use source::{read_source, table_at};
pub use strategy::StrategyKind;
pub use surroundings::Surroundings;
pub(crate) use sweep::Setting;
pub use sweep::load_points;

use crate::clock::Skew;
use crate::cluster::Distribution;
use crate::exec::ExecConfig;
use crate::fault::{FaultKind, FaultPlan};
use crate::model::{Context, Family, ParamSource};

pub use crate::model::Setup;

/// The families a scenario may name, as [`crate::model::family`] makes them.
pub type Families = Rc<[&'static dyn Family]>;

/// Where a scenario came from, to build it again with other settings.
#[derive(Clone)]
pub(crate) enum Origin {
    /// A file's text (after any `--set`) and the families it was read with.
    File(Rc<(String, Families)>),
    /// Code ([`crate::check()`]).
    Code {
        /// Builds the scenario again with a number of clients.
        rebuild: Rc<dyn Fn(usize) -> Scenario>,
        /// The `MCSIM_REPLAY` tag naming the model (`lock/add`).
        tag: String,
        /// The `cargo test` command that reruns the test that ran it (with
        /// `MCSIM_REPLAY` set, that execution only).
        rerun: String,
    },
}

/// A loaded scenario, ready to run.
#[derive(Clone)]
pub struct Scenario {
    /// Its name (the file stem unless the file sets one).
    pub name: String,
    /// The file it came from.
    pub path: PathBuf,
    /// What it shows.
    pub description: String,
    /// Recipe family.
    pub recipe: String,
    /// Variant.
    pub variant: String,
    /// Number of clients.
    pub clients: usize,
    /// Servers, latencies, budgets, faults.
    pub config: ExecConfig,
    /// The strategy.
    pub strategy: StrategyKind,
    /// Executions the budget allows.
    pub executions: u64,
    /// First seed.
    pub seed: u64,
    /// The expected verdict label: `pass`, an invariant name, `livelock`, `panic` or
    /// `client_error`.
    pub expect: String,
    /// Every verdict the run must find, and those it may find beside them (`expect` is
    /// its headline).
    pub expectation: Expectation,
    /// The bounds `mcsim explore` and `mcsim check --exhaustive` prove it within.
    pub bounds: ExhaustiveBounds,
    /// Registers one execution.
    pub setup: Setup,
    /// For a point of a sweep, the swept fields and their values (`rate_per_s=5`).
    pub point: Vec<String>,
    /// Fields set over the file's own values (a sweep point's, or `--set`).
    pub(crate) settings: Vec<Setting>,
    /// What builds the scenario again with other settings.
    pub(crate) origin: Origin,
}

/// The bounds of an exhaustive search, from a scenario's `[explore]` table: `clients`,
/// `preemptions` and `faults` (a number, or `"all"` for no bound).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ExhaustiveBounds {
    /// Clients to explore with (the scenario's own count, at most 3, unless given).
    pub clients: usize,
    /// At most this many preemptions per execution (`None`: every schedule).
    pub preemptions: Option<u32>,
    /// At most this many faults per execution (`None`: only the plan's budgets).
    pub faults: Option<u32>,
    /// Draws of the workload searched, one after the other (1: the earliest instants).
    pub draws: u32,
    /// Tick-phase classes searched at most, when the scenario leaves the phase free
    /// (`None`: every class, within [`PHASE_BUDGET`](crate::exhaustive::PHASE_BUDGET)).
    pub phases: Option<usize>,
}

impl ExhaustiveBounds {
    /// Clients when the file gives none: the scenario's, at most this many.
    pub const DEFAULT_CLIENTS: usize = 3;
    /// Preemptions when the file gives none (as CHESS found, the bugs people meet need
    /// few).
    pub const DEFAULT_PREEMPTIONS: u32 = 2;
    /// Faults when the file gives none.
    pub const DEFAULT_FAULTS: u32 = 1;
}

/// Reads a bound: a number, or `"all"` for none.
fn bound(field: &str, value: &toml::Spanned<toml::Value>) -> Result<Option<u32>, FieldError> {
    match value.get_ref() {
        toml::Value::Integer(n) if (0..=1000).contains(n) => Ok(Some(*n as u32)),
        toml::Value::String(s) if s == "all" => Ok(None),
        other => Err(FieldError::new(
            field,
            Some(value.span()),
            format!("{other} is not a bound: give a number from 0 to 1000, or \"all\""),
        )),
    }
}

impl std::fmt::Debug for Scenario {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Scenario")
            .field("name", &self.name)
            .field("recipe", &self.recipe)
            .field("variant", &self.variant)
            .field("clients", &self.clients)
            .field("expect", &self.expect)
            .finish()
    }
}

impl Scenario {
    /// The same scenario with another number of clients (skews are recomputed for the new
    /// count; an explicit `skews_ms` list is cut or fails).
    pub fn with_clients(&self, clients: usize) -> Result<Scenario, ScenarioError> {
        if let Origin::Code { rebuild, .. } = &self.origin {
            return Ok(rebuild(clients));
        }
        self.with_changes(|doc| {
            doc.insert("clients".into(), toml::Value::Integer(clients as i64));
            if let Some(toml::Value::Table(t)) = doc.get_mut("timing")
                && let Some(toml::Value::Array(skews)) = t.get_mut("skews_ms")
            {
                skews.truncate(clients);
            }
        })
    }

    /// The same scenario with fields of its file set, each `path=value` with a dotted
    /// path and a TOML value (`servers.count=3`, `params.rate_per_s=0.5`; a value that is
    /// not TOML is a string: `servers.distribution=ketama`). The result is read again with
    /// every check a file gets, so a wrong path or value is an error naming the field.
    pub fn with_set(&self, assignments: &[String]) -> Result<Scenario, ScenarioError> {
        let mut parsed = Vec::new();
        for a in assignments {
            let setting = Setting::parse(a).map_err(|message| ScenarioError {
                file: self.path.clone(),
                line: 0,
                column: 0,
                field: Some(a.split('=').next().unwrap_or_default().to_string()),
                message,
            })?;
            parsed.push(setting);
        }
        let mut s = self.with_changes(|doc| {
            for setting in &parsed {
                setting.apply(doc);
            }
        })?;
        for setting in parsed {
            s.settings.retain(|old| old.path != setting.path);
            s.settings.push(setting);
        }
        Ok(s)
    }

    /// The fields this scenario sets over its file (a sweep point's values, or `--set`),
    /// as `path=value` arguments that rebuild it with [`Scenario::with_set`].
    pub fn settings(&self) -> Vec<String> {
        self.settings.iter().map(Setting::to_string).collect()
    }

    /// The same scenario with its file's TOML changed by `edit` and read again, with every
    /// check a file gets. Keeps the name, the sweep point and the budget.
    pub(crate) fn with_changes(
        &self,
        edit: impl FnOnce(&mut toml::Table),
    ) -> Result<Scenario, ScenarioError> {
        let Origin::File(origin) = &self.origin else {
            return Err(ScenarioError {
                file: self.path.clone(),
                line: 0,
                column: 0,
                field: None,
                message: "built in code: there is no file to set fields of".into(),
            });
        };
        let (source, families) = &**origin;
        let mut doc: toml::Table = toml::from_str(source).map_err(|e| ScenarioError {
            file: self.path.clone(),
            line: 0,
            column: 0,
            field: None,
            message: e.to_string(),
        })?;
        doc.remove("sweep");
        edit(&mut doc);
        let text = toml::to_string(&doc).unwrap_or_default();
        let mut s = Scenario::parse(&self.path, &text, families)?;
        s.name = self.name.clone();
        s.point = self.point.clone();
        s.settings = self.settings.clone();
        s.executions = self.executions;
        Ok(s)
    }

    /// Reads and checks a scenario file.
    pub fn load(path: &Path, families: &[&'static dyn Family]) -> Result<Scenario, ScenarioError> {
        let source = read_source(path)?;
        Scenario::parse(path, &source, families)
    }

    /// Checks a scenario given as text; `path` is used in errors and for the name.
    pub fn parse(
        path: &Path,
        source: &str,
        families: &[&'static dyn Family],
    ) -> Result<Scenario, ScenarioError> {
        let at = |e: FieldError| located(path, source, e);
        let f: file::ScenarioFile =
            toml::from_str(source).map_err(|e| serde_error(path, source, e))?;

        limits::check(&f, source).map_err(at)?;
        let clients = *f.clients.get_ref();
        let [lat_min, lat_max] = *f.timing.latency_us.get_ref();
        let skews = skews(&f.timing, clients).map_err(at)?;
        let distribution =
            Distribution::parse(f.servers.distribution.get_ref()).ok_or_else(|| {
                at(FieldError::new(
                    "servers.distribution",
                    Some(f.servers.distribution.span()),
                    format!(
                        "unknown distribution {:?}; known: modulo, ketama",
                        f.servers.distribution.get_ref()
                    ),
                ))
            })?;
        let count = *f.servers.count.get_ref();
        let server = f.servers.config();
        let faults = fault_plan(&f.faults).map_err(at)?;
        let strategy = StrategyKind::parse(
            f.explore.strategy.get_ref(),
            f.explore.depth,
            f.explore.steps_estimate,
        )
        .ok_or_else(|| {
            at(FieldError::new(
                "explore.strategy",
                Some(f.explore.strategy.span()),
                format!(
                    "unknown strategy {:?}; known: {}",
                    f.explore.strategy.get_ref(),
                    StrategyKind::NAMES.join(", ")
                ),
            ))
        })?;
        let bounds = ExhaustiveBounds {
            clients: match &f.explore.clients {
                Some(c) if (1..=clients as u64).contains(c.get_ref()) => *c.get_ref() as usize,
                Some(c) => {
                    return Err(at(FieldError::new(
                        "explore.clients",
                        Some(c.span()),
                        format!("must be from 1 to the scenario's {clients} clients"),
                    )));
                }
                None => clients.min(ExhaustiveBounds::DEFAULT_CLIENTS),
            },
            preemptions: bound("explore.preemptions", &f.explore.preemptions).map_err(at)?,
            faults: bound("explore.faults", &f.explore.faults).map_err(at)?,
            draws: f.explore.draws as u32,
            phases: f.explore.phases.map(|p| p as usize),
        };
        let config = ExecConfig {
            servers: vec![server; count],
            distribution,
            latency_min: Duration::from_micros(lat_min),
            latency_max: Duration::from_micros(lat_max),
            max_steps: f.timing.max_steps,
            max_time: Duration::from_secs(f.timing.max_time_s),
            faults,
            trace: false,
            phase_free: f.servers.phase_ms.is_none(),
            past_violation: false,
        };

        let recipe = f.recipe.get_ref().clone();
        let Some(family) = families.iter().find(|fam| fam.name() == recipe) else {
            let known: Vec<&str> = families.iter().map(|fam| fam.name()).collect();
            return Err(at(FieldError::new(
                "recipe",
                Some(f.recipe.span()),
                format!(
                    "unknown recipe {recipe:?}{}; known: {}",
                    did_you_mean(&recipe, known.iter().copied()),
                    known.join(", ")
                ),
            )));
        };
        let variant = f.variant.get_ref().clone();
        let cx = Context {
            clients,
            skews,
            servers: count,
            item_size_max: f.servers.item_size_max,
        };
        let params = ParamSource {
            source,
            values: &f.params,
        };
        let setup = family.build(&variant, params, &cx).map_err(|mut e| {
            if e.field == "variant" {
                e.span = Some(f.variant.span());
            }
            at(e)
        })?;

        let expect = f.expect.verdict.get_ref().clone();
        let known: Vec<String> = crate::Verdict::GENERAL_LABELS
            .iter()
            .chain(family.invariants())
            .map(|s| s.to_string())
            .collect();
        if !known.contains(&expect) {
            return Err(at(FieldError::new(
                "expect.verdict",
                Some(f.expect.verdict.span()),
                format!(
                    "unknown verdict {expect:?}{}; known: {}",
                    did_you_mean(&expect, known.iter().map(String::as_str)),
                    known.join(", ")
                ),
            )));
        }
        let mut expectation = Expectation::single(&expect);
        for (field, list) in [
            ("expect.also", &f.expect.also),
            ("expect.may", &f.expect.may),
        ] {
            let Some(list) = list else { continue };
            for label in list.get_ref() {
                let problem = if !known.contains(label) || label == "pass" {
                    Some(format!(
                        "unknown verdict {label:?}{}; known: {}",
                        did_you_mean(label, known.iter().map(String::as_str)),
                        known.join(", ")
                    ))
                } else if expect == "pass" {
                    Some(format!(
                        "{field} lists {label:?} but the verdict expected is pass"
                    ))
                } else {
                    None
                };
                if let Some(message) = problem {
                    return Err(at(FieldError::new(field, Some(list.span()), message)));
                }
                let into = if field == "expect.also" {
                    &mut expectation.must
                } else {
                    &mut expectation.may
                };
                if !into.contains(label) {
                    into.push(label.clone());
                }
            }
        }
        expectation.sometimes =
            expect::sometimes(&f.expect, &config.faults, &expect).map_err(at)?;
        let name = f.name.unwrap_or_else(|| {
            path.file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_default()
        });
        Ok(Scenario {
            name,
            path: path.to_path_buf(),
            description: f.description,
            recipe,
            variant,
            clients,
            config,
            strategy,
            executions: f.explore.executions,
            seed: f.explore.seed,
            expect,
            expectation,
            bounds,
            setup,
            point: Vec::new(),
            settings: Vec::new(),
            origin: Origin::File(Rc::new((source.to_string(), families.into()))),
        })
    }
}

/// A file's TOML or shape error, at its line and field.
fn serde_error(path: &Path, source: &str, e: toml::de::Error) -> ScenarioError {
    let span = e.span();
    let (line, column) = span
        .as_ref()
        .map(|s| line_col(source, s.start))
        .unwrap_or((0, 0));
    let message = e.message().trim().to_string();
    // A missing field is reported at the table that lacks it: the field is the one named
    // in the message, inside that table.
    let missing = message
        .strip_prefix("missing field `")
        .and_then(|m| m.split('`').next());
    let field = match missing {
        Some(name) => Some(
            match span.as_ref().and_then(|s| table_at(source, s.start)) {
                Some(table) => format!("{table}.{name}"),
                None => name.to_string(),
            },
        ),
        None => span
            .as_ref()
            .and_then(|s| key_at(source, s.start))
            .or_else(|| message.split('`').nth(1).map(str::to_string)),
    };
    ScenarioError {
        file: path.to_path_buf(),
        line,
        column,
        field,
        message,
    }
}

/// A field's error at its line in `source`.
fn located(path: &Path, source: &str, e: FieldError) -> ScenarioError {
    let (line, column) = e
        .span
        .as_ref()
        .map(|s| line_col(source, s.start))
        .unwrap_or((0, 0));
    ScenarioError {
        file: path.to_path_buf(),
        line,
        column,
        field: Some(e.field),
        message: e.message,
    }
}

fn skews(t: &file::TimingFile, clients: usize) -> Result<Vec<Skew>, FieldError> {
    if let Some(list) = &t.skews_ms {
        if list.get_ref().len() != clients {
            return Err(FieldError::new(
                "timing.skews_ms",
                Some(list.span()),
                format!("lists {} skews for {clients} clients", list.get_ref().len()),
            ));
        }
        return Ok(list.get_ref().iter().map(|ms| Skew::millis(*ms)).collect());
    }
    if let Some(range) = &t.skew_ms {
        let [lo, hi] = *range.get_ref();
        if lo > hi {
            return Err(FieldError::new(
                "timing.skew_ms",
                Some(range.span()),
                "minimum above maximum",
            ));
        }
        // Spread evenly: deterministic without a seed, so a schedule replays alone.
        return Ok((0..clients)
            .map(|i| {
                let ms = if clients == 1 {
                    lo
                } else {
                    lo + (hi - lo) * i as i64 / (clients as i64 - 1)
                };
                Skew::millis(ms)
            })
            .collect());
    }
    Ok(vec![Skew::default(); clients])
}

fn fault_plan(f: &file::FaultsFile) -> Result<FaultPlan, FieldError> {
    let mut plan = FaultPlan::none();
    plan.timeout = Duration::from_millis(f.timeout_ms);
    plan.restart_after = Duration::from_millis(f.restart_after_ms);
    plan.warm_restart = f.warm_restart;
    plan.rejoin_after = Duration::from_millis(f.rejoin_after_ms);
    plan.pause_for = Duration::from_millis(f.pause_ms);
    for (kind, rule) in [
        (FaultKind::Evict, &f.evict),
        (FaultKind::ReplyLost, &f.reply_lost),
        (FaultKind::RequestLost, &f.request_lost),
        (FaultKind::Crash, &f.crash),
        (FaultKind::SkipSecond, &f.skip_second),
        (FaultKind::Leave, &f.leave),
        (FaultKind::Pause, &f.pause),
        (FaultKind::Die, &f.die),
        (FaultKind::TooLarge, &f.too_large),
    ] {
        let Some(rule) = rule else { continue };
        let p = *rule.probability.get_ref();
        if !(0.0..=1.0).contains(&p) {
            return Err(FieldError::new(
                format!("faults.{}.probability", kind.name()),
                Some(rule.probability.span()),
                format!("{p} is not a probability (0 to 1)"),
            ));
        }
        let mut allowed = FaultPlan::none().allow(kind, rule.max, p);
        if let Some(keys) = &rule.keys {
            let keys: Vec<&str> = keys.iter().map(String::as_str).collect();
            allowed = allowed.on_keys(&keys);
        }
        plan = plan.and(allowed);
    }
    Ok(plan)
}
