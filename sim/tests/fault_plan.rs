//! Fault plans combine as an author expects: `and` is associative, keeps every rule and
//! every delay either side set, and each kind has a constructor aimed at keys.

use std::time::Duration;

use mcsim::exec::{ExecConfig, execute};
use mcsim::explore::Random;
use mcsim::{FaultKind, FaultPlan};
use proptest::prelude::*;

mod support;

/// One constructor per kind, as an author writes them.
fn by_kind(kind: FaultKind) -> FaultPlan {
    match kind {
        FaultKind::Evict => FaultPlan::evictions(),
        FaultKind::ReplyLost => FaultPlan::lost_replies(),
        FaultKind::RequestLost => FaultPlan::lost_requests(),
        FaultKind::Crash => FaultPlan::crashes(),
        FaultKind::SkipSecond => FaultPlan::skipped_seconds(),
        FaultKind::Leave => FaultPlan::leaves(),
        FaultKind::Pause => FaultPlan::pauses(Duration::from_secs(3)),
        FaultKind::Die => FaultPlan::deaths(),
        FaultKind::TooLarge => FaultPlan::too_large_values(),
    }
}

#[test]
fn every_kind_has_a_constructor_that_allows_it_and_only_it() {
    for kind in FaultKind::ALL {
        let plan = by_kind(kind);
        let kinds: Vec<FaultKind> = plan.rules.iter().map(|(k, _)| *k).collect();
        assert_eq!(kinds, vec![kind], "{kind:?}");
        assert!(plan.rule(kind).unwrap().max >= 1, "{kind:?}");
        let aimed = plan.on_keys(&["k"]);
        assert_eq!(aimed.rule(kind).unwrap().keys, Some(vec!["k".to_string()]));
    }
    assert_eq!(
        FaultPlan::pauses(Duration::from_secs(3)).pause_for,
        Duration::from_secs(3)
    );
}

#[test]
fn and_keeps_the_delays_and_keys_of_both_sides() {
    let plan = FaultPlan::pauses(Duration::from_millis(2_100))
        .and(
            FaultPlan::crashes()
                .restarting_after(Duration::from_secs(4))
                .warm(),
        )
        .and(FaultPlan::lost_replies().timing_out_after(Duration::from_millis(30)))
        .and(FaultPlan::evictions().on_keys(&["lock"]));
    assert_eq!(plan.pause_for, Duration::from_millis(2_100));
    assert_eq!(plan.restart_after, Duration::from_secs(4));
    assert!(plan.warm_restart);
    assert_eq!(plan.timeout, Duration::from_millis(30));
    assert_eq!(
        plan.rule(FaultKind::Evict).unwrap().keys,
        Some(vec!["lock".to_string()])
    );
    for kind in [
        FaultKind::Pause,
        FaultKind::Crash,
        FaultKind::ReplyLost,
        FaultKind::Evict,
    ] {
        assert!(plan.rule(kind).is_some(), "{kind:?} dropped");
    }
}

fn plan() -> impl Strategy<Value = FaultPlan> {
    let kinds = proptest::sample::subsequence(FaultKind::ALL.to_vec(), 0..=4);
    (
        kinds,
        0u32..4,
        prop::option::of(prop::sample::select(vec!["a", "b", "lock"])),
        prop::option::of(1u64..5_000),
        prop::option::of(1u64..5_000),
        prop::option::of(1u64..5_000),
        prop::option::of(1u64..5_000),
        any::<bool>(),
    )
        .prop_map(|(kinds, max, key, timeout, restart, rejoin, pause, warm)| {
            let mut p = FaultPlan::none();
            for kind in kinds {
                p = p.and(by_kind(kind));
            }
            p = p.max(max);
            if let Some(k) = key {
                p = p.on_keys(&[k]);
            }
            if let Some(ms) = timeout {
                p = p.timing_out_after(Duration::from_millis(ms));
            }
            if let Some(ms) = restart {
                p = p.restarting_after(Duration::from_millis(ms));
            }
            if let Some(ms) = rejoin {
                p = p.rejoining_after(Duration::from_millis(ms));
            }
            if let Some(ms) = pause {
                p.pause_for = Duration::from_millis(ms);
            }
            if warm {
                p = p.warm();
            }
            p
        })
}

