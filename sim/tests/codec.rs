//! The text-protocol codec: algebraic round trips (quickcheck) and byte-level cases.
//!
//! - `write_request` then `read_request` gives back the same request, and no proper prefix
//!   of its bytes is taken for a complete request.
//! - `write_reply` then `read_reply` (for a request the reply can answer) gives back the
//!   same reply, and no proper prefix is complete.
//! - A `Session` answers a stream of requests the same however the bytes are split.
//! - MEMCACHED.md §8 cases 12 and 14, and the other malformed-input rules, byte for byte.

use mcsim::codec::{Session, read_reply, read_request, reply_bytes, request_bytes};
use mcsim::protocol::{
    ArithOp, MetaCode, MetaCommand, MetaFlag, MetaReply, Reply, Request, StoreMode, ValueEntry,
};
use mcsim::{Exptime, Key, Server, ServerConfig, VirtualTime};
use quickcheck::{Arbitrary, Gen, QuickCheck};

// ---------------------------------------------------------------------------------------
// Generators.

fn pick(g: &mut Gen, n: usize) -> usize {
    usize::arbitrary(g) % n.max(1)
}

fn chance(g: &mut Gen, percent: usize) -> bool {
    pick(g, 100) < percent
}

/// Key bytes: anything but space, CR, LF and NUL; mostly short and readable.
fn key(g: &mut Gen) -> Key {
    let len = match pick(g, 10) {
        0 => 250,
        1 => 1 + pick(g, 250),
        _ => 1 + pick(g, 12),
    };
    let readable = chance(g, 80);
    let bytes: Vec<u8> = (0..len)
        .map(|_| {
            loop {
                let b = if readable {
                    *g.choose(b"abcdefghijklmnopqrstuvwxyz0123456789_:-.\t")
                        .unwrap()
                } else {
                    u8::arbitrary(g)
                };
                if !matches!(b, b' ' | b'\r' | b'\n' | 0) {
                    break b;
                }
            }
        })
        .collect();
    Key::new(bytes).unwrap()
}

fn keys(g: &mut Gen, min: usize, max: usize) -> Vec<Key> {
    let n = min + pick(g, max - min + 1);
    (0..n).map(|_| key(g)).collect()
}

fn data(g: &mut Gen) -> Vec<u8> {
    let len = match pick(g, 10) {
        0 => 0,
        1 => pick(g, 5000),
        _ => pick(g, 40),
    };
    (0..len).map(|_| u8::arbitrary(g)).collect()
}

fn exptime(g: &mut Gen) -> Exptime {
    Exptime(match pick(g, 4) {
        0 => 0,
        1 => i64::arbitrary(g),
        2 => i64::from(i32::arbitrary(g)),
        _ => pick(g, 100_000) as i64,
    })
}

fn text(g: &mut Gen, alphabet: &[u8], min: usize, max: usize) -> String {
    let n = min + pick(g, max - min + 1);
    (0..n)
        .map(|_| *g.choose(alphabet).unwrap() as char)
        .collect()
}

const ALNUM: &[u8] = b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
const PRINTABLE: &[u8] = b"abcdefghijklmnopqrstuvwxyz ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.:-_/|";

/// Flags that pass memcached's meta flag checks, without repeats.
fn meta_flags(g: &mut Gen, command: MetaCommand) -> Vec<MetaFlag> {
    let modes: &[u8] = match command {
        MetaCommand::Set => b"EAPRS",
        MetaCommand::Arithmetic => b"I+D-",
        _ => b"ab",
    };
    let mut candidates: Vec<MetaFlag> = b"vcfskqthluIPL"
        .iter()
        .map(|&l| MetaFlag::bare(l))
        .collect();
    candidates.push(MetaFlag::with(b'T', i32::arbitrary(g)));
    candidates.push(MetaFlag::with(b'N', i32::arbitrary(g)));
    candidates.push(MetaFlag::with(b'R', pick(g, 1000)));
    candidates.push(MetaFlag::with(b'C', u64::arbitrary(g)));
    candidates.push(MetaFlag::with(b'J', u64::arbitrary(g)));
    candidates.push(MetaFlag::with(b'D', u64::arbitrary(g)));
    candidates.push(MetaFlag::with(b'F', u32::arbitrary(g)));
    candidates.push(MetaFlag::with(b'M', *g.choose(modes).unwrap() as char));
    candidates.push(MetaFlag::with(b'O', text(g, ALNUM, 1, 31)));
    let n = pick(g, 9);
    let mut out = Vec::new();
    for _ in 0..n {
        let i = pick(g, candidates.len());
        out.push(candidates.swap_remove(i));
    }
    out
}

