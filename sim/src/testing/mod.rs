//! Checking a model from a plain `#[test]`, in one expression (the layer above the model
//! API, scenarios and runs: a check builds a scenario from code and runs it):
//!
//! ```text
//! let figures = mcsim::check(Limiter::Fixed).clients(3).faults(FaultPlan::evictions()).random(2_000);
//! ```
//!
//! On a verdict other than the one expected (`pass` unless [`Check::expect`] says
//! otherwise) the test panics with the invariant, the shrunk timeline and the line that
//! replays it: `MCSIM_REPLAY='<family>/<variant>:<clients>:<schedule>#<trace hash>' cargo test …`.
//! With that variable set, the check of that model replays the schedule instead of
//! exploring; [`Check::replay`] does the same from code.

mod figures;
mod rerun;

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::rc::Rc;
use std::time::Duration;

use crate::clock::Skew;
use crate::exec::ExecConfig;
use crate::exhaustive::ExploreOptions;
use crate::explore::Schedule;
use crate::fault::FaultPlan;
use crate::model::{Context, Model};
use crate::report;
use crate::run::{self, RunOptions, RunReport};
use crate::scenario::{Origin, Scenario, Setup, StrategyKind, did_you_mean};
use crate::server::ServerConfig;

pub use figures::{Figures, Proof};
use figures::{one_execution, replayed};

/// The environment variable that replays a failure a check printed.
pub const REPLAY_VAR: &str = "MCSIM_REPLAY";

/// Starts a check of `model` (a variant of a family): 2 clients, one server, no faults,
/// the model's default parameters, expecting `pass`. Finish it with [`Check::random`],
/// [`Check::pct`], [`Check::dfs`] or [`Check::replay`].
#[track_caller]
pub fn check<M: Model>(model: M) -> Check<M> {
    Check {
        caller: std::panic::Location::caller().file(),
        model,
        params: M::Params::default(),
        clients: 2,
        skews: Vec::new(),
        config: ExecConfig {
            trace: false,
            ..ExecConfig::default()
        },
        seed: 0,
        expect: "pass".into(),
        only: None,
        search: ExploreOptions::default(),
    }
}

/// A check being set up: the model, its parameters and the world it runs in.
#[derive(Debug, Clone)]
pub struct Check<M: Model> {
    /// The source file of the test that started it (its rerun command names its target).
    caller: &'static str,
    model: M,
    params: M::Params,
    clients: usize,
    skews: Vec<Skew>,
    config: ExecConfig,
    seed: u64,
    expect: String,
    /// The invariants checked, when not all the model registers.
    only: Option<Vec<String>>,
    /// The bounds of [`Check::dfs`].
    search: ExploreOptions,
}

impl<M: Model> Check<M> {
    /// These parameters instead of the defaults.
    pub fn params(mut self, params: M::Params) -> Self {
        self.params = params;
        self
    }

    /// The parameters changed by `edit` (`.with(|p| p.rounds = Count(5))`).
    pub fn with(mut self, edit: impl FnOnce(&mut M::Params)) -> Self {
        edit(&mut self.params);
        self
    }

    /// This many concurrent clients.
    pub fn clients(mut self, clients: usize) -> Self {
        self.clients = clients.max(1);
        self
    }

    /// Each client's clock skew, in client order (missing ones have none).
    pub fn skews(mut self, skews: Vec<Skew>) -> Self {
        self.skews = skews;
        self
    }

    /// This many servers, keys spread by the default distribution.
    pub fn servers(mut self, servers: usize) -> Self {
        let one = self.config.servers[0].clone();
        self.config.servers = vec![one; servers.max(1)];
        self
    }

    /// Every server configured so (memory limit, item size limit, …).
    pub fn server(mut self, config: ServerConfig) -> Self {
        let n = self.config.servers.len();
        self.config.servers = vec![config; n];
        self
    }

    /// The faults executions may suffer ([`FaultPlan::evictions`],
    /// [`FaultPlan::lost_replies`], combined with [`FaultPlan::and`]).
    pub fn faults(mut self, plan: FaultPlan) -> Self {
        self.config.faults = plan;
        self
    }

