//! Running on past a held violation (`ExecConfig::past_violation`, as `mcsim findings`
//! runs every execution to measure by how much it breaks).

use std::cell::Cell;
use std::rc::Rc;

use mcsim::exec::{ExecConfig, execute};
use mcsim::explore::Random;
use mcsim::invariant::Failure;
use mcsim::memcache::{Exptime, Key, Memcache, Value};
use mcsim::{Skew, Verdict};

/// Registers the step check `name`: it counts in `asked` how often it is asked, and fails
/// once `done` calls have completed `from` or more.
fn failing_from(
    sim: &mut mcsim::Sim,
    name: &'static str,
    asked: &Rc<Cell<u32>>,
    done: &Rc<Cell<u32>>,
    from: u32,
) {
    let (asked, done) = (asked.clone(), done.clone());
    sim.always(name, move || {
        asked.set(asked.get() + 1);
        if done.get() >= from {
            Err(Failure::new(format!("{name} broke")))
        } else {
            Ok(())
        }
    });
}

/// A step check that failed already is not asked again: the verdict, the checks that
/// failed and the evaluations counted are what asking it at every step gives.
#[test]
fn past_a_held_violation_a_failed_step_check_is_not_asked_again() {
    let (asked_a, asked_b) = (Rc::new(Cell::new(0u32)), Rc::new(Cell::new(0u32)));
    let (a, b) = (asked_a.clone(), asked_b.clone());
    let setup = move |sim: &mut mcsim::Sim| {
        let done = Rc::new(Cell::new(0u32));
        let d = done.clone();
        sim.client(Skew::default(), move |mc| async move {
            let k = Key::new("k").unwrap();
            for i in 0..5u64 {
                mc.set(&k, Value::from(i), Exptime::NEVER).await?;
                d.set(d.get() + 1);
            }
            Ok(())
        });
        failing_from(sim, "a", &a, &done, 1);
        failing_from(sim, "b", &b, &done, 3);
    };
    let config = ExecConfig {
        past_violation: true,
        ..ExecConfig::default()
    };
    let e = execute(&config, &setup, &mut Random::new(1), 0);
    match &e.verdict {
        Verdict::Violation(v) => assert_eq!((v.invariant.as_ref(), v.step), ("a", 1)),
        other => panic!("{other:?}"),
    }
    let violated: Vec<&str> = e.violated.iter().map(|v| v.as_ref()).collect();
    assert_eq!(violated, ["a", "b"]);
    // `a` asked until it failed at the first step, `b` until the third.
    assert_eq!((asked_a.get(), asked_b.get()), (1, 3));
    assert_eq!(e.steps, 5);
    assert!(e.checks.iter().all(|(_, n)| *n == 5), "{:?}", e.checks);
}
