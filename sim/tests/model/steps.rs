//! The steps of a generated sequence and the strategies that generate them.

#[allow(unused_imports)]
use super::*;

/// Bytes shown as a byte string in failure reports.
#[derive(Clone, PartialEq, Eq)]
pub(crate) struct Bytes(pub(crate) Vec<u8>);

impl fmt::Debug for Bytes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "b\"{}\"", self.0.escape_ascii())
    }
}

/// An index into [`KEYS`].
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct K(pub(crate) usize);

impl K {
    pub(crate) fn key(self) -> Key {
        Key::new(KEYS[self.0]).expect("valid key")
    }
}

impl fmt::Debug for K {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:?}", KEYS[self.0])
    }
}

/// Where a `cas` command's unique comes from, resolved when the step runs.
#[derive(Clone, Copy, Debug)]
pub(crate) enum CasSrc {
    /// The last cas a `gets`/`gats` returned for this key (possibly stale).
    Seen,
    /// The item's current cas plus an offset (0: a guaranteed match while it is live).
    Current(i8),
    /// A fixed number (0 is the "no cas" value: always `EXISTS` on a live item).
    Literal(u64),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Mode {
    Set,
    Add,
    Replace,
    Append,
    Prepend,
}

/// One step of a generated sequence.
#[derive(Clone)]
pub(crate) enum Step {
    Get {
        keys: Vec<K>,
        cas: bool,
    },
    Gat {
        exptime: i64,
        keys: Vec<K>,
        cas: bool,
    },
    Store {
        mode: Mode,
        key: K,
        flags: u32,
        exptime: i64,
        data: Bytes,
        noreply: bool,
    },
    Cas {
        key: K,
        src: CasSrc,
        flags: u32,
        exptime: i64,
        data: Bytes,
        noreply: bool,
    },
    Arith {
        incr: bool,
        key: K,
        delta: u64,
        noreply: bool,
    },
    Delete {
        key: K,
        noreply: bool,
    },
    Touch {
        key: K,
        exptime: i64,
        noreply: bool,
    },
    FlushAll {
        delay: Option<i64>,
        noreply: bool,
    },
    /// Virtual time moves on by this many µs.
    Advance(u64),
    /// Virtual time moves to the next tick edge plus this many µs (clamped to now).
    ToEdge(i64),
}

impl fmt::Debug for Step {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let nr = |noreply: bool| if noreply { " noreply" } else { "" };
        match self {
            Step::Get { keys, cas } => {
                write!(f, "{} {keys:?}", if *cas { "gets" } else { "get" })
            }
            Step::Gat { exptime, keys, cas } => {
                write!(
                    f,
                    "{} {exptime} {keys:?}",
                    if *cas { "gats" } else { "gat" }
                )
            }
            Step::Store {
                mode,
                key,
                flags,
                exptime,
                data,
                noreply,
            } => write!(
                f,
                "{} {key:?} {flags} {exptime} {data:?}{}",
                format!("{mode:?}").to_lowercase(),
                nr(*noreply)
            ),
            Step::Cas {
                key,
                src,
                flags,
                exptime,
                data,
                noreply,
            } => write!(
                f,
                "cas {key:?} {flags} {exptime} {data:?} {src:?}{}",
                nr(*noreply)
            ),
            Step::Arith {
                incr,
                key,
                delta,
                noreply,
            } => write!(
                f,
                "{} {key:?} {delta}{}",
                if *incr { "incr" } else { "decr" },
                nr(*noreply)
            ),
            Step::Delete { key, noreply } => write!(f, "delete {key:?}{}", nr(*noreply)),
            Step::Touch {
                key,
                exptime,
                noreply,
            } => write!(f, "touch {key:?} {exptime}{}", nr(*noreply)),
            Step::FlushAll { delay, noreply } => match delay {
                Some(d) => write!(f, "flush_all {d}{}", nr(*noreply)),
                None => write!(f, "flush_all{}", nr(*noreply)),
            },
            Step::Advance(us) => write!(f, "advance {}.{:06}s", us / SEC, us % SEC),
            Step::ToEdge(off) => write!(f, "to next tick edge {off:+}µs"),
        }
    }
}

// ---------------------------------------------------------------------------------------
// Strategies.
// ---------------------------------------------------------------------------------------

pub(crate) fn key() -> impl Strategy<Value = K> {
    (0..KEYS.len()).prop_map(K)
}

pub(crate) fn exptime() -> impl Strategy<Value = i64> {
    prop_oneof![
        12 => Just(0i64),
        7 => 1i64..=5,
        2 => Just(60i64),
        1 => Just(REALTIME_MAXDELTA),
        2 => Just(-1i64),
        1 => -1000i64..-1,
        // Absolute, already past (also the smallest absolute value).
        1 => Just(REALTIME_MAXDELTA + 1),
        1 => (1i64..100).prop_map(|d| UNIX_AT_ZERO - d),
        // Absolute, a few seconds ahead of the run's start: crosses during a sequence.
        2 => (0i64..10).prop_map(|d| UNIX_AT_ZERO + d),
        1 => Just(UNIX_AT_ZERO + 1_000_000),
        // Beyond 32 bits: 2^31 wraps negative, 2^32 + 2 wraps to a 2 s TTL.
        1 => Just(1i64 << 31),
        1 => Just((1i64 << 32) + 2),
    ]
}