#[derive(Debug, Clone)]
struct ArbRequest(Request);

impl Arbitrary for ArbRequest {
    fn arbitrary(g: &mut Gen) -> ArbRequest {
        let noreply = chance(g, 20);
        ArbRequest(match pick(g, 12) {
            0 => Request::Get {
                keys: keys(g, 1, 30),
                with_cas: bool::arbitrary(g),
            },
            1 => Request::Gat {
                exptime: exptime(g),
                keys: keys(g, 0, 5),
                with_cas: bool::arbitrary(g),
            },
            2 | 3 => Request::Store {
                mode: match pick(g, 6) {
                    0 => StoreMode::Set,
                    1 => StoreMode::Add,
                    2 => StoreMode::Replace,
                    3 => StoreMode::Append,
                    4 => StoreMode::Prepend,
                    _ => StoreMode::Cas(u64::arbitrary(g)),
                },
                key: key(g),
                flags: u32::arbitrary(g),
                exptime: exptime(g),
                data: data(g),
                noreply,
            },
            4 => Request::Arith {
                op: if bool::arbitrary(g) {
                    ArithOp::Incr
                } else {
                    ArithOp::Decr
                },
                key: key(g),
                delta: u64::arbitrary(g),
                noreply,
            },
            5 => Request::Delete {
                key: key(g),
                noreply,
            },
            6 => Request::Touch {
                key: key(g),
                exptime: exptime(g),
                noreply,
            },
            7 => Request::FlushAll {
                delay: bool::arbitrary(g).then(|| i64::arbitrary(g)),
                noreply,
            },
            8 => {
                let command = *g
                    .choose(&[
                        MetaCommand::Get,
                        MetaCommand::Set,
                        MetaCommand::Delete,
                        MetaCommand::Arithmetic,
                        MetaCommand::Noop,
                    ])
                    .unwrap();
                if command == MetaCommand::Noop {
                    Request::Meta {
                        command,
                        key: None,
                        flags: vec![],
                        data: None,
                    }
                } else {
                    Request::Meta {
                        command,
                        key: Some(key(g)),
                        flags: meta_flags(g, command),
                        data: (command == MetaCommand::Set).then(|| data(g)),
                    }
                }
            }
            9 => Request::Verbosity {
                level: u32::arbitrary(g),
                noreply,
            },
            10 => Request::Version,
            _ => Request::Stats,
        })
    }
}

/// A reply together with a request it can answer.
#[derive(Debug, Clone)]
struct ArbExchange {
    request: Request,
    reply: Reply,
}

fn some_key() -> Key {
    Key::new("k").unwrap()
}

fn plain_store() -> Request {
    Request::Store {
        mode: StoreMode::Set,
        key: some_key(),
        flags: 0,
        exptime: Exptime(0),
        data: b"v".to_vec(),
        noreply: false,
    }
}

fn reply_flags(g: &mut Gen) -> Vec<MetaFlag> {
    (0..pick(g, 5))
        .map(|_| {
            let letter = *g.choose(ALNUM).unwrap();
            let letter = if letter.is_ascii_digit() {
                b'k'
            } else {
                letter
            };
            if bool::arbitrary(g) {
                MetaFlag::bare(letter)
            } else {
                MetaFlag::with(letter, text(g, b"0123456789abcXYZ-", 1, 12))
            }
        })
        .collect()
}