    /// The shortest and longest time a call is in flight.
    pub fn latency(mut self, min: Duration, max: Duration) -> Self {
        self.config.latency_min = min;
        self.config.latency_max = max.max(min);
        self
    }

    /// The step budget of one execution.
    pub fn max_steps(mut self, steps: u64) -> Self {
        self.config.max_steps = steps;
        self
    }

    /// The virtual-time budget of one execution.
    pub fn max_time(mut self, time: Duration) -> Self {
        self.config.max_time = time;
        self
    }

    /// The first seed (execution `i` uses `seed + i`).
    pub fn seed(mut self, seed: u64) -> Self {
        self.seed = seed;
        self
    }

    /// The verdict expected instead of `pass`: an invariant of the model (the check then
    /// fails if exploration does *not* find it), or `livelock`, `stuck`, `panic`,
    /// `client_error`.
    pub fn expect(mut self, verdict: &str) -> Self {
        let mut known = crate::Verdict::GENERAL_LABELS.to_vec();
        known.extend(M::INVARIANTS);
        assert!(
            known.contains(&verdict),
            "mcsim: {verdict:?} is not a verdict of {}{}; known: {}",
            M::NAME,
            did_you_mean(verdict, known.iter().copied()),
            known.join(", ")
        );
        self.expect = verdict.to_string();
        self
    }

    /// Checks only these invariants of the model (the others are not evaluated): to
    /// look at one property while another is known to break. Panics, listing the
    /// declared ones, on a name the model does not declare.
    pub fn only(mut self, invariants: &[&str]) -> Self {
        for name in invariants {
            assert!(
                M::INVARIANTS.contains(name),
                "mcsim: {name:?} is not an invariant of {}{}; declared: {}",
                M::NAME,
                did_you_mean(name, M::INVARIANTS.iter().copied()),
                M::INVARIANTS.join(", ")
            );
        }
        self.only = Some(invariants.iter().map(|n| n.to_string()).collect());
        self
    }

    /// `executions` seeded random executions.
    #[track_caller]
    pub fn random(self, executions: u64) -> Figures {
        self.sample(StrategyKind::Random, executions)
    }

    /// `executions` seeded random executions under the plan's own probabilities, every
    /// one run to its end and none judged: how often each verdict happens, read with
    /// [`Figures::rate`], for a test that measures a recipe (a rate, a mean) instead of
    /// asserting one verdict. Never panics on a verdict; the first failure is kept as
    /// found (not shrunk).
    #[track_caller]
    pub fn measure(self, executions: u64) -> Figures {
        let s = self.scenario(executions);
        let options = RunOptions {
            strategy: StrategyKind::Random,
            seed: self.seed,
            executions,
            keep_going: true,
            shrink: false,
            expect: crate::scenario::Expectation::single("pass"),
        };
        Figures::of(run::run(&s, &options), false)
    }

    /// `executions` seeded swarm executions ([`crate::explore::Swarm`]: each draws its
    /// own fault rate and timing style, and aims its faults), the search the scenario
    /// files default to. Prefer it to [`Check::random`] to find a fault's bug; keep
    /// `random` for rates under the plan's probabilities.
    #[track_caller]
    pub fn swarm(self, executions: u64) -> Figures {
        self.sample(StrategyKind::Swarm, executions)
    }

    /// `executions` PCT executions with bug depth `depth`.
    #[track_caller]
    pub fn pct(self, depth: usize, executions: u64) -> Figures {
        self.sample(StrategyKind::Pct { depth, steps: 200 }, executions)
    }

    /// `executions` partial-order-sampling executions ([`crate::explore::Pos`]): an
    /// interleaving bug among calls on unrelated keys is found sooner than by
    /// [`Check::random`]; faults fire with the plan's probabilities.
    #[track_caller]
    pub fn pos(self, executions: u64) -> Figures {
        self.sample(StrategyKind::Pos, executions)
    }

    /// [`Check::dfs`] with at most `faults` faults per execution (of the kinds the plan
    /// allows, each within its own budget); without it, the plan's budgets alone.
    pub fn max_faults(mut self, faults: u32) -> Self {
        self.search.max_faults = Some(faults);
        self
    }

