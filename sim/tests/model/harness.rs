//! The harness: runs a sequence against the server and the model and compares every reply.

#[allow(unused_imports)]
use super::*;

pub(crate) fn config(phase: u64) -> ServerConfig {
    ServerConfig {
        phase: Duration::from_micros(phase),
        unix_at_zero: UNIX_AT_ZERO,
        ..ServerConfig::default()
    }
}

/// Runs one sequence against a fresh server and a fresh model, comparing every reply.
pub(crate) fn run(phase: u64, steps: &[Step], by_value: bool) -> Result<(), TestCaseError> {
    run_on(
        Server::new(config(phase), VirtualTime::ZERO),
        phase,
        steps,
        by_value,
    )
}

/// Runs `warmup` on a server, resets it, then compares it with a fresh model on `steps`:
/// a reset server is indistinguishable from a new one.
pub(crate) fn run_after_reset(
    phase: u64,
    warmup: &[Step],
    steps: &[Step],
) -> Result<(), TestCaseError> {
    let mut server = Server::new(config(phase), VirtualTime::ZERO);
    let mut model = Model::new(phase);
    let seen = BTreeMap::new();
    let mut now = 0;
    for step in warmup {
        match step {
            Step::Advance(us) => now += us,
            Step::ToEdge(_) => now += SEC,
            step => {
                let request = request(step, &model, &seen, now);
                model.apply(&request, now);
                server.apply(&request, VirtualTime(now));
            }
        }
    }
    server.reset(VirtualTime::ZERO);
    run_on(server, phase, steps, false)
}

/// Compares the server with the model on `steps`, each request sent through
/// [`Server::apply`] given the request by value if `by_value`, else by reference.
pub(crate) fn run_on(
    mut server: Server,
    phase: u64,
    steps: &[Step],
    by_value: bool,
) -> Result<(), TestCaseError> {
    let mut model = Model::new(phase);
    let mut now: u64 = 0;
    // The last cas a gets/gats returned, per key.
    let mut seen: BTreeMap<Vec<u8>, u64> = BTreeMap::new();
    for (i, step) in steps.iter().enumerate() {
        let request = match step {
            Step::Advance(us) => {
                now += us;
                continue;
            }
            Step::ToEdge(offset) => {
                let k = if now < phase {
                    1
                } else {
                    (now - phase) / SEC + 1
                };
                let edge = phase + k * SEC;
                now = edge.saturating_add_signed(*offset).max(now);
                continue;
            }
            step => request(step, &model, &seen, now),
        };
        let expected = model.apply(&request, now);
        let got = if by_value {
            server.apply(request.clone(), VirtualTime(now))
        } else {
            server.apply(&request, VirtualTime(now))
        };
        prop_assert_eq!(
            &got,
            &expected,
            "step {} ({:?}) sent {:?} at t={}µs (tick {})",
            i,
            step,
            request,
            now,
            model.tick(now)
        );
        if let Reply::Values(entries) = &got {
            for e in entries {
                if let Some(cas) = e.cas {
                    seen.insert(e.key.as_bytes().to_vec(), cas);
                }
            }
        }
    }
    Ok(())
}

/// The request a step sends, with its cas resolved against what the client has seen.
pub(crate) fn request(
    step: &Step,
    model: &Model,
    seen: &BTreeMap<Vec<u8>, u64>,
    now: u64,
) -> Request {
    let keys = |ks: &[K]| ks.iter().map(|k| k.key()).collect::<Vec<_>>();
    match step {
        Step::Get { keys: ks, cas } => Request::Get {
            keys: keys(ks),
            with_cas: *cas,
        },
        Step::Gat {
            exptime,
            keys: ks,
            cas,
        } => Request::Gat {
            exptime: Exptime(*exptime),
            keys: keys(ks),
            with_cas: *cas,
        },
        Step::Store {
            mode,
            key,
            flags,
            exptime,
            data,
            noreply,
        } => Request::Store {
            mode: match mode {
                Mode::Set => StoreMode::Set,
                Mode::Add => StoreMode::Add,
                Mode::Replace => StoreMode::Replace,
                Mode::Append => StoreMode::Append,
                Mode::Prepend => StoreMode::Prepend,
            },
            key: key.key(),
            flags: *flags,
            exptime: Exptime(*exptime),
            data: data.0.clone(),
            noreply: *noreply,
        },
        Step::Cas {
            key,
            src,
            flags,
            exptime,
            data,
            noreply,
        } => {
            let k = key.key();
            let tick = model.tick(now);
            let current = model
                .items
                .get(k.as_bytes())
                .filter(|it| it.exptime_tick == 0 || it.exptime_tick > tick)
                .map(|it| it.cas);
            let cas = match *src {
                CasSrc::Seen => seen.get(k.as_bytes()).copied().or(current).unwrap_or(1),
                CasSrc::Current(off) => {
                    current.unwrap_or(model.cas).wrapping_add_signed(off.into())
                }
                CasSrc::Literal(c) => c,
            };
            Request::Store {
                mode: StoreMode::Cas(cas),
                key: k,
                flags: *flags,
                exptime: Exptime(*exptime),
                data: data.0.clone(),
                noreply: *noreply,
            }
        }
        Step::Arith {
            incr,
            key,
            delta,
            noreply,
        } => Request::Arith {
            op: if *incr { ArithOp::Incr } else { ArithOp::Decr },
            key: key.key(),
            delta: *delta,
            noreply: *noreply,
        },
        Step::Delete { key, noreply } => Request::Delete {
            key: key.key(),
            noreply: *noreply,
        },
        Step::Touch {
            key,
            exptime,
            noreply,
        } => Request::Touch {
            key: key.key(),
            exptime: Exptime(*exptime),
            noreply: *noreply,
        },
        Step::FlushAll { delay, noreply } => Request::FlushAll {
            delay: *delay,
            noreply: *noreply,
        },
        Step::Advance(_) | Step::ToEdge(_) => unreachable!("time steps send nothing"),
    }
}

pub(crate) fn cases() -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(256)
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: cases(),
        ..ProptestConfig::default()
    })]

    /// Every reply of the simulated server equals the reference model's.
    #[test]
    fn server_matches_model(
        phase in phase(),
        steps in proptest::collection::vec(step(), 1..=MAX_STEPS),
    ) {
        run(phase, &steps, false)?;
    }

    /// The same with every request handed over by value (the executor's path).
    #[test]
    fn server_taking_requests_by_value_matches_model(
        phase in phase(),
        steps in proptest::collection::vec(step(), 1..=MAX_STEPS),
    ) {
        run(phase, &steps, true)?;
    }

    /// A server reset after any history answers exactly like a new one.
    #[test]
    fn reset_server_matches_model(
        phase in phase(),
        warmup in proptest::collection::vec(step(), 1..=MAX_STEPS),
        steps in proptest::collection::vec(step(), 1..=MAX_STEPS),
    ) {
        run_after_reset(phase, &warmup, &steps)?;
    }
}
