//! The model against MEMCACHED.md's fidelity cases, and fixed sequences through the harness.

#[allow(unused_imports)]
use super::*;

pub(crate) fn k(name: &str) -> Key {
    Key::new(name).unwrap()
}

pub(crate) fn set(mode: StoreMode, key: &str, flags: u32, exptime: i64, data: &[u8]) -> Request {
    Request::Store {
        mode,
        key: k(key),
        flags,
        exptime: Exptime(exptime),
        data: data.to_vec(),
        noreply: false,
    }
}

pub(crate) fn get(keys: &[&str], with_cas: bool) -> Request {
    Request::Get {
        keys: keys.iter().map(|n| k(n)).collect(),
        with_cas,
    }
}

pub(crate) fn arith(op: ArithOp, key: &str, delta: u64) -> Request {
    Request::Arith {
        op,
        key: k(key),
        delta,
        noreply: false,
    }
}

pub(crate) fn value(key: &str, flags: u32, data: &[u8], cas: Option<u64>) -> ValueEntry {
    ValueEntry {
        key: mcsim::Key::new(key).unwrap(),
        flags,
        data: data.to_vec(),
        cas,
    }
}

/// The model reproduces the documented fidelity cases (phase 0: ticks on whole seconds).
#[test]
pub(crate) fn model_follows_the_fidelity_cases() {
    let mut m = Model::new(0);
    // 1. Stored at 25.031 with TTL 10: hits at 34.999, misses at 35.000.
    assert_eq!(
        m.apply(&set(StoreMode::Set, "k", 0, 10, b"1"), 25_031_000),
        Reply::Stored
    );
    assert_eq!(
        m.apply(&get(&["k"], false), 34_999_999),
        Reply::Values(vec![value("k", 0, b"1", None)])
    );
    assert_eq!(
        m.apply(&get(&["k"], false), 35_000_000),
        Reply::Values(vec![])
    );
    // 2. Negative exptime: stored, invisible.
    assert_eq!(
        m.apply(&set(StoreMode::Set, "k", 0, -1, b"1"), 0),
        Reply::Stored
    );
    assert_eq!(m.apply(&get(&["k"], false), 0), Reply::Values(vec![]));
    // 3. 2592000 is relative; 2592001 is an absolute time in the past.
    m.apply(&set(StoreMode::Set, "k", 0, 2_592_000, b"1"), 0);
    assert_eq!(m.items[&b"k"[..]].exptime_tick, 62 + 2_592_000);
    assert_eq!(
        m.apply(&set(StoreMode::Set, "j", 0, 2_592_001, b"1"), 0),
        Reply::Stored
    );
    assert_eq!(m.apply(&get(&["j"], false), 0), Reply::Values(vec![]));
    // 4. add on a live key fails; after its TTL it succeeds; misses elsewhere.
    m.apply(&set(StoreMode::Set, "t", 0, 2, b"x"), 0);
    assert_eq!(
        m.apply(&set(StoreMode::Add, "t", 0, 0, b"y"), 1_000_000),
        Reply::NotStored
    );
    assert_eq!(
        m.apply(&set(StoreMode::Add, "t", 0, 0, b"y"), 2_000_000),
        Reply::Stored
    );
    assert_eq!(
        m.apply(&set(StoreMode::Replace, "no", 0, 0, b"y"), 0),
        Reply::NotStored
    );
    assert_eq!(
        m.apply(&set(StoreMode::Append, "no", 0, 0, b"y"), 0),
        Reply::NotStored
    );
    assert_eq!(m.apply(&arith(ArithOp::Incr, "no", 1), 0), Reply::NotFound);
    assert_eq!(
        m.apply(&set(StoreMode::Cas(1), "no", 0, 0, b"y"), 0),
        Reply::NotFound
    );
    // 5. append/prepend keep flags and exptime.
    m.apply(&set(StoreMode::Set, "ap", 9, 100, b"mid"), 0);
    m.apply(&set(StoreMode::Append, "ap", 1, 0, b"_end"), 0);
    m.apply(&set(StoreMode::Prepend, "ap", 2, 5, b"start_"), 0);
    assert_eq!(
        m.apply(&get(&["ap"], false), 0),
        Reply::Values(vec![value("ap", 9, b"start_mid_end", None)])
    );
    assert_eq!(m.items[&b"ap"[..]].exptime_tick, 162);
    // 6. cas.
    let Reply::Values(v) = m.apply(&get(&["ap"], true), 0) else {
        panic!()
    };
    let c = v[0].cas.unwrap();
    assert_eq!(
        m.apply(&set(StoreMode::Cas(c + 1), "ap", 0, 0, b"z"), 0),
        Reply::Exists
    );
    assert_eq!(
        m.apply(&set(StoreMode::Cas(c), "ap", 0, 0, b"z"), 0),
        Reply::Stored
    );
    assert_eq!(
        m.apply(&set(StoreMode::Cas(c), "ap", 0, 0, b"z"), 0),
        Reply::Exists
    );
    assert_eq!(
        m.apply(&set(StoreMode::Cas(0), "ap", 0, 0, b"z"), 0),
        Reply::Exists
    );
    // 8. decr in place, flags and TTL kept, floor at 0.
    m.apply(&set(StoreMode::Set, "n", 3, 50, b"10"), 0);
    assert_eq!(m.apply(&arith(ArithOp::Decr, "n", 1), 0), Reply::Number(9));
    assert_eq!(
        m.apply(&get(&["n"], false), 0),
        Reply::Values(vec![value("n", 3, b"9 ", None)])
    );
    assert_eq!(m.items[&b"n"[..]].exptime_tick, 112);
    assert_eq!(
        m.apply(&arith(ArithOp::Decr, "n", 100), 0),
        Reply::Number(0)
    );
    // 9. growth and wrap.
    m.apply(&set(StoreMode::Set, "n", 0, 0, b"99"), 0);
    assert_eq!(
        m.apply(&arith(ArithOp::Incr, "n", 1), 0),
        Reply::Number(100)
    );
    assert_eq!(m.items[&b"n"[..]].data, b"100");
    m.apply(&set(StoreMode::Set, "n", 0, 0, b"18446744073709551615"), 0);
    assert_eq!(m.apply(&arith(ArithOp::Incr, "n", 2), 0), Reply::Number(1));
    assert_eq!(
        m.items[&b"n"[..]].data,
        format!("1{}", " ".repeat(19)).into_bytes()
    );
    m.apply(&set(StoreMode::Set, "n", 0, 0, b"007"), 0);
    assert_eq!(m.apply(&arith(ArithOp::Incr, "n", 1), 0), Reply::Number(8));
    assert_eq!(m.items[&b"n"[..]].data, b"8  ");
    // 10. non-numeric values.
    for bad in [&b"hi"[..], b"-1", b"", b"18446744073709551616"] {
        m.apply(&set(StoreMode::Set, "n", 0, 0, bad), 0);
        assert_eq!(
            m.apply(&arith(ArithOp::Incr, "n", 1), 0),
            Reply::ClientError(NON_NUMERIC.into()),
            "{:?}",
            Bytes(bad.to_vec())
        );
    }
    // 11. a repeated key comes back twice.
    m.apply(&set(StoreMode::Set, "a", 0, 0, b"1"), 0);
    m.apply(&set(StoreMode::Set, "b", 0, 0, b"2"), 0);
    assert_eq!(
        m.apply(&get(&["a", "b", "nokey", "a"], false), 0),
        Reply::Values(vec![
            value("a", 0, b"1", None),
            value("b", 0, b"2", None),
            value("a", 0, b"1", None)
        ])
    );
    // 15. delete.
    assert_eq!(
        m.apply(
            &Request::Delete {
                key: k("a"),
                noreply: false
            },
            0
        ),
        Reply::Deleted
    );
    assert_eq!(
        m.apply(
            &Request::Delete {
                key: k("a"),
                noreply: false
            },
            0
        ),
        Reply::NotFound
    );
    // 16. flush_all hides old keys; a later store hits.
    assert_eq!(
        m.apply(
            &Request::FlushAll {
                delay: None,
                noreply: false
            },
            0
        ),
        Reply::Ok
    );
    assert_eq!(m.apply(&get(&["b"], false), 0), Reply::Values(vec![]));
    m.apply(&set(StoreMode::Set, "b", 0, 0, b"3"), 0);
    assert_eq!(
        m.apply(&get(&["b"], false), 0),
        Reply::Values(vec![value("b", 0, b"3", None)])
    );
}