    /// [`Check::dfs`] searches at most this many tick-phase classes (by default every
    /// class, while the searches so far took fewer than
    /// [`PHASE_BUDGET`](crate::exhaustive::PHASE_BUDGET) executions); the proof says how
    /// many there were.
    pub fn max_phases(mut self, phases: usize) -> Self {
        self.search.max_phases = Some(phases.max(1));
        self
    }

    /// [`Check::dfs`] searches this many draws of the workload's own timing (each
    /// client's first call at k/n of its window), one after the other.
    pub fn draws(mut self, draws: u32) -> Self {
        self.search.draws = draws.max(1);
        self
    }

    /// Every schedule within `max_preemptions` (`None`: unbounded), the fault bound
    /// ([`Check::max_faults`]) and the plan's budgets, at every tick-phase class up to
    /// [`Check::max_phases`], with partial-order reduction. Without a counterexample the
    /// figures carry the [`Proof`]: what was covered, as one sentence, also printed.
    #[track_caller]
    pub fn dfs(self, max_preemptions: Option<u32>) -> Figures {
        if let Some(figures) = self.replay_from_env() {
            return figures;
        }
        let s = self.scenario(u64::MAX);
        let options = ExploreOptions {
            max_preemptions,
            ..self.search
        };
        let r = crate::exhaustive::explore(&s, &options, &mut |_| true);
        // Executions per verdict, as a sampling run counts them: the failing ones under
        // their label, every other as a pass (one cut short as redundant repeats one
        // that passed: the search stops at its first failure).
        let label = r.failure.as_ref().map(|f| f.execution.verdict.label());
        let found: BTreeMap<String, u64> = label.iter().map(|l| (l.clone(), r.failures)).collect();
        let mut verdicts = found.clone();
        let passed = r.stats.executions.saturating_sub(r.failures);
        if passed > 0 {
            verdicts.insert("pass".into(), passed);
        }
        let proof = (!r.interrupted && r.failure.is_none()).then(|| Proof {
            clients: s.clients,
            preemptions: r.preemptions_searched,
            faults: r.faults_searched,
            fault_kinds: s
                .config
                .faults
                .rules
                .iter()
                .filter(|(_, rule)| rule.max > 0)
                .map(|(k, _)| *k)
                .collect(),
            phases: r.phases.clone(),
            draws: r.draws_searched,
            executions: r.stats.executions,
            states: r.stats.states,
            statement: format!(
                "{}; fixed: {}; visited {} executions and {} states",
                r.covered(&s),
                crate::exhaustive::ExploreReport::fixed(&options),
                r.stats.executions,
                r.stats.states
            ),
        });
        let mut figures = self.judge(
            &s,
            StrategyKind::Random,
            RunReport {
                executions: r.stats.executions,
                verdicts,
                first_failure: r.failure,
                metrics: BTreeMap::new(),
                calls: r.calls,
                steps: 0,
                found,
                ..RunReport::default()
            },
            !r.interrupted,
        );
        if let Some(proof) = &proof {
            eprintln!("mcsim: {}: no violation in {proof}", s.name);
        }
        figures.proof = proof;
        figures
    }

