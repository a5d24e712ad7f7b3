//! Stateful property test of the simulated memcached against a small reference model.
//!
//! The model below is written from the text of MEMCACHED.md (and memcached 1.6.18's
//! `proto_text.c`, `memcached.c` and `items.c` where the text is silent), not from the
//! simulator: a map from key to item, a global cas counter and the whole-second server
//! clock. Proptest generates sequences of commands and time advances over a small key pool
//! so that commands collide; every reply of the server must equal the model's prediction,
//! and a failure shrinks to a minimal sequence.
//!
//! `PROPTEST_CASES` sets the number of sequences (default 256); sequences have up to
//! [`MAX_STEPS`] steps.

use std::collections::BTreeMap;
use std::fmt;
use std::time::Duration;

use mcsim::clock::VirtualTime;
use mcsim::memcache::{Exptime, Key};
use mcsim::protocol::{ArithOp, Reply, Request, StoreMode, ValueEntry};
use mcsim::server::{Server, ServerConfig};
use proptest::prelude::*;
use proptest::test_runner::TestCaseError;

/// Longest generated sequence.
const MAX_STEPS: usize = 60;
/// The tick memcached's clock shows at start.
const FIRST_TICK: u32 = 62;
/// Relative exptimes go up to 30 days; above, an exptime is a unix time.
const REALTIME_MAXDELTA: i64 = 2_592_000;
/// The unix time at virtual time zero (the server boots then).
const UNIX_AT_ZERO: i64 = 1_700_000_000;
/// Microseconds per second.
const SEC: u64 = 1_000_000;
/// The key pool: few keys, so commands collide. One holds a tab, which memcached accepts.
const KEYS: [&str; 4] = ["a", "b", "key:c", "d\td"];
/// `CLIENT_ERROR` text for a value that is not a number.
const NON_NUMERIC: &str = "cannot increment or decrement non-numeric value";

// ---------------------------------------------------------------------------------------
// The reference model.
// ---------------------------------------------------------------------------------------

/// One item as the model keeps it.
#[derive(Debug, Clone, PartialEq, Eq)]
struct RefItem {
    data: Vec<u8>,
    flags: u32,
    /// Expiry as a server tick; 0 never expires.
    exptime_tick: u32,
    cas: u64,
}

/// memcached as MEMCACHED.md describes it, for a server that never evicts.
#[derive(Debug, Clone)]
struct Model {
    /// Linked items. An expired item may stay here: it is simply not visible.
    items: BTreeMap<Vec<u8>, RefItem>,
    /// The last cas unique handed out (the first item gets 1).
    cas: u64,
    /// Offset of the tick edges after the boot at virtual time zero, in µs.
    phase: u64,
}

impl Model {
    fn new(phase: u64) -> Model {
        Model {
            items: BTreeMap::new(),
            cas: 0,
            phase,
        }
    }

    /// `current_time` at `now` µs: 62, advanced at every `phase + k s`.
    fn tick(&self, now: u64) -> u32 {
        FIRST_TICK + (now.saturating_sub(self.phase) / SEC) as u32
    }

    /// memcached's `process_started`: the unix time of tick 0.
    fn process_started() -> i64 {
        UNIX_AT_ZERO - i64::from(FIRST_TICK)
    }

    /// The expiry tick of a wire exptime read at `tick` (`realtime()` after the signed
    /// 32-bit parse and the negative-to-past mapping).
    fn expiry(wire: i64, tick: u32) -> u32 {
        // safe_strtol stores the parsed long into an int32_t.
        let e = i64::from(wire as i32);
        // Negative exptimes become "one past the relative range": an absolute time long
        // before the process started.
        let e = if e < 0 { REALTIME_MAXDELTA + 1 } else { e };
        if e == 0 {
            0
        } else if e > REALTIME_MAXDELTA {
            if e <= Self::process_started() {
                1
            } else {
                (e - Self::process_started()) as u32
            }
        } else {
            (e + i64::from(tick)) as u32
        }
    }

    fn next_cas(&mut self) -> u64 {
        self.cas += 1;
        self.cas
    }

