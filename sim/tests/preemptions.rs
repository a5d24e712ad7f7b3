//! Preemptions, as a replay notes them and a counterexample's size reports them: a switch
//! away from a client that could have run on counts; a switch forced by a client asleep
//! or done does not.

use std::time::Duration;

use mcsim::exec::{ExecConfig, execute};
use mcsim::explore::{Choice, Replay, Schedule};
use mcsim::memcache::{Key, Memcache};
use mcsim::{Skew, Verdict};

/// Two clients with two gets each; client 0 sleeps `pause` between its two.
fn two_clients(pause: Duration) -> impl Fn(&mut mcsim::Sim) {
    move |sim: &mut mcsim::Sim| {
        sim.client(Skew::default(), move |mc| async move {
            let k = Key::new("k").unwrap();
            mc.get(&k).await?;
            mc.sleep(pause).await;
            mc.get(&k).await?;
            Ok(())
        });
        sim.client(Skew::default(), |mc| async move {
            let k = Key::new("k").unwrap();
            mc.get(&k).await?;
            mc.get(&k).await?;
            Ok(())
        });
    }
}

/// Replays the clients' calls in `order` (each at the earliest instant of its window),
/// returning where the replay noted preemptions.
fn preempted(pause: Duration, order: &[usize]) -> Vec<u32> {
    let choices = order
        .iter()
        .map(|&client| Choice::Run { client, delay: 0 })
        .collect();
    let mut replay = Replay::new(Schedule {
        phase: None,
        choices,
    });
    let e = execute(&ExecConfig::default(), &two_clients(pause), &mut replay, 0);
    assert_eq!(e.verdict, Verdict::Pass, "{order:?}");
    assert_eq!(e.schedule.len(), order.len());
    replay.preempted().to_vec()
}

#[test]
fn switching_away_from_a_client_that_could_run_on_is_a_preemption() {
    // Both clients' calls are in flight together: c0 runs while c1's next call could
    // have run (choice 1), and c1 while c0's could (choice 2); the last switch is
    // forced, the other client being done.
    assert_eq!(preempted(Duration::ZERO, &[1, 0, 1, 0]), vec![1, 2]);
    assert_eq!(preempted(Duration::ZERO, &[0, 1, 0, 1]), vec![1, 2]);
    // Each client's two calls back to back: one switch, after c0 is done.
    assert_eq!(preempted(Duration::ZERO, &[0, 0, 1, 1]), Vec::<u32>::new());
}

#[test]
fn a_switch_forced_by_a_sleeping_or_finished_client_is_not() {
    // c0 sleeps a second after its first call: c1 runs because c0 cannot, and c0 runs
    // last because c1 is done. Two switches, no preemption.
    assert_eq!(
        preempted(Duration::from_secs(1), &[0, 1, 1, 0]),
        Vec::<u32>::new()
    );
}
