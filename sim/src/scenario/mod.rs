//! Scenarios: a recipe and variant, its parameters, the clients, the servers, the fault
//! plan, the strategy and budget, and the verdict expected — read from TOML.
//!
//! A malformed file gets a [`ScenarioError`] naming the file, the line and the field; the
//! loader never panics on user input. The format is documented in `scenarios/README.md`.

mod error;
mod file;
mod limits;
mod params;
mod sweep;

use std::path::{Path, PathBuf};
use std::rc::Rc;
use std::time::Duration;

pub use error::{FieldError, ScenarioError, did_you_mean, key_at, line_col};
pub use limits::{MAX_CLIENTS, MAX_SERVERS};
pub use params::{MAX_COUNT, Params, YEAR_S};
pub(crate) use sweep::Setting;
pub use sweep::load_points;

use crate::clock::Skew;
use crate::cluster::Distribution;
use crate::exec::{ExecConfig, Sim};
use crate::fault::{EvictTarget, FaultKind, FaultPlan};
use crate::server::ServerConfig;

/// What a recipe builder returns: registers one execution's clients and invariants.
pub type Setup = Rc<dyn Fn(&mut Sim)>;

/// What a recipe needs to build its workload.
#[derive(Debug)]
pub struct BuildContext<'a> {
    /// The variant asked for.
    pub variant: &'a str,
    /// Number of clients.
    pub clients: usize,
    /// Clock skew of each client.
    pub skews: &'a [Skew],
    /// The `[params]` table.
    pub params: &'a Params,
    /// Number of servers (for parameters that name one: [`Params::server`]).
    pub servers: usize,
    /// The servers' item size limit.
    pub item_size_max: u32,
}

/// The recipes a scenario can name. `mcsim-models` provides the catalog of every recipe.
pub trait Catalog {
    /// Builds the setup for `recipe` (a family such as `lock`), or explains what is wrong.
    fn build(&self, recipe: &str, cx: &BuildContext<'_>) -> Result<Setup, FieldError>;

    /// Every family with its variants.
    fn families(&self) -> Vec<(&'static str, &'static [&'static str])>;

    /// The invariants a family checks (the verdicts a scenario may expect).
    fn invariants(&self, recipe: &str) -> &'static [&'static str];

    /// A shared copy, kept by a scenario to rebuild itself (e.g. with fewer clients).
    fn shared(&self) -> Rc<dyn Catalog>;
}

/// Which strategy a scenario runs with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StrategyKind {
    /// [`crate::explore::Random`]
    Random,
    /// [`crate::explore::Pct`] with a depth.
    Pct {
        /// Bug depth.
        depth: usize,
        /// Estimated steps per execution.
        steps: u64,
    },
}

impl StrategyKind {
    /// Parses a strategy name.
    pub fn parse(name: &str, depth: usize, steps: u64) -> Option<StrategyKind> {
        match name {
            "random" => Some(StrategyKind::Random),
            "pct" => Some(StrategyKind::Pct { depth, steps }),
            _ => None,
        }
    }

    /// A fresh strategy for a first seed.
    pub fn make(self, seed: u64) -> Box<dyn crate::explore::Strategy> {
        match self {
            StrategyKind::Random => Box::new(crate::explore::Random::new(seed)),
            StrategyKind::Pct { depth, steps } => {
                Box::new(crate::explore::Pct::new(seed, depth, steps))
            }
        }
    }