pub(crate) fn data() -> impl Strategy<Value = Bytes> {
    let pool: &[&[u8]] = &[
        b"",
        b"0",
        b"1",
        b"9",
        b"10",
        b"99",
        b"007",
        b"  7",
        b"\t3\r\n",
        b"12 abc",
        b"12abc",
        b"5\0",
        b"\0",
        b" ",
        b"-1",
        b"-0",
        b"+5",
        b"-",
        b"hi",
        b"18446744073709551614",
        b"18446744073709551615",
        b"18446744073709551616",
        b"-18446744073709551615",
        b"99999999999999999999",
        b"0x10",
    ];
    prop_oneof![
        3 => proptest::sample::select(pool).prop_map(|d| Bytes(d.to_vec())),
        1 => proptest::collection::vec(
            proptest::sample::select(&b"ab09 -\0\r\n"[..]),
            0..6
        )
        .prop_map(Bytes),
        1 => (0u64..1000).prop_map(|n| Bytes(n.to_string().into_bytes())),
    ]
}

pub(crate) fn flags() -> impl Strategy<Value = u32> {
    prop_oneof![4 => Just(0u32), 2 => 1u32..10, 1 => Just(u32::MAX), 1 => any::<u32>()]
}

pub(crate) fn delta() -> impl Strategy<Value = u64> {
    prop_oneof![
        1 => Just(0u64),
        6 => 1u64..20,
        2 => 1u64..10_000,
        1 => Just(u64::MAX),
        1 => Just(1u64 << 63),
        1 => any::<u64>(),
    ]
}

pub(crate) fn noreply() -> impl Strategy<Value = bool> {
    prop_oneof![9 => Just(false), 1 => Just(true)]
}

pub(crate) fn mode() -> impl Strategy<Value = Mode> {
    prop_oneof![
        4 => Just(Mode::Set),
        2 => Just(Mode::Add),
        2 => Just(Mode::Replace),
        1 => Just(Mode::Append),
        1 => Just(Mode::Prepend),
    ]
}

pub(crate) fn cas_src() -> impl Strategy<Value = CasSrc> {
    prop_oneof![
        4 => Just(CasSrc::Seen),
        4 => Just(CasSrc::Current(0)),
        2 => (-2i8..=2).prop_map(CasSrc::Current),
        1 => Just(CasSrc::Literal(0)),
        1 => (1u64..40).prop_map(CasSrc::Literal),
        1 => Just(CasSrc::Literal(u64::MAX)),
    ]
}

pub(crate) fn step() -> impl Strategy<Value = Step> {
    let keys = || proptest::collection::vec(key(), 1..=4);
    prop_oneof![
        16 => (keys(), any::<bool>()).prop_map(|(keys, cas)| Step::Get { keys, cas }),
        5 => (exptime(), keys(), any::<bool>())
            .prop_map(|(exptime, keys, cas)| Step::Gat { exptime, keys, cas }),
        36 => (mode(), key(), flags(), exptime(), data(), noreply()).prop_map(
            |(mode, key, flags, exptime, data, noreply)| Step::Store {
                mode,
                key,
                flags,
                exptime,
                data,
                noreply,
            }
        ),
        8 => (key(), cas_src(), flags(), exptime(), data(), noreply()).prop_map(
            |(key, src, flags, exptime, data, noreply)| Step::Cas {
                key,
                src,
                flags,
                exptime,
                data,
                noreply,
            }
        ),
        12 => (any::<bool>(), key(), delta(), noreply()).prop_map(
            |(incr, key, delta, noreply)| Step::Arith {
                incr,
                key,
                delta,
                noreply,
            }
        ),
        4 => (key(), noreply()).prop_map(|(key, noreply)| Step::Delete { key, noreply }),
        5 => (key(), exptime(), noreply()).prop_map(|(key, exptime, noreply)| Step::Touch {
            key,
            exptime,
            noreply,
        }),
        1 => (
            prop_oneof![Just(None), Just(Some(0i64)), Just(Some(-1i64))],
            noreply()
        )
            .prop_map(|(delay, noreply)| Step::FlushAll { delay, noreply }),
        5 => (0u64..2_000).prop_map(Step::Advance),
        5 => (0u64..SEC).prop_map(Step::Advance),
        3 => (SEC..6 * SEC).prop_map(Step::Advance),
        4 => (-2i64..=2).prop_map(Step::ToEdge),
    ]
}

pub(crate) fn phase() -> impl Strategy<Value = u64> {
    prop_oneof![Just(0u64), Just(SEC - 1), 0u64..SEC]
}