    /// Every schedule, explored by loom instead of mcsim's own explorer
    /// ([`crate::loom::LoomChoices`]): the cross-check of `dfs` for any model. Built only
    /// with `--cfg loom`; the model and its parameters must be `Send + Sync` (plain data).
    #[cfg(loom)]
    #[track_caller]
    pub fn loom(self) -> Figures
    where
        M: Send + Sync,
        M::Params: Send + Sync,
    {
        use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
        use std::sync::{Arc, Mutex};
        let executions = Arc::new(AtomicU64::new(0));
        let found: Arc<Mutex<Option<Schedule>>> = Arc::default();
        let (count, first, this) = (executions.clone(), found.clone(), self.clone());
        let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(move || {
            let mut builder = loom::model::Builder::new();
            builder.max_branches = 1_000_000;
            builder.check(move || {
                count.fetch_add(1, Relaxed);
                let s = this.build(this.clients, 1);
                let mut strategy = crate::loom::LoomChoices;
                let e = crate::exec::execute(&s.config, &*s.setup, &mut strategy, 0);
                if !e.verdict.is_pass() {
                    *first.lock().expect("one loom execution at a time") = Some(e.schedule);
                    panic!("mcsim: loom reached {}", e.verdict.label());
                }
            });
        }));
        let schedule = found.lock().expect("loom is done").take();
        if let (Err(payload), None) = (&outcome, &schedule) {
            std::panic::resume_unwind(Box::new(format!("{payload:?}")));
        }
        let s = self.scenario(1);
        let executions = executions.load(Relaxed);
        let report = match schedule {
            Some(schedule) => {
                let e = run::replay(&s, &schedule);
                RunReport {
                    executions,
                    ..one_execution(&e)
                }
                .with_failure(replayed(s.clients, e))
            }
            None => RunReport {
                executions,
                verdicts: BTreeMap::from([("pass".to_string(), executions)]),
                first_failure: None,
                metrics: BTreeMap::new(),
                calls: 0,
                steps: 0,
                ..RunReport::default()
            },
        };
        // Loom returns without a failure only once it covered every schedule.
        self.judge(&s, StrategyKind::Random, report, true)
    }

    /// Replays one schedule, as printed in a failure's `MCSIM_REPLAY` line (the whole
    /// `<family>/<variant>:<clients>:<schedule>`, or the schedule alone), and prints its
    /// timeline.
    #[track_caller]
    pub fn replay(self, token: &str) -> Figures {
        // `<tag>:<clients>:<schedule>#<trace hash>`, the tag holding no `:`; or the
        // schedule alone; the hash, when given, is checked.
        let (token, hash) = match token.rsplit_once('#') {
            Some((body, hash)) => (body, Some(hash)),
            None => (token, None),
        };
        let (clients, schedule) = match token.split_once(':') {
            Some((tag, rest)) if !tag.starts_with("mc") => match rest.split_once(':') {
                Some((n, schedule)) => (n.parse::<usize>().ok(), schedule.to_string()),
                None => (None, rest.to_string()),
            },
            _ => (None, token.to_string()),
        };
        let schedule = Schedule::parse(&schedule)
            .unwrap_or_else(|e| panic!("mcsim: cannot read the schedule {token:?}: {e}"));
        let s = self
            .scenario(1)
            .with_clients(clients.unwrap_or(self.clients));
        let s = s.unwrap_or_else(|e| panic!("mcsim: {e}"));
        let e = run::replay(&s, &schedule);
        eprintln!("{}", e.trace.render());
        eprintln!("verdict: {}\n  {}", e.verdict.label(), e.verdict);
        let got = format!("{:016x}", e.trace.hash());
        if let Some(want) = hash.filter(|h| *h != got) {
            panic!(
                "mcsim: this replay's trace hash is {got}, not the {want} its line was printed with: \
                 the line comes from another version of mcsim, or the model or the test changed \
                 since, and this is another execution"
            );
        }
        let report = one_execution(&e);
        let failure = (!e.verdict.is_pass()).then(|| replayed(s.clients, e));
        self.judge(
            &s,
            StrategyKind::Random,
            RunReport {
                first_failure: failure,
                ..report
            },
            false,
        )
    }

    /// The scenario this check runs (what a scenario file would describe).
    pub fn scenario(&self, executions: u64) -> Scenario {
        self.build(self.clients, executions)
    }

    fn tag(&self) -> String {
        format!("{}/{}", M::NAME, self.model.variant_name())
    }

    #[track_caller]
    fn sample(self, strategy: StrategyKind, executions: u64) -> Figures {
        if let Some(figures) = self.replay_from_env() {
            return figures;
        }
        let s = self.scenario(executions);
        let options = RunOptions {
            strategy,
            seed: self.seed,
            executions,
            keep_going: false,
            shrink: true,
            expect: crate::scenario::Expectation::single(&self.expect),
        };
        let report = run::run(&s, &options);
        self.judge(&s, strategy, report, false)
    }

    /// `MCSIM_REPLAY`, when it names this model.
    fn replay_from_env(&self) -> Option<Figures> {
        let token = std::env::var(REPLAY_VAR).ok()?;
        let prefix = format!("{}:", self.tag());
        token
            .starts_with(&prefix)
            .then(|| self.clone().replay(&token))
    }

    fn build(&self, clients: usize, executions: u64) -> Scenario {
        let mut skews = self.skews.clone();
        skews.resize(clients, Skew::default());
        let cx = Context {
            clients,
            skews,
            servers: self.config.servers.len(),
            item_size_max: self.config.servers[0].item_size_max,
        };
        if let Err(e) = self.model.check_params(&self.params, &cx) {
            panic!("mcsim: {}: field `{}`: {}", self.tag(), e.field, e.message);
        }
        let (model, params) = (self.model, self.params.clone());
        if let Err(e) = crate::model::recheck_params(&self.params) {
            panic!("mcsim: {}: field `{}`: {}", self.tag(), e.field, e.message);
        }
        if let Some(only) = &self.only
            && M::INVARIANTS.contains(&self.expect.as_str())
            && !only.contains(&self.expect)
        {
            panic!(
                "mcsim: {} expects {} but checks only {}",
                self.tag(),
                self.expect,
                only.join(", ")
            );
        }
        let only = self.only.clone();
        let setup: Setup = Rc::new(move |sim| {
            model.setup(&params, &cx, sim);
            if let Some(only) = &only {
                sim.retain_invariants(|name| only.iter().any(|o| o == name));
            }
        });
        let this = self.clone();
        Scenario {
            name: self.tag(),
            path: PathBuf::new(),
            description: String::new(),
            recipe: M::NAME.into(),
            variant: self.model.variant_name().into(),
            clients,
            config: self.config.clone(),
            strategy: StrategyKind::Random,
            executions,
            seed: self.seed,
            expect: self.expect.clone(),
            expectation: crate::scenario::Expectation::single(&self.expect),
            bounds: crate::scenario::ExhaustiveBounds {
                clients,
                preemptions: None,
                faults: None,
                draws: 1,
                phases: None,
            },
            setup,
            point: Vec::new(),
            settings: Vec::new(),
            origin: Origin::Code {
                rebuild: Rc::new(move |n| this.build(n, executions)),
                tag: self.tag(),
                rerun: rerun::rerun_command(
                    std::thread::current().name().filter(|n| *n != "main"),
                    self.caller,
                ),
            },
        }
    }

    /// Panics unless the verdict is the one expected; the figures otherwise.
    #[track_caller]
    fn judge(
        &self,
        s: &Scenario,
        strategy: StrategyKind,
        report: RunReport,
        exhaustive: bool,
    ) -> Figures {
        let label = report.label();
        if label != self.expect {
            let mut message = format!(
                "mcsim: {} expected {}, got {label} ({} executions)\n",
                s.name, self.expect, report.executions
            );
            if self.expect != "pass" && label != "pass" && self.only.is_none() {
                // Another verdict ended the search before the one sought.
                let only = if M::INVARIANTS.contains(&self.expect.as_str()) {
                    format!("`.only(&[\"{}\"])`", self.expect)
                } else {
                    "`.only(&[])` (no invariant checked, so only a verdict such as stuck, \
                     livelock or panic ends an execution)"
                        .to_string()
                };
                message.push_str(&format!(
                    "{label} broke first and ended the search: to seek {} past it, check only \
                     what it needs with {only}\n",
                    self.expect
                ));
            }
            if report.found.len() > 1 {
                let found: Vec<String> = report
                    .found
                    .iter()
                    .map(|(label, n)| format!("{label} in {n}"))
                    .collect();
                message.push_str(&format!("violated: {}\n", found.join(", ")));
            }
            if let Some(f) = &report.first_failure {
                message.push_str(&report::kept::failure(
                    &report::kept::test_dir(),
                    s,
                    strategy,
                    f,
                ));
            }
            panic!("{message}");
        }
        if let Origin::Code { rerun, .. } = &s.origin {
            eprintln!(
                "mcsim: {}: {label} as expected, {} executions; rerun: {rerun}",
                s.name, report.executions
            );
        }
        Figures::of(report, exhaustive)
    }
}
