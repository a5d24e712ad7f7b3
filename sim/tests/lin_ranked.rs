//! `lin::check_ranked` decides as `lin::check` does, whatever the ranks: only the order
//! in which the search tries operations changes. Both are held to a brute-force search
//! over every order real time allows.

use mcsim::history::Entry;
use mcsim::lin::{self, CounterOp, CounterSpec, RegisterOp, RegisterSpec, SequentialSpec};
use rand::{RngExt, SeedableRng};
use rand_pcg::Pcg64Mcg;

/// A random history of `n` operations of `spec` on one or two objects: random intervals
/// (some overlapping, some of unknown outcome), results from one sequential run in a
/// random order that real time allows, then, in half the histories, one result changed
/// (which may or may not break linearizability).
fn history<S: SequentialSpec>(
    rng: &mut Pcg64Mcg,
    spec: &S,
    op: impl Fn(&mut Pcg64Mcg) -> S::Op,
    n: usize,
) -> Vec<Entry<S::Op, S::Ret>> {
    let mut entries: Vec<Entry<S::Op, S::Ret>> = (0..n)
        .map(|c| {
            let call = rng.random_range(0..20u64);
            let unknown = rng.random_range(0..6) == 0;
            Entry {
                client: c,
                object: if rng.random_bool(0.8) { "a" } else { "b" }.into(),
                op: op(rng),
                ret: None,
                call,
                returned: if unknown {
                    u64::MAX
                } else {
                    call + rng.random_range(1..8u64)
                },
            }
        })
        .collect();
    entries.sort_by_key(|e| e.call);
    // One point inside each interval; the run applies operations in the order of those
    // points, so the results it gives are linearizable.
    let mut points: Vec<(u64, usize)> = entries
        .iter()
        .enumerate()
        .map(|(i, e)| {
            let end = e.returned.min(e.call + 10);
            (rng.random_range(e.call * 2 + 1..end * 2), i)
        })
        .collect();
    points.sort();
    let mut states: Vec<(String, S::State)> = Vec::new();
    for (_, i) in points {
        let object = entries[i].object.clone();
        let at = match states.iter().position(|(o, _)| *o == object) {
            Some(at) => at,
            None => {
                states.push((object, spec.init()));
                states.len() - 1
            }
        };
        let (next, ret) = spec.step(&states[at].1, &entries[i].op);
        // An operation of unknown outcome took effect, but nobody saw its result.
        if entries[i].returned != u64::MAX {
            entries[i].ret = Some(ret);
        }
        states[at].1 = next;
    }
    entries
}

/// Linearizability by brute force, one object at a time: every order real time allows,
/// no memo, no shortcut; the oracle both searches are held to.
fn brute<S: SequentialSpec>(spec: &S, history: &[Entry<S::Op, S::Ret>]) -> bool {
    fn place<S: SequentialSpec>(
        spec: &S,
        ops: &[&Entry<S::Op, S::Ret>],
        placed: &mut Vec<bool>,
        state: &S::State,
    ) -> bool {
        if (0..ops.len()).all(|i| placed[i] || ops[i].ret.is_none()) {
            return true;
        }
        let horizon = (0..ops.len())
            .filter(|&i| !placed[i])
            .map(|i| ops[i].returned)
            .min()
            .unwrap_or(u64::MAX);
        for i in 0..ops.len() {
            if placed[i] || ops[i].call > horizon {
                continue;
            }
            let (next, ret) = spec.step(state, &ops[i].op);
            if ops[i].ret.as_ref().is_some_and(|want| *want != ret) {
                continue;
            }
            placed[i] = true;
            let ok = place(spec, ops, placed, &next);
            placed[i] = false;
            if ok {
                return true;
            }
        }
        false
    }
    ["a", "b"].iter().all(|object| {
        let ops: Vec<_> = history.iter().filter(|e| e.object == *object).collect();
        place(spec, &ops, &mut vec![false; ops.len()], &spec.init())
    })
}

/// True if taking effect in call order explains every known result (what the search's
/// shortcut accepts without searching).
fn in_call_order<S: SequentialSpec>(spec: &S, history: &[Entry<S::Op, S::Ret>]) -> bool {
    ["a", "b"].iter().all(|object| {
        let mut state = spec.init();
        history.iter().filter(|e| e.object == *object).all(|e| {
            let (next, ret) = spec.step(&state, &e.op);
            state = next;
            e.ret.as_ref().is_none_or(|want| *want == ret)
        })
    })
}

fn same_verdicts<S: SequentialSpec>(
    spec: &S,
    op: impl Fn(&mut Pcg64Mcg) -> S::Op + Copy,
    perturb: impl Fn(&mut Pcg64Mcg, &mut Entry<S::Op, S::Ret>),
) {
    let mut rng = Pcg64Mcg::seed_from_u64(7);
    let (mut yes, mut no, mut searched) = (0, 0, 0);
    for _ in 0..3000 {
        let n = rng.random_range(1..9);
        let mut h = history(&mut rng, spec, op, n);
        if rng.random_bool(0.5) {
            let i = rng.random_range(0..h.len());
            perturb(&mut rng, &mut h[i]);
        }
        let ranks: Vec<u32> = (0..h.len()).map(|_| rng.random_range(0..4)).collect();
        let plain = lin::check(spec, &h).is_ok();
        let ranked = lin::check_ranked(spec, &h, |e| ranks[e.client]).is_ok();
        assert_eq!(plain, brute(spec, &h), "the search errs on {h:#?}");
        assert_eq!(
            plain, ranked,
            "ranks {ranks:?} change the verdict on {h:#?}"
        );
        if plain && !in_call_order(spec, &h) {
            searched += 1;
        }
        if plain { yes += 1 } else { no += 1 }
    }
    // Both verdicts were exercised, and histories the shortcut (call order) does not
    // explain reached the search.
    assert!(yes > 500 && no > 100, "{yes} linearizable, {no} not");
    assert!(
        searched > 200,
        "only {searched} histories needed the search"
    );
}

#[test]
fn ranks_never_change_a_counter_verdict() {
    same_verdicts(
        &CounterSpec,
        |rng| {
            if rng.random_bool(0.6) {
                CounterOp::Add(rng.random_range(1..3))
            } else {
                CounterOp::Read
            }
        },
        |rng, e| {
            if let Some(Some(v)) = &mut e.ret {
                *v = rng.random_range(0..6);
            }
        },
    );
}

#[test]
fn ranks_never_change_a_register_verdict() {
    same_verdicts(
        &RegisterSpec,
        |rng| {
            if rng.random_bool(0.5) {
                RegisterOp::Write(format!("v{}", rng.random_range(0..3)))
            } else {
                RegisterOp::Read
            }
        },
        |rng, e| {
            // Sometimes a value nobody wrote.
            if let Some(Some(v)) = &mut e.ret {
                *v = format!("v{}", rng.random_range(0..5));
            }
        },
    );
}