impl Arbitrary for ArbExchange {
    fn arbitrary(g: &mut Gen) -> ArbExchange {
        let any_request = ArbRequest::arbitrary(g).0;
        let (request, reply) = match pick(g, 9) {
            0 => {
                let with_cas = bool::arbitrary(g);
                let entries = (0..pick(g, 4))
                    .map(|_| ValueEntry {
                        key: key(g).as_bytes().to_vec(),
                        flags: u32::arbitrary(g),
                        data: data(g),
                        cas: with_cas.then(|| u64::arbitrary(g)),
                    })
                    .collect();
                (
                    Request::Get {
                        keys: vec![some_key()],
                        with_cas,
                    },
                    Reply::Values(entries),
                )
            }
            1 => (
                Request::Arith {
                    op: ArithOp::Incr,
                    key: some_key(),
                    delta: 1,
                    noreply: false,
                },
                Reply::Number(u64::arbitrary(g)),
            ),
            2 => {
                let stats = (0..pick(g, 6))
                    .map(|_| {
                        (
                            text(g, b"abcdefghijklmnopqrstuvwxyz_", 1, 20),
                            text(g, PRINTABLE, 0, 20),
                        )
                    })
                    .collect();
                (Request::Stats, Reply::Stats(stats))
            }
            3 => (Request::Version, Reply::Version(text(g, PRINTABLE, 0, 20))),
            4 => {
                let code = *g
                    .choose(&[
                        MetaCode::Value,
                        MetaCode::Header,
                        MetaCode::Miss,
                        MetaCode::NotStored,
                        MetaCode::Exists,
                        MetaCode::NotFound,
                        MetaCode::Noop,
                    ])
                    .unwrap();
                let reply = MetaReply {
                    code,
                    flags: reply_flags(g),
                    value: (code == MetaCode::Value).then(|| data(g)),
                };
                let request = Request::Meta {
                    command: MetaCommand::Get,
                    key: Some(some_key()),
                    flags: vec![MetaFlag::bare(b'v')],
                    data: None,
                };
                (request, Reply::Meta(reply))
            }
            5 => {
                let simple = g
                    .choose(&[
                        Reply::Stored,
                        Reply::NotStored,
                        Reply::Exists,
                        Reply::NotFound,
                        Reply::Deleted,
                        Reply::Touched,
                        Reply::Ok,
                    ])
                    .unwrap()
                    .clone();
                (plain_store(), simple)
            }
            6 | 7 => {
                let request = if any_request.is_noreply() {
                    plain_store()
                } else {
                    any_request
                };
                let reply = match pick(g, 3) {
                    0 => Reply::Error,
                    1 => Reply::ClientError(text(g, PRINTABLE, 0, 40)),
                    _ => Reply::ServerError(text(g, PRINTABLE, 0, 40)),
                };
                (request, reply)
            }
            _ => (
                Request::Delete {
                    key: some_key(),
                    noreply: true,
                },
                Reply::Silent,
            ),
        };
        ArbExchange { request, reply }
    }
}

// ---------------------------------------------------------------------------------------
// Properties.

fn request_round_trip(r: ArbRequest) -> bool {
    let bytes = request_bytes(&r.0);
    let whole = read_request(&bytes);
    if whole != Ok(Some((r.0.clone(), bytes.len()))) {
        eprintln!(
            "{:?}\n  bytes {:?}\n  read {whole:?}",
            r.0,
            String::from_utf8_lossy(&bytes)
        );
        return false;
    }
    (0..bytes.len()).all(|cut| read_request(&bytes[..cut]) == Ok(None))
}

fn reply_round_trip(x: ArbExchange) -> bool {
    let bytes = reply_bytes(&x.reply);
    let whole = read_reply(&bytes, &x.request);
    let expected = (x.reply.clone(), bytes.len());
    if whole.as_ref().ok() != Some(&Some(expected)) {
        eprintln!(
            "{:?} for {:?}\n  bytes {:?}\n  read {whole:?}",
            x.reply,
            x.request,
            String::from_utf8_lossy(&bytes)
        );
        return false;
    }
    (0..bytes.len()).all(|cut| matches!(read_reply(&bytes[..cut], &x.request), Ok(None)))
}

fn session_ignores_splitting(requests: Vec<ArbRequest>, cuts: Vec<usize>) -> bool {
    let now = VirtualTime::from_secs(5);
    let stream: Vec<u8> = requests.iter().flat_map(|r| request_bytes(&r.0)).collect();
    let mut whole_server = Server::with_defaults();
    let whole = Session::new().feed(&mut whole_server, &stream, now);
    let mut split_server = Server::with_defaults();
    let mut session = Session::new();
    let mut split = Vec::new();
    let mut at = 0;
    for c in cuts {
        let end = (at + c % 300).min(stream.len());
        split.extend(session.feed(&mut split_server, &stream[at..end], now));
        at = end;
    }
    split.extend(session.feed(&mut split_server, &stream[at..], now));
    whole == split && session.pending() == 0
}

#[test]
fn write_request_then_read_request_is_identity() {
    QuickCheck::new()
        .tests(2000)
        .quickcheck(request_round_trip as fn(ArbRequest) -> bool);
}

#[test]
fn write_reply_then_read_reply_is_identity() {
    QuickCheck::new()
        .tests(2000)
        .quickcheck(reply_round_trip as fn(ArbExchange) -> bool);
}