    /// The visible item: present, and `exptime == 0 || exptime > tick`.
    fn live(&mut self, key: &[u8], tick: u32) -> Option<&mut RefItem> {
        self.items
            .get_mut(key)
            .filter(|it| it.exptime_tick == 0 || it.exptime_tick > tick)
    }

    fn link(&mut self, key: &[u8], data: Vec<u8>, flags: u32, exptime_tick: u32) {
        let cas = self.next_cas();
        self.items.insert(
            key.to_vec(),
            RefItem {
                data,
                flags,
                exptime_tick,
                cas,
            },
        );
    }

    /// The reply memcached gives to `request` at `now` µs, and its effect on the state.
    fn apply(&mut self, request: &Request, now: u64) -> Reply {
        let reply = self.execute(request, now);
        let silent = match request {
            Request::Store { noreply, .. }
            | Request::Arith { noreply, .. }
            | Request::Delete { noreply, .. }
            | Request::Touch { noreply, .. }
            | Request::FlushAll { noreply, .. } => *noreply,
            _ => false,
        };
        if silent { Reply::Silent } else { reply }
    }

    fn execute(&mut self, request: &Request, now: u64) -> Reply {
        let tick = self.tick(now);
        match request {
            Request::Get { keys, with_cas } => self.retrieve(keys, *with_cas, None, tick),
            Request::Gat {
                exptime,
                keys,
                with_cas,
            } => {
                let e = Self::expiry(exptime.wire(), tick);
                self.retrieve(keys, *with_cas, Some(e), tick)
            }
            Request::Store {
                mode,
                key,
                flags,
                exptime,
                data,
                ..
            } => {
                let e = Self::expiry(exptime.wire(), tick);
                self.store(*mode, key.as_bytes(), *flags, e, data, tick)
            }
            Request::Arith { op, key, delta, .. } => {
                let Some(item) = self.live(key.as_bytes(), tick) else {
                    return Reply::NotFound;
                };
                let Some(value) = strtoull(&item.data) else {
                    return Reply::ClientError(NON_NUMERIC.into());
                };
                let value = match op {
                    ArithOp::Incr => value.wrapping_add(*delta),
                    ArithOp::Decr => value.saturating_sub(*delta),
                };
                let mut digits = value.to_string().into_bytes();
                if digits.len() <= item.data.len() {
                    // Rewritten in place, padded with spaces to the old length.
                    digits.resize(item.data.len(), b' ');
                }
                item.data = digits;
                let cas = self.next_cas();
                self.live(key.as_bytes(), tick).expect("still live").cas = cas;
                Reply::Number(value)
            }
            Request::Delete { key, .. } => {
                if self.live(key.as_bytes(), tick).is_some() {
                    self.items.remove(key.as_bytes());
                    Reply::Deleted
                } else {
                    Reply::NotFound
                }
            }
            Request::Touch { key, exptime, .. } => {
                let e = Self::expiry(exptime.wire(), tick);
                match self.live(key.as_bytes(), tick) {
                    Some(item) => {
                        item.exptime_tick = e;
                        Reply::Touched
                    }
                    None => Reply::NotFound,
                }
            }
            Request::FlushAll { delay, .. } => {
                assert!(
                    delay.is_none_or(|d| d <= 0),
                    "the model only knows immediate flushes"
                );
                // Everything stored so far becomes invisible; the flush takes a cas unique.
                self.items.clear();
                self.next_cas();
                Reply::Ok
            }
            other => panic!("the model does not cover {other:?}"),
        }
    }

    fn retrieve(&mut self, keys: &[Key], with_cas: bool, touch: Option<u32>, tick: u32) -> Reply {
        let mut out = Vec::new();
        // One key at a time: a `gat` with a past exptime hides a repeated key.
        for key in keys {
            if let Some(item) = self.live(key.as_bytes(), tick) {
                if let Some(e) = touch {
                    item.exptime_tick = e;
                }
                out.push(ValueEntry {
                    key: key.as_bytes().to_vec(),
                    flags: item.flags,
                    data: item.data.clone(),
                    cas: with_cas.then_some(item.cas),
                });
            }
        }
        Reply::Values(out)
    }