    /// Its name.
    pub fn name(self) -> &'static str {
        match self {
            StrategyKind::Random => "random",
            StrategyKind::Pct { .. } => "pct",
        }
    }
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
    /// Registers one execution.
    pub setup: Setup,
    /// For a point of a sweep, the swept fields and their values (`rate_per_s=5`).
    pub point: Vec<String>,
    /// Fields set over the file's own values (a sweep point's, or `--set`).
    settings: Vec<Setting>,
    /// The file's text and the catalog, to rebuild the scenario with other settings.
    origin: Rc<(String, Rc<dyn Catalog>)>,
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
        let (source, catalog) = &*self.origin;
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
        let mut s = Scenario::parse(&self.path, &text, &**catalog)?;
        s.name = self.name.clone();
        s.point = self.point.clone();
        s.settings = self.settings.clone();
        s.executions = self.executions;
        Ok(s)
    }

    /// Reads and checks a scenario file.
    pub fn load(path: &Path, catalog: &dyn Catalog) -> Result<Scenario, ScenarioError> {
        let source = std::fs::read_to_string(path).map_err(|e| ScenarioError {
            file: path.to_path_buf(),
            line: 0,
            column: 0,
            field: None,
            message: format!("cannot read: {e}"),
        })?;
        Scenario::parse(path, &source, catalog)
    }

    /// Checks a scenario given as text; `path` is used in errors and for the name.
    pub fn parse(
        path: &Path,
        source: &str,
        catalog: &dyn Catalog,
    ) -> Result<Scenario, ScenarioError> {
        let at = |e: FieldError| -> ScenarioError {
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
        };
        let f: file::ScenarioFile = toml::from_str(source).map_err(|e| {
            let span = e.span();
            let (line, column) = span
                .as_ref()
                .map(|s| line_col(source, s.start))
                .unwrap_or((0, 0));
            let message = e.message().trim().to_string();
            let field = span
                .as_ref()
                .and_then(|s| key_at(source, s.start))
                .or_else(|| message.split('`').nth(1).map(str::to_string));
            ScenarioError {
                file: path.to_path_buf(),
                line,
                column,
                field,
                message,
            }
        })?;

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
        let server = ServerConfig::default()
            .memory_mb(f.servers.memory_mb)
            .item_size_max(f.servers.item_size_max)
            .no_evict(f.servers.no_evict)
            .phase(Duration::from_millis(f.servers.phase_ms));
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
                    "unknown strategy {:?}; known: random, pct",
                    f.explore.strategy.get_ref()
                ),
            ))
        })?;
        let config = ExecConfig {
            servers: vec![server; count],
            distribution,
            latency_min: Duration::from_micros(lat_min),
            latency_max: Duration::from_micros(lat_max),
            max_steps: f.timing.max_steps,
            max_time: Duration::from_secs(f.timing.max_time_s),
            faults,
            trace: false,
        };

        let recipe = f.recipe.get_ref().clone();
        let families = catalog.families();
        let Some((_, variants)) = families.iter().find(|(name, _)| *name == recipe) else {
            let known: Vec<&str> = families.iter().map(|f| f.0).collect();
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
        if !variants.contains(&variant.as_str()) {
            return Err(at(FieldError::new(
                "variant",
                Some(f.variant.span()),
                format!(
                    "unknown variant {variant:?} of {recipe}{}; known: {}",
                    did_you_mean(&variant, variants.iter().copied()),
                    variants.join(", ")
                ),
            )));
        }
        let params = Params::new(f.params);
        let cx = BuildContext {
            variant: &variant,
            clients,
            skews: &skews,
            params: &params,
            servers: count,
            item_size_max: f.servers.item_size_max,
        };
        let setup = catalog.build(&recipe, &cx).map_err(at)?;
        params.finish(&format!("{recipe}/{variant}")).map_err(at)?;

        let expect = f.expect.verdict.get_ref().clone();
        let mut known = vec![
            "pass".to_string(),
            "livelock".into(),
            "stuck".into(),
            "panic".into(),
            "client_error".into(),
        ];
        known.extend(catalog.invariants(&recipe).iter().map(|s| s.to_string()));
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
            setup,
            point: Vec::new(),
            settings: Vec::new(),
            origin: Rc::new((source.to_string(), catalog.shared())),
        })
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
        if rule.keys.is_some() && kind != FaultKind::Evict {
            return Err(FieldError::new(
                format!("faults.{}.keys", kind.name()),
                Some(rule.probability.span()),
                "only evict takes keys",
            ));
        }
        if kind == FaultKind::Evict {
            plan.evict = match &rule.keys {
                Some(keys) => EvictTarget::Keys(keys.clone()),
                None => EvictTarget::Any,
            };
        }
        plan = plan.allow(kind, rule.max, p);
    }
    Ok(plan)
}