proptest! {
    #[test]
    fn and_is_associative(a in plan(), b in plan(), c in plan()) {
        prop_assert_eq!(a.clone().and(b.clone()).and(c.clone()), a.and(b.and(c)));
    }

    #[test]
    fn none_is_the_identity_of_and(a in plan()) {
        prop_assert_eq!(FaultPlan::none().and(a.clone()), a.clone());
        prop_assert_eq!(a.clone().and(FaultPlan::none()), a);
    }

    #[test]
    fn and_keeps_what_both_sides_set(a in plan(), b in plan()) {
        let both = a.clone().and(b.clone());
        let none = FaultPlan::none();
        for kind in FaultKind::ALL {
            let expected = b.rule(kind).or(a.rule(kind));
            prop_assert_eq!(both.rule(kind), expected, "{:?}", kind);
        }
        let pick = |x: Duration, y: Duration, default: Duration| if y != default { y } else { x };
        prop_assert_eq!(both.timeout, pick(a.timeout, b.timeout, none.timeout));
        prop_assert_eq!(both.restart_after, pick(a.restart_after, b.restart_after, none.restart_after));
        prop_assert_eq!(both.rejoin_after, pick(a.rejoin_after, b.rejoin_after, none.rejoin_after));
        prop_assert_eq!(both.pause_for, pick(a.pause_for, b.pause_for, none.pause_for));
        prop_assert_eq!(both.warm_restart, a.warm_restart || b.warm_restart);
    }
}

/// Two clients: one works on key `a`, the other on `lock` (each three times taking it,
/// sleeping inside, letting it go).
fn on_a_and_lock(sim: &mut mcsim::Sim) {
    use mcsim::{Exptime, Key, Memcache, Skew};
    for name in ["a", "lock"] {
        sim.client(Skew::default(), move |mc| async move {
            let key = Key::new(name).unwrap();
            for _ in 0..3 {
                let _ = mc.add(&key, "1".into(), Exptime::secs(10)).await;
                mc.sleep(Duration::from_millis(50)).await;
                let _ = mc.delete(&key).await;
            }
            Ok(())
        });
    }
}

/// Executions of [`on_a_and_lock`] with `plan` (tracing on); every fault and the calls it
/// hit.
fn faults_under(plan: FaultPlan) -> Vec<(mcsim::Fault, Option<String>)> {
    use mcsim::exec::Event;
    let setup = on_a_and_lock;
    let config = ExecConfig {
        faults: plan.probability(0.3),
        trace: true,
        ..ExecConfig::default()
    };
    let mut out = Vec::new();
    for seed in 0..200 {
        let e = execute(&config, &setup, &mut Random::new(seed), 0);
        let mut last_key: Vec<Option<String>> = vec![None; 2];
        for ev in &e.events {
            match ev {
                Event::Call {
                    client,
                    request,
                    fault,
                    ..
                } => {
                    let key = request.keys().first().map(|k| k.to_string());
                    if let Some(f) = fault {
                        out.push((f.clone(), key.clone()));
                    }
                    last_key[*client] = key;
                }
                Event::Fault { fault, .. } => {
                    let key = match fault {
                        mcsim::Fault::Pause { client } | mcsim::Fault::Die { client } => {
                            last_key[*client].clone()
                        }
                        mcsim::Fault::Evict { key, .. } => Some(key.clone()),
                        _ => None,
                    };
                    out.push((fault.clone(), key));
                }
            }
        }
    }
    out
}

#[test]
fn faults_aimed_at_a_key_hit_only_calls_and_clients_on_that_key() {
    for plan in [
        FaultPlan::lost_replies(),
        FaultPlan::lost_requests(),
        FaultPlan::too_large_values(),
        FaultPlan::evictions(),
    ] {
        let everywhere = faults_under(plan.clone());
        assert!(
            everywhere.iter().any(|(_, k)| k.as_deref() == Some("a")),
            "{plan:?} never hit `a` unaimed"
        );
        let aimed = faults_under(plan.clone().on_keys(&["lock"]));
        assert!(!aimed.is_empty(), "{plan:?} aimed at lock never fired");
        assert!(
            aimed.iter().all(|(_, k)| k.as_deref() == Some("lock")),
            "{plan:?} aimed at lock hit {aimed:?}"
        );
    }
    // A pause or a death hits a client at a call on the key, or sleeping after one: the
    // client on `a` never.
    for plan in [
        FaultPlan::pauses(Duration::from_millis(20)),
        FaultPlan::deaths(),
    ] {
        let aimed = faults_under(plan.clone().on_keys(&["lock"]));
        assert!(!aimed.is_empty(), "{plan:?} aimed at lock never fired");
        for (f, _) in &aimed {
            let client = match f {
                mcsim::Fault::Pause { client } | mcsim::Fault::Die { client } => *client,
                other => panic!("unexpected {other}"),
            };
            assert_eq!(client, 1, "{plan:?} hit the client on `a`: {f}");
        }
    }
}

