//! The meta commands against the cases memcached 1.6.18 answers.

use super::*;
use crate::protocol::Request;

fn key(s: &str) -> Key {
    Key::new(s).unwrap()
}

fn flags(text: &str) -> Vec<MetaFlag> {
    text.split_whitespace()
        .map(|w| MetaFlag::parse(w.as_bytes()))
        .collect()
}

fn run(
    server: &mut Server,
    command: MetaCommand,
    k: &str,
    f: &str,
    data: Option<&[u8]>,
    now: VirtualTime,
) -> Reply {
    let request = Request::Meta {
        command,
        key: Some(key(k)),
        flags: flags(f),
        data: data.map(<[u8]>::to_vec),
    };
    server.apply(&request, now)
}

fn mg(server: &mut Server, k: &str, f: &str, now: VirtualTime) -> Reply {
    run(server, MetaCommand::Get, k, f, None, now)
}

fn ms(server: &mut Server, k: &str, data: &[u8], f: &str, now: VirtualTime) -> Reply {
    run(server, MetaCommand::Set, k, f, Some(data), now)
}

fn md(server: &mut Server, k: &str, f: &str, now: VirtualTime) -> Reply {
    run(server, MetaCommand::Delete, k, f, None, now)
}

fn ma(server: &mut Server, k: &str, f: &str, now: VirtualTime) -> Reply {
    run(server, MetaCommand::Arithmetic, k, f, None, now)
}

/// The reply as it would read on the wire (status line only, value after `/`).
fn line(reply: &Reply) -> String {
    match reply {
        Reply::Meta(m) => {
            let mut s = m.code.as_str().to_string();
            if let Some(v) = &m.value {
                s.push_str(&format!(" {}", v.len()));
            }
            for f in &m.flags {
                s.push_str(&format!(" {f}"));
            }
            if let Some(v) = &m.value {
                s.push_str(&format!(" / {}", String::from_utf8_lossy(v)));
            }
            s
        }
        other => format!("{other:?}"),
    }
}

const T0: VirtualTime = VirtualTime(10_000_000);

#[test]
fn case_18_dog_pile_vivify_win_then_z() {
    let mut s = Server::with_defaults();
    assert_eq!(line(&mg(&mut s, "dp", "v c N30 t", T0)), "VA 0 c1 t30 W / ");
    assert_eq!(line(&mg(&mut s, "dp", "v c N30 t", T0)), "VA 0 c1 t30 Z / ");
    assert_eq!(line(&ms(&mut s, "dp", b"abcd", "C1 T60", T0)), "HD");
    assert_eq!(line(&mg(&mut s, "dp", "v c t", T0)), "VA 4 c2 t60 / abcd");
}

#[test]
fn case_19_counter_auto_create() {
    let mut s = Server::with_defaults();
    assert_eq!(line(&ma(&mut s, "cnt", "", T0)), "NF");
    assert_eq!(line(&ma(&mut s, "cnt", "N0 J10 v", T0)), "VA 2 / 10");
    assert_eq!(line(&ma(&mut s, "cnt", "v", T0)), "VA 2 / 11");
    assert_eq!(line(&ma(&mut s, "cnt", "MD D100 v", T0)), "VA 1 / 0");
    // Decrementing in place pads the stored number.
    assert_eq!(line(&mg(&mut s, "cnt", "v", T0)), "VA 2 / 0 ");
}

#[test]
fn stale_while_revalidate() {
    let mut s = Server::with_defaults();
    assert_eq!(line(&ms(&mut s, "s", b"old", "T100", T0)), "HD");
    assert_eq!(line(&md(&mut s, "s", "I T30", T0)), "HD");
    // First reader after the invalidation wins the rebuild and still gets the value.
    assert_eq!(line(&mg(&mut s, "s", "v c t", T0)), "VA 3 c2 t30 X W / old");
    assert_eq!(line(&mg(&mut s, "s", "v c t", T0)), "VA 3 c2 t30 Z X / old");
    // A cas older than the item's is refused without I, accepted as stale with it.
    assert_eq!(line(&ms(&mut s, "s", b"new", "C1 c", T0)), "EX c0");
    assert_eq!(line(&ms(&mut s, "s", b"nw2", "C1 I c", T0)), "HD c3");
    assert_eq!(line(&mg(&mut s, "s", "v c t", T0)), "VA 3 c3 t30 Z X / nw2");
    // The winner stores with the current cas: fresh again.
    assert_eq!(line(&ms(&mut s, "s", b"new", "C3 T60", T0)), "HD");
    assert_eq!(line(&mg(&mut s, "s", "v t", T0)), "VA 3 t60 / new");
    // Invalidating without a value reply: HD with X W, then Z X.
    assert_eq!(line(&md(&mut s, "s", "I", T0)), "HD");
    assert_eq!(line(&mg(&mut s, "s", "c", T0)), "HD c5 X W");
    assert_eq!(line(&mg(&mut s, "s", "c", T0)), "HD c5 Z X");
}