#[test]
fn session_output_does_not_depend_on_how_input_is_split() {
    QuickCheck::new()
        .tests(300)
        .quickcheck(session_ignores_splitting as fn(Vec<ArbRequest>, Vec<usize>) -> bool);
}

// ---------------------------------------------------------------------------------------
// Byte-level cases through a Session.

struct Conn {
    server: Server,
    session: Session,
}

impl Conn {
    fn new() -> Conn {
        Conn {
            server: Server::new(ServerConfig::default(), VirtualTime::ZERO),
            session: Session::new(),
        }
    }

    fn send(&mut self, bytes: &[u8]) -> String {
        let out = self
            .session
            .feed(&mut self.server, bytes, VirtualTime::from_secs(1));
        String::from_utf8_lossy(&out).into_owned()
    }
}

#[test]
fn case_12_overlong_key() {
    let mut c = Conn::new();
    let long = "k".repeat(251);
    assert_eq!(c.send(b"set a 0 0 1\r\nx\r\n"), "STORED\r\n");
    assert_eq!(
        c.send(format!("get {long}\r\n").as_bytes()),
        "CLIENT_ERROR bad command line format\r\n"
    );
    assert_eq!(
        c.send(format!("get a {long}\r\n").as_bytes()),
        "CLIENT_ERROR bad command line format\r\n"
    );
    assert_eq!(
        c.send(format!("set {long} 0 0 1\r\nx\r\n").as_bytes()),
        "CLIENT_ERROR bad command line format\r\nERROR\r\n"
    );
    assert_eq!(
        c.send(format!("set {long} 0 0 1 noreply\r\nx\r\n").as_bytes()),
        "ERROR\r\n"
    );
    let ok = "k".repeat(250);
    assert_eq!(
        c.send(format!("set {ok} 0 0 1\r\nx\r\nget {ok}\r\n").as_bytes()),
        format!("STORED\r\nVALUE {ok} 0 1\r\nx\r\nEND\r\n")
    );
}

#[test]
fn case_14_bad_data_chunk() {
    let mut c = Conn::new();
    assert_eq!(
        c.send(b"set d 0 0 3\r\nabcde\r\n"),
        "CLIENT_ERROR bad data chunk\r\nERROR\r\n"
    );
    assert_eq!(c.send(b"get d\r\n"), "END\r\n");
    // The bytes after the block are the next command line.
    assert_eq!(
        c.send(b"set d 0 0 1\r\nabcget d\r\n"),
        "CLIENT_ERROR bad data chunk\r\nEND\r\n"
    );
    // noreply hides the error, not the line that follows.
    assert_eq!(c.send(b"set d 0 0 3 noreply\r\nabcde\r\n"), "ERROR\r\n");
}

#[test]
fn partial_input_waits() {
    let mut c = Conn::new();
    let stream = b"set k 5 0 3\r\nabc\r\nget k\r\n";
    let mut out = String::new();
    for b in stream {
        out += &c.send(&[*b]);
    }
    assert_eq!(out, "STORED\r\nVALUE k 5 3\r\nabc\r\nEND\r\n");
    assert_eq!(c.session.pending(), 0);
}

#[test]
fn too_large_swallows_the_block_and_drops_the_old_value() {
    let mut c = Conn::new();
    assert_eq!(c.send(b"set k 0 0 1\r\nx\r\n"), "STORED\r\n");
    let mut big = b"set k 0 0 1048517\r\n".to_vec();
    big.resize(big.len() + 1_048_517, b'v');
    big.extend_from_slice(b"XY"); // not even checked
    big.extend_from_slice(b"get k\r\n");
    assert_eq!(
        c.send(&big),
        "SERVER_ERROR object too large for cache\r\nEND\r\n"
    );
    let mut fits = b"set k 0 0 1048516\r\n".to_vec();
    fits.resize(fits.len() + 1_048_516, b'v');
    fits.extend_from_slice(b"\r\n");
    assert_eq!(c.send(&fits), "STORED\r\n");
}