/// A few fixed sequences through the harness: TTLs at tick edges with a phase, touch,
/// gat with a past exptime on a repeated key, cas after gets, numbers ended by a NUL.
#[test]
pub(crate) fn fixed_sequences() {
    let store = |mode, key, exptime, data: &[u8]| Step::Store {
        mode,
        key: K(key),
        flags: 0,
        exptime,
        data: Bytes(data.to_vec()),
        noreply: false,
    };
    let get = |keys: &[usize], cas| Step::Get {
        keys: keys.iter().map(|&i| K(i)).collect(),
        cas,
    };
    let sequences: Vec<(u64, Vec<Step>)> = vec![
        (
            300_000,
            vec![
                store(Mode::Set, 0, 2, b"x"),
                Step::ToEdge(-1),
                get(&[0], false),
                Step::ToEdge(-1),
                get(&[0], false),
                Step::ToEdge(0),
                get(&[0], false),
            ],
        ),
        (
            0,
            vec![
                store(Mode::Set, 0, 0, b"x"),
                Step::Gat {
                    exptime: -1,
                    keys: vec![K(0), K(0)],
                    cas: true,
                },
                get(&[0], false),
            ],
        ),
        (
            0,
            vec![
                store(Mode::Set, 1, 3, b"v"),
                Step::Touch {
                    key: K(1),
                    exptime: 0,
                    noreply: false,
                },
                Step::Advance(10 * SEC),
                get(&[1], true),
                Step::Cas {
                    key: K(1),
                    src: CasSrc::Seen,
                    flags: 0,
                    exptime: 0,
                    data: Bytes(b"w".to_vec()),
                    noreply: false,
                },
                Step::FlushAll {
                    delay: None,
                    noreply: false,
                },
                store(Mode::Add, 1, UNIX_AT_ZERO + 20, b"n"),
                get(&[1], true),
                Step::Advance(10 * SEC),
                get(&[1], true),
            ],
        ),
        (
            0,
            vec![
                store(Mode::Set, 2, 0, b"5\0"),
                Step::Arith {
                    incr: true,
                    key: K(2),
                    delta: 1,
                    noreply: false,
                },
                get(&[2], false),
            ],
        ),
    ];
    for (phase, steps) in sequences {
        for by_value in [false, true] {
            if let Err(e) = run(phase, &steps, by_value) {
                panic!("{e}\nsequence: {steps:#?}");
            }
        }
    }
}