    fn store(
        &mut self,
        mode: StoreMode,
        key: &[u8],
        flags: u32,
        exptime_tick: u32,
        data: &[u8],
        tick: u32,
    ) -> Reply {
        let old = self.live(key, tick).cloned();
        match (mode, old) {
            (StoreMode::Set, _) | (StoreMode::Add, None) | (StoreMode::Replace, Some(_)) => {
                self.link(key, data.to_vec(), flags, exptime_tick);
                Reply::Stored
            }
            (StoreMode::Add, Some(_)) => Reply::NotStored,
            (StoreMode::Replace | StoreMode::Append | StoreMode::Prepend, None) => Reply::NotStored,
            (StoreMode::Append | StoreMode::Prepend, Some(old)) => {
                // The item keeps its flags and exptime; the command's are ignored.
                let joined = if mode == StoreMode::Append {
                    [old.data.as_slice(), data].concat()
                } else {
                    [data, old.data.as_slice()].concat()
                };
                self.link(key, joined, old.flags, old.exptime_tick);
                Reply::Stored
            }
            (StoreMode::Cas(_), None) => Reply::NotFound,
            (StoreMode::Cas(want), Some(old)) => {
                if want != 0 && want == old.cas {
                    self.link(key, data.to_vec(), flags, exptime_tick);
                    Reply::Stored
                } else {
                    Reply::Exists
                }
            }
        }
    }
}

/// memcached's `safe_strtoull` on an item's data, which the server keeps followed by
/// `\r\n` and reads as a C string: optional leading whitespace, an optional sign, decimal
/// digits, then whitespace or the end of the string (the data's end or a NUL byte).
/// Overflow and a negative result are rejected; an empty value is not a number.
fn strtoull(data: &[u8]) -> Option<u64> {
    let text = match data.iter().position(|&b| b == 0) {
        Some(nul) => &data[..nul],
        None => data,
    };
    let space = |b: u8| matches!(b, b' ' | b'\t' | b'\n' | 0x0b | 0x0c | b'\r');
    let mut i = text.iter().take_while(|&&b| space(b)).count();
    let negative = text.get(i) == Some(&b'-');
    if matches!(text.get(i), Some(b'-' | b'+')) {
        i += 1;
    }
    let digits = text[i..].iter().take_while(|b| b.is_ascii_digit()).count();
    if digits == 0 {
        return None;
    }
    let mut magnitude: u64 = 0;
    for &d in &text[i..i + digits] {
        magnitude = magnitude
            .checked_mul(10)?
            .checked_add(u64::from(d - b'0'))?;
    }
    // After the digits: the end of the C string (data end → "\r", or a NUL) or a space.
    if let Some(&next) = text.get(i + digits)
        && !space(next)
    {
        return None;
    }
    if negative {
        let v = magnitude.wrapping_neg();
        // Rejected only when the result reads as negative as a signed number.
        return if (v as i64) < 0 { None } else { Some(v) };
    }
    Some(magnitude)
}

// ---------------------------------------------------------------------------------------
// Steps.
// ---------------------------------------------------------------------------------------

/// Bytes shown as a byte string in failure reports.
#[derive(Clone, PartialEq, Eq)]
struct Bytes(Vec<u8>);

impl fmt::Debug for Bytes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "b\"{}\"", self.0.escape_ascii())
    }
}

/// An index into [`KEYS`].
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct K(usize);