#[test]
fn argument_errors_and_noreply() {
    let mut c = Conn::new();
    let cases: &[(&[u8], &str)] = &[
        (b"GET k\r\n", "ERROR\r\n"),
        (b"\r\n", "ERROR\r\n"),
        (b"get\r\n", "ERROR\r\n"),
        (
            b"incr k x\r\n",
            "CLIENT_ERROR invalid numeric delta argument\r\n",
        ),
        (b"incr k x noreply\r\nmn\r\n", "MN\r\n"),
        (
            b"incr k -1\r\n",
            "CLIENT_ERROR invalid numeric delta argument\r\n",
        ),
        (
            b"touch k x\r\n",
            "CLIENT_ERROR invalid exptime argument\r\n",
        ),
        (
            b"delete k 5\r\n",
            "CLIENT_ERROR bad command line format.  Usage: delete <key> [noreply]\r\n",
        ),
        (b"delete k 5 noreply\r\n", ""),
        (b"delete k 0\r\n", "NOT_FOUND\r\n"),
        (
            b"set k 0 0 -1\r\n",
            "CLIENT_ERROR bad command line format\r\n",
        ),
        (
            b"set k x 0 1\r\nv\r\n",
            "CLIENT_ERROR bad command line format\r\nERROR\r\n",
        ),
        (
            b"set f 4294967296 0 1\r\nv\r\nget f\r\n",
            "STORED\r\nVALUE f 0 1\r\nv\r\nEND\r\n",
        ),
        (
            b"flush_all noreply 5\r\n",
            "CLIENT_ERROR invalid exptime argument\r\n",
        ),
        (b"verbosity 1\r\n", "OK\r\n"),
        (b"version\r\n", "VERSION 1.6.18\r\n"),
        (b"shutdown\r\n", "ERROR: shutdown not enabled\r\n"),
        (b"gat 10\r\n", "END\r\n"),
        (b"mn anything\r\n", "MN\r\n"),
        (b"ms k 2 Z\r\nxx\r\n", "CLIENT_ERROR invalid flag\r\n"),
        (
            b"mg k T\r\n",
            "CLIENT_ERROR bad token in command line format\r\n",
        ),
    ];
    for (input, expected) in cases {
        assert_eq!(
            &c.send(input),
            expected,
            "input {:?}",
            String::from_utf8_lossy(input)
        );
    }
}

#[test]
fn connection_closes() {
    let mut c = Conn::new();
    assert_eq!(c.send(b"get a\r\nquit\r\nget a\r\n"), "END\r\n");
    assert!(c.session.is_closed());
    assert_eq!(c.send(b"get a\r\n"), "");

    let mut c = Conn::new();
    let mut line = b"version\r\n".to_vec();
    line.resize(line.len() + 2100, b'x');
    assert_eq!(c.send(&line), "");
    assert!(c.session.is_closed());

    let mut c = Conn::new();
    let mut get = b"get ".to_vec();
    get.resize(3000, b'k');
    assert_eq!(c.send(&get), "");
    assert!(!c.session.is_closed());

    let mut c = Conn::new();
    assert_eq!(c.send(b"GET / HTTP/1.1\r\n"), "");
    assert!(c.session.is_closed());
}

/// A retrieval with an over-long key discards every reply memcached has not written yet:
/// those since the last write (a successful get, `mn`, an emptied read buffer, or the 21st
/// command of a read). Observed on 1.6.18 with each input sent in one write.
#[test]
fn failed_retrieval_discards_unwritten_replies() {
    let long = "k".repeat(251);
    let bad_get = format!("get {long}\r\n");
    let err = "CLIENT_ERROR bad command line format\r\n";
    let run = |input: Vec<u8>| Conn::new().send(&input);
    assert_eq!(run(format!("flush_all\r\n{bad_get}").into_bytes()), err);
    assert_eq!(
        run(format!("get a\r\nincr a 1\r\n{bad_get}").into_bytes()),
        format!("END\r\n{err}")
    );
    let set = |n: usize| {
        let mut v = format!("set k 0 0 {n}\r\n").into_bytes();
        v.resize(v.len() + n, b'v');
        v.extend_from_slice(b"\r\n");
        v.extend_from_slice(bad_get.as_bytes());
        v
    };
    // A block beyond the 16 KiB read buffer is read directly; the buffer is then empty.
    assert_eq!(run(set(20_000)), format!("STORED\r\n{err}"));
    assert_eq!(run(set(2_000)), err);
    for (incrs, written) in [(19, 0), (20, 0), (21, 21), (22, 21), (25, 21), (45, 41)] {
        let mut input = "incr a 1\r\n".repeat(incrs);
        input += &bad_get;
        let out = run(input.into_bytes());
        assert_eq!(out.matches("NOT_FOUND").count(), written, "{incrs} incrs");
        assert!(out.ends_with(err));
    }
}
