//! Symmetry reduction (`Sim::symmetric`) changes how much the search runs, never what it
//! finds: over the lock family, whose interchangeable variants declare it, with three and
//! four clients and every kind of fault, the search with symmetry reaches exactly the
//! verdicts the search without reaches, in fewer executions.

use std::path::Path;

use mcsim::exhaustive::{ExploreOptions, ExploreReport};
use mcsim::scenario::Scenario;
use mcsim_models::RECIPES;

fn scenario(variant: &str, clients: usize, faults: &str) -> Scenario {
    let text = format!(
        "recipe = \"lock\"\nvariant = \"{variant}\"\nclients = {clients}\n\
         [params]\nrounds = 1\nhold_ms = 1\nbackoff_ms = 1\nattempts = 2\ntimeout_s = 1\n\
         [timing]\nlatency_us = [100, 100000]\n\
         [faults]\n{faults}\n[expect]\nverdict = \"pass\"\n"
    );
    Scenario::parse(Path::new("symmetry.toml"), &text, RECIPES).unwrap_or_else(|e| panic!("{e}"))
}

fn explore(s: &Scenario, symmetry: bool) -> ExploreReport {
    let options = ExploreOptions {
        symmetry,
        keep_going: true,
        max_executions: Some(200_000),
        max_phases: Some(2),
        ..ExploreOptions::default()
    };
    mcsim::exhaustive::explore(s, &options, &mut |_| true)
}

#[test]
fn symmetry_reaches_every_verdict_plain_search_reaches() {
    let plans = [
        "",
        "evict = { max = 1, probability = 0.1 }",
        "reply_lost = { max = 1, probability = 0.1 }",
        "request_lost = { max = 1, probability = 0.1 }",
        "pause_ms = 3000\npause = { max = 1, probability = 0.1 }",
        "die = { max = 1, probability = 0.1 }",
    ];
    let (mut compared, mut violating, mut fewer) = (0, 0, 0);
    for variant in ["add", "get-set"] {
        for clients in [3, 4] {
            for faults in plans {
                let s = scenario(variant, clients, faults);
                let what = format!("lock/{variant}, {clients} clients, faults {faults:?}");
                let sym = explore(&s, true);
                assert!(sym.stats.complete, "{what}: with symmetry, not complete");
                assert!(sym.stats.symmetric, "{what}: symmetry not used");
                let plain = explore(&s, false);
                if !plain.stats.complete {
                    continue;
                }
                assert!(!plain.stats.symmetric, "{what}");
                assert_eq!(sym.verdicts, plain.verdicts, "{what}");
                assert!(sym.stats.executions <= plain.stats.executions, "{what}");
                compared += 1;
                violating += usize::from(sym.verdicts.len() > 1 || !sym.verdicts.contains("pass"));
                fewer += usize::from(sym.stats.executions < plain.stats.executions);
            }
        }
    }
    eprintln!("{compared} cases compared, {violating} violating, {fewer} with fewer executions");
    assert!(
        compared >= 16,
        "only {compared} cases finished without symmetry"
    );
    assert!(violating >= 6, "only {violating} cases found a violation");
    assert!(
        fewer >= compared / 2,
        "symmetry ran fewer executions in only {fewer} of {compared}"
    );
}

#[test]
fn the_proof_says_the_clients_were_taken_as_interchangeable() {
    let s = scenario("add", 3, "");
    let r = explore(&s, true);
    assert!(
        r.covered(&s).contains("interchangeable"),
        "{}",
        r.covered(&s)
    );
    // The token variant stores its owner's name: its clients are not interchangeable.
    let s = scenario("token", 3, "");
    let r = explore(&s, true);
    assert!(!r.stats.symmetric);
    assert!(!r.covered(&s).contains("interchangeable"));
}

/// Picks calls by a small generator and records every step's state fingerprint and
/// ranks; or replays recorded choices with every client renamed by `rename`.
struct Permuting {
    seed: u64,
    rename: Option<Vec<usize>>,
    script: Vec<mcsim::explore::Choice>,
    at: usize,
    seen: Vec<(Option<u64>, Option<Vec<usize>>)>,
}

impl mcsim::explore::Strategy for Permuting {
    fn name(&self) -> &'static str {
        "permuting"
    }

    fn begin(&mut self, _execution: u64) {
        self.at = 0;
        self.seen.clear();
    }

    fn choose(&mut self, options: &mcsim::explore::Options<'_>) -> Option<mcsim::explore::Choice> {
        use mcsim::explore::Choice;
        self.seen
            .push((options.state, options.ranks.map(|r| r.to_vec())));
        let choice = match &self.rename {
            None => {
                self.seed = self
                    .seed
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                let call = &options.calls[(self.seed >> 33) as usize % options.calls.len()];
                let choice = Choice::Run {
                    client: call.client,
                    delay: 0,
                };
                self.script.push(choice.clone());
                choice
            }
            Some(rename) => self.script[self.at].relabeled(|c| rename[c]),
        };
        self.at += 1;
        Some(choice)
    }

    fn needs(&self) -> mcsim::explore::Needs {
        mcsim::explore::Needs {
            states: true,
            symmetry: true,
            ..mcsim::explore::Needs::NOTHING
        }
    }
}

#[test]
fn a_state_and_its_permutation_get_one_fingerprint() {
    let s = scenario("add", 4, "");
    let rename = vec![2, 0, 3, 1];
    let (mut states, mut distinct) = (0, std::collections::BTreeSet::new());
    for seed in 0..40 {
        let mut first = Permuting {
            seed,
            rename: None,
            script: Vec::new(),
            at: 0,
            seen: Vec::new(),
        };
        let a = mcsim::exec::execute(&s.config, &*s.setup, &mut first, 0);
        // The same schedule with every client renamed: client c plays rename[c]'s part.
        let mut second = Permuting {
            seed,
            rename: Some(rename.clone()),
            script: first.script.clone(),
            at: 0,
            seen: Vec::new(),
        };
        let b = mcsim::exec::execute(&s.config, &*s.setup, &mut second, 0);
        assert_eq!(a.verdict.label(), b.verdict.label(), "seed {seed}");
        assert_eq!(first.seen.len(), second.seen.len(), "seed {seed}");
        for (step, ((fa, ra), (fb, rb))) in first.seen.iter().zip(&second.seen).enumerate() {
            assert_eq!(
                fa, fb,
                "seed {seed}, step {step}: the renamed state differs"
            );
            if let (Some(f), Some(ra), Some(rb)) = (fa, ra, rb) {
                states += 1;
                distinct.insert(*f);
                let mut places = ra.clone();
                places.sort_unstable();
                assert_eq!(places, (0..ra.len()).collect::<Vec<_>>());
                assert_eq!(ra.len(), rb.len());
            }
        }
    }
    assert!(states > 100, "only {states} states compared");
    assert!(
        distinct.len() >= 5,
        "only {} distinct states",
        distinct.len()
    );
}
