//! Generators of requests, replies and exchanges for the round-trip properties.

#[allow(unused_imports)]
use super::*;

// ---------------------------------------------------------------------------------------
// Generators.

pub(crate) fn pick(g: &mut Gen, n: usize) -> usize {
    usize::arbitrary(g) % n.max(1)
}

pub(crate) fn chance(g: &mut Gen, percent: usize) -> bool {
    pick(g, 100) < percent
}

/// Key bytes: anything but space, CR, LF and NUL; mostly short and readable.
pub(crate) fn key(g: &mut Gen) -> Key {
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

pub(crate) fn keys(g: &mut Gen, min: usize, max: usize) -> Vec<Key> {
    let n = min + pick(g, max - min + 1);
    (0..n).map(|_| key(g)).collect()
}

pub(crate) fn data(g: &mut Gen) -> Vec<u8> {
    let len = match pick(g, 10) {
        0 => 0,
        1 => pick(g, 5000),
        _ => pick(g, 40),
    };
    (0..len).map(|_| u8::arbitrary(g)).collect()
}

pub(crate) fn exptime(g: &mut Gen) -> Exptime {
    Exptime(match pick(g, 4) {
        0 => 0,
        1 => i64::arbitrary(g),
        2 => i64::from(i32::arbitrary(g)),
        _ => pick(g, 100_000) as i64,
    })
}

pub(crate) fn text(g: &mut Gen, alphabet: &[u8], min: usize, max: usize) -> String {
    let n = min + pick(g, max - min + 1);
    (0..n)
        .map(|_| *g.choose(alphabet).unwrap() as char)
        .collect()
}

pub(crate) const ALNUM: &[u8] = b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
pub(crate) const PRINTABLE: &[u8] =
    b"abcdefghijklmnopqrstuvwxyz ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.:-_/|";

/// Flags that pass memcached's meta flag checks, without repeats.
pub(crate) fn meta_flags(g: &mut Gen, command: MetaCommand) -> Vec<MetaFlag> {
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
pub(crate) struct ArbRequest(pub(crate) Request);

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
pub(crate) struct ArbExchange {
    pub(crate) request: Request,
    pub(crate) reply: Reply,
}

pub(crate) fn some_key() -> Key {
    Key::new("k").unwrap()
}

pub(crate) fn plain_store() -> Request {
    Request::Store {
        mode: StoreMode::Set,
        key: some_key(),
        flags: 0,
        exptime: Exptime(0),
        data: b"v".to_vec(),
        noreply: false,
    }
}

pub(crate) fn reply_flags(g: &mut Gen) -> Vec<MetaFlag> {
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
                        key: key(g),
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