/// A plan that gives every kind a budget fires faults: the step loop leaves the faults
/// out only when no kind has one, and a plan with all of them is not that plan.
#[test]
fn a_plan_that_allows_every_kind_fires_faults() {
    let plan = FaultKind::ALL
        .into_iter()
        .fold(FaultPlan::none(), |plan, kind| plan.and(by_kind(kind)));
    let config = ExecConfig {
        faults: plan.probability(0.3),
        ..ExecConfig::default()
    };
    let mut random = Random::new(1);
    let injected: u32 = (0..50)
        .map(|i| {
            let e = execute(&config, &support::three_counting, &mut random, i);
            e.faults
                .iter()
                .map(|&(_, injected, _)| injected)
                .sum::<u32>()
        })
        .sum();
    assert!(injected > 0, "no fault fired in 50 executions");
}

/// An execution makes the same choices and counts the same faults injected and bitten,
/// traced or not (a failure found untraced is replayed traced for its timeline), with
/// pauses and deaths aimed at a key beside evictions, and evictions alone: the clients a
/// pause or death may hit follow the keys each client last used, and an eviction bites
/// at a later call on its key, both of which the engine tracks whether or not it keeps
/// a timeline.
#[test]
fn faults_aimed_at_a_key_choose_alike_traced_or_not() {
    let setup = on_a_and_lock;
    let aimed = |plan: FaultPlan| plan.on_keys(&["lock"]).and(FaultPlan::evictions());
    for plan in [
        aimed(FaultPlan::pauses(Duration::from_millis(20))),
        aimed(FaultPlan::deaths()),
        FaultPlan::evictions(),
    ] {
        let plan = plan.probability(0.3);
        let (mut faulted, mut bitten) = (0, 0);
        for seed in 0..100 {
            let run = |trace: bool| {
                let config = ExecConfig {
                    faults: plan.clone(),
                    trace,
                    ..ExecConfig::default()
                };
                let e = execute(&config, &setup, &mut Random::new(seed), 0);
                (e.schedule, e.faults)
            };
            let (traced, untraced) = (run(true), run(false));
            assert_eq!(traced, untraced, "{plan:?}, seed {seed}");
            faulted += traced.0.faults();
            bitten += traced.1.iter().map(|&(_, _, bit)| bit).sum::<u32>();
        }
        assert!(faulted > 0, "{plan:?} never fired");
        assert!(bitten > 0, "{plan:?} never bit");
    }
}

/// A timing search under pauses aimed at a key keeps both the phase points and each
/// client's last keys in one execution: its executions choose alike, and record the same
/// phase points, traced or not.
#[test]
fn a_timing_search_under_aimed_pauses_runs_alike_traced_or_not() {
    use mcsim::exhaustive::Dfs;
    use mcsim::explore::Strategy;
    let setup = on_a_and_lock;
    let plan = FaultPlan::pauses(Duration::from_millis(20)).on_keys(&["lock"]);
    let search = || Dfs::new(Some(1), false).with_timing(true);
    let mut searches = [search(), search()];
    let (mut points, mut faulted) = (0, 0);
    for index in 0..200 {
        let mut more = true;
        let runs = [true, false].map(|trace| {
            let config = ExecConfig {
                faults: plan.clone(),
                trace,
                ..ExecConfig::default()
            };
            let dfs = &mut searches[usize::from(!trace)];
            let e = execute(&config, &setup, dfs, index);
            more &= dfs.end(!e.verdict.is_pass());
            (e.schedule, e.faults, e.phase_points)
        });
        let [traced, untraced] = runs;
        assert_eq!(traced, untraced, "execution {index}");
        points += traced.2.len();
        faulted += traced.0.faults();
        if !more {
            break;
        }
    }
    assert!(points > 0, "no phase point recorded");
    assert!(faulted > 0, "no pause fired");
}