#[test]
fn quiet_mode_hides_only_nominal_replies() {
    let mut s = Server::with_defaults();
    assert_eq!(mg(&mut s, "nokey", "v q", T0), Reply::Silent);
    assert_eq!(ms(&mut s, "a", b"hi", "q", T0), Reply::Silent);
    assert_eq!(line(&mg(&mut s, "a", "q", T0)), "HD");
    assert_eq!(line(&ms(&mut s, "a", b"hi", "ME q c", T0)), "NS c0");
    assert_eq!(line(&ma(&mut s, "n", "q", T0)), "NF");
    assert_eq!(line(&ma(&mut s, "n", "N0 J5 q v", T0)), "VA 1 / 5");
    assert_eq!(ma(&mut s, "n", "q v", T0), Reply::Silent);
    assert_eq!(line(&ma(&mut s, "n", "v", T0)), "VA 1 / 7");
    assert_eq!(md(&mut s, "n", "q", T0), Reply::Silent);
    assert_eq!(line(&md(&mut s, "n", "q", T0)), "NF");
}

#[test]
fn flag_errors_as_1_6_18() {
    let mut s = Server::with_defaults();
    let e = |m: &str| format!("{:?}", Reply::ClientError(m.into()));
    assert_eq!(line(&mg(&mut s, "a", "v v", T0)), e("duplicate flag"));
    assert_eq!(line(&mg(&mut s, "a", "E5", T0)), e("invalid flag"));
    assert_eq!(
        line(&mg(&mut s, "a", "Nx", T0)),
        e("bad token in command line format")
    );
    assert_eq!(
        line(&mg(&mut s, "a", "Fx", T0)),
        e("bad command line format")
    );
    assert_eq!(
        line(&mg(&mut s, "a", "MEE", T0)),
        e("incorrect length for M token")
    );
    assert_eq!(
        line(&mg(&mut s, "a", "O12345678901234567890123456789012", T0)),
        e("opaque token too long")
    );
    assert_eq!(
        line(&mg(&mut s, "a", "a b c d e f g h i j k l m n o p q r", T0)),
        e("options flags are too long")
    );
    assert_eq!(
        line(&md(&mut s, "a", "x", T0)),
        e("invalid or duplicate flag")
    );
    assert_eq!(
        line(&ma(&mut s, "a", "MX", T0)),
        e("invalid mode for ma M token")
    );
    assert_eq!(
        line(&ms(&mut s, "a", b"hi", "MX", T0)),
        e("invalid mode for ms M token")
    );
    assert_eq!(
        line(&ms(
            &mut s,
            "a",
            b"hi",
            "a b c d e f g h i j k l m n o p q",
            T0
        )),
        e("options flags too long")
    );
    assert_eq!(
        line(&mg(&mut s, "Zm9!!", "b v", T0)),
        e("error decoding key")
    );
    let no_key = Request::Meta {
        command: MetaCommand::Get,
        key: None,
        flags: vec![],
        data: None,
    };
    assert_eq!(s.apply(&no_key, T0), Reply::Error);
}

#[test]
fn base64_keys_round_trip() {
    let mut s = Server::with_defaults();
    assert_eq!(
        line(&ms(&mut s, "Zm9v", b"hi", "b k c", T0)),
        "HD kZm9v b c1"
    );
    assert_eq!(line(&mg(&mut s, "foo", "v k", T0)), "VA 2 kZm9v b / hi");
    assert_eq!(
        line(&mg(&mut s, "Zm9vYmFy", "b v k O1", T0)),
        "EN kZm9vYmFy b O1"
    );
    assert_eq!(md(&mut s, "Zm9v", "b q", T0), Reply::Silent);
    assert_eq!(base64_encode(b"f"), "Zg==");
    assert_eq!(base64_encode(b"fo"), "Zm8=");
    assert_eq!(base64_decode(b"Zg=="), Some(b"f".to_vec()));
    assert_eq!(base64_decode(b"Zm8="), Some(b"fo".to_vec()));
    assert_eq!(base64_decode(b"Zm9"), None);
}

#[test]
fn recache_and_ttl_flags() {
    let mut s = Server::with_defaults();
    assert_eq!(line(&ms(&mut s, "n", b"99", "T100", T0)), "HD");
    // A grown number re-allocates: the T of that request is lost, as in 1.6.18.
    assert_eq!(line(&ma(&mut s, "n", "T500 t v", T0)), "VA 3 t500 / 100");
    assert_eq!(line(&mg(&mut s, "n", "t", T0)), "HD t100");
    assert_eq!(line(&ma(&mut s, "n", "T500 t v", T0)), "VA 3 t500 / 101");
    assert_eq!(line(&mg(&mut s, "n", "t", T0)), "HD t500");
    assert_eq!(line(&mg(&mut s, "n", "R600 t", T0)), "HD t500 W");
    assert_eq!(line(&mg(&mut s, "n", "R600 t", T0)), "HD t500 Z");
    assert_eq!(line(&mg(&mut s, "n", "h l s f", T0)), "HD h1 l0 s3 f0 Z");
}
