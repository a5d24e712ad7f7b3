//! The rehash workload: write, lose a server, read, rewrite, get it back, read again.

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::rc::Rc;
use std::time::Duration;

use mcsim::memcache::{Exptime, Key, McError, Memcache, Value};
use mcsim::{Failure, Fault, Sim, Skew};

/// Parameters of the rehash workload.
#[derive(Debug, Clone, PartialEq)]
pub struct ClusterParams {
    /// Keys written.
    pub keys: u32,
    /// The server that leaves the list.
    pub leave_server: usize,
    /// When it leaves.
    pub leave_at: Duration,
    /// When the client reads again (after the rejoin).
    pub read_after_rejoin: Duration,
}

#[derive(Debug, Default, Hash)]
struct Ghost {
    /// The last value written per key.
    latest: BTreeMap<String, String>,
    moved: u32,
    stale: u32,
    read_back: u32,
}

fn key(i: u32) -> Key {
    Key::new(format!("item:{i}")).expect("valid key")
}

/// Registers the workload: `clients` clients share the keys between them.
pub fn setup(p: &ClusterParams, clients: usize, sim: &mut Sim) {
    let ghost: Rc<RefCell<Ghost>> = Rc::default();
    crate::ghost::watch(sim, &ghost);
    sim.fault_at(
        p.leave_at,
        Fault::Leave {
            server: p.leave_server,
        },
    );
    for c in 0..clients {
        let (ghost, p) = (ghost.clone(), p.clone());
        sim.client(Skew::default(), move |mc| async move {
            let mine: Vec<u32> = (0..p.keys).filter(|i| *i as usize % clients == c).collect();
            for &i in &mine {
                let v = format!("v1-{i}");
                mc.set(&key(i), Value::from(v.as_str()), Exptime::NEVER)
                    .await?;
                ghost.borrow_mut().latest.insert(format!("item:{i}"), v);
            }
            let since = p
                .leave_at
                .saturating_sub(mc.global_now().since(mcsim::VirtualTime::ZERO));
            mc.sleep(since + Duration::from_millis(1)).await;
            for &i in &mine {
                let got = mc.get(&key(i)).await?;
                if got.is_none() {
                    ghost.borrow_mut().moved += 1;
                    let v = format!("v2-{i}");
                    match mc
                        .set(&key(i), Value::from(v.as_str()), Exptime::NEVER)
                        .await
                    {
                        Ok(()) => {
                            ghost.borrow_mut().latest.insert(format!("item:{i}"), v);
                        }
                        Err(McError::Transport(_)) => {}
                        Err(e) => return Err(e),
                    }
                }
            }
            let until = p
                .read_after_rejoin
                .saturating_sub(mc.global_now().since(mcsim::VirtualTime::ZERO));
            mc.sleep(until).await;
            for &i in &mine {
                if let Some(v) = mc.get(&key(i)).await? {
                    let mut g = ghost.borrow_mut();
                    g.read_back += 1;
                    if g.latest
                        .get(&format!("item:{i}"))
                        .is_some_and(|l| *l != v.text())
                    {
                        g.stale += 1;
                    }
                }
            }
            Ok(())
        });
    }
    let keys = p.keys;
    let g = ghost.clone();
    sim.at_end("cluster.no_lost_keys", move |view| {
        let g = g.borrow();
        let mut per_server = vec![0u32; view.servers()];
        for i in 0..keys {
            per_server[view.server_for(&key(i))] += 1;
        }
        let mean = f64::from(keys) / per_server.len() as f64;
        let most = per_server.iter().copied().max().unwrap_or(0);
        view.metric("cluster.balance", f64::from(most) / mean.max(1.0));
        view.metric(
            "cluster.moved_fraction",
            f64::from(g.moved) / f64::from(keys.max(1)),
        );
        view.metric(
            "cluster.stale_fraction",
            f64::from(g.stale) / f64::from(keys.max(1)),
        );
        if g.moved > 0 {
            return Err(Failure::new(format!(
                "{} of {keys} keys were not found after a server left the list",
                g.moved
            ))
            .with("moved", i64::from(g.moved))
            .with("keys", i64::from(keys)));
        }
        Ok(())
    });
    sim.at_end("cluster.no_stale_after_rejoin", move |_| {
        let g = ghost.borrow();
        if g.stale > 0 {
            return Err(Failure::new(format!(
                "{} keys returned their value from before the server left, not the newer one",
                g.stale
            ))
            .with("stale", i64::from(g.stale)));
        }
        Ok(())
    });
}