impl K {
    fn key(self) -> Key {
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
enum CasSrc {
    /// The last cas a `gets`/`gats` returned for this key (possibly stale).
    Seen,
    /// The item's current cas plus an offset (0: a guaranteed match while it is live).
    Current(i8),
    /// A fixed number (0 is the "no cas" value: always `EXISTS` on a live item).
    Literal(u64),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Mode {
    Set,
    Add,
    Replace,
    Append,
    Prepend,
}

/// One step of a generated sequence.
#[derive(Clone)]
enum Step {
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

fn key() -> impl Strategy<Value = K> {
    (0..KEYS.len()).prop_map(K)
}

fn exptime() -> impl Strategy<Value = i64> {
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

fn data() -> impl Strategy<Value = Bytes> {
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

fn flags() -> impl Strategy<Value = u32> {
    prop_oneof![4 => Just(0u32), 2 => 1u32..10, 1 => Just(u32::MAX), 1 => any::<u32>()]
}

fn delta() -> impl Strategy<Value = u64> {
    prop_oneof![
        1 => Just(0u64),
        6 => 1u64..20,
        2 => 1u64..10_000,
        1 => Just(u64::MAX),
        1 => Just(1u64 << 63),
        1 => any::<u64>(),
    ]
}

fn noreply() -> impl Strategy<Value = bool> {
    prop_oneof![9 => Just(false), 1 => Just(true)]
}

fn mode() -> impl Strategy<Value = Mode> {
    prop_oneof![
        4 => Just(Mode::Set),
        2 => Just(Mode::Add),
        2 => Just(Mode::Replace),
        1 => Just(Mode::Append),
        1 => Just(Mode::Prepend),
    ]
}

fn cas_src() -> impl Strategy<Value = CasSrc> {
    prop_oneof![
        4 => Just(CasSrc::Seen),
        4 => Just(CasSrc::Current(0)),
        2 => (-2i8..=2).prop_map(CasSrc::Current),
        1 => Just(CasSrc::Literal(0)),
        1 => (1u64..40).prop_map(CasSrc::Literal),
        1 => Just(CasSrc::Literal(u64::MAX)),
    ]
}

fn step() -> impl Strategy<Value = Step> {
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

fn phase() -> impl Strategy<Value = u64> {
    prop_oneof![Just(0u64), Just(SEC - 1), 0u64..SEC]
}

// ---------------------------------------------------------------------------------------
// The harness.
// ---------------------------------------------------------------------------------------

fn config(phase: u64) -> ServerConfig {
    ServerConfig {
        phase: Duration::from_micros(phase),
        unix_at_zero: UNIX_AT_ZERO,
        ..ServerConfig::default()
    }
}

/// Runs one sequence against a fresh server and a fresh model, comparing every reply.
fn run(phase: u64, steps: &[Step], by_value: bool) -> Result<(), TestCaseError> {
    run_on(
        Server::new(config(phase), VirtualTime::ZERO),
        phase,
        steps,
        by_value,
    )
}

/// Runs `warmup` on a server, resets it, then compares it with a fresh model on `steps`:
/// a reset server is indistinguishable from a new one.
fn run_after_reset(phase: u64, warmup: &[Step], steps: &[Step]) -> Result<(), TestCaseError> {
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
/// [`Server::apply_owned`] if `by_value`, else [`Server::apply`].
fn run_on(
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
            server.apply_owned(request.clone(), VirtualTime(now))
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
                    seen.insert(e.key.clone(), cas);
                }
            }
        }
    }
    Ok(())
}

/// The request a step sends, with its cas resolved against what the client has seen.
fn request(step: &Step, model: &Model, seen: &BTreeMap<Vec<u8>, u64>, now: u64) -> Request {
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

fn cases() -> u32 {
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

// ---------------------------------------------------------------------------------------
// The model against MEMCACHED.md's fidelity cases, and fixed sequences through the
// harness.
// ---------------------------------------------------------------------------------------

fn k(name: &str) -> Key {
    Key::new(name).unwrap()
}

fn set(mode: StoreMode, key: &str, flags: u32, exptime: i64, data: &[u8]) -> Request {
    Request::Store {
        mode,
        key: k(key),
        flags,
        exptime: Exptime(exptime),
        data: data.to_vec(),
        noreply: false,
    }
}

fn get(keys: &[&str], with_cas: bool) -> Request {
    Request::Get {
        keys: keys.iter().map(|n| k(n)).collect(),
        with_cas,
    }
}

fn arith(op: ArithOp, key: &str, delta: u64) -> Request {
    Request::Arith {
        op,
        key: k(key),
        delta,
        noreply: false,
    }
}

fn value(key: &str, flags: u32, data: &[u8], cas: Option<u64>) -> ValueEntry {
    ValueEntry {
        key: key.as_bytes().to_vec(),
        flags,
        data: data.to_vec(),
        cas,
    }
}

/// The model reproduces the documented fidelity cases (phase 0: ticks on whole seconds).
#[test]
fn model_follows_the_fidelity_cases() {
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
fn fixed_sequences() {
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
