//! Request lines as memcached 1.6.18 reads them.

use super::*;

fn line(s: &[u8]) -> Command {
    match parse_command(s) {
        Parsed::Line { command, .. } => command,
        other => panic!("{other:?}"),
    }
}

fn answered(s: &[u8]) -> (String, bool) {
    match line(s) {
        Command::Answer { bytes, noreply, .. } => (lossy(&bytes), noreply),
        other => panic!("{other:?}"),
    }
}

#[test]
fn framing() {
    assert_eq!(parse_command(b"get a"), Parsed::Incomplete);
    assert_eq!(parse_command(&[b'x'; 2049]), Parsed::Close);
    let mut long_get = b"get ".to_vec();
    long_get.resize(3000, b'k');
    assert_eq!(parse_command(&long_get), Parsed::Incomplete);
    assert_eq!(answered(b"\r\n").0, "ERROR\r\n");
    assert_eq!(answered(b"\n").0, "ERROR\r\n");
    assert!(
        matches!(line(b"get a\0junk\r\n"), Command::Execute(Request::Get { keys, .. }) if keys.len() == 1)
    );
    assert_eq!(line(b"GET / HTTP/1.1\r\n"), Command::Close);
}

#[test]
fn argument_errors() {
    assert_eq!(
        answered(b"incr k x\r\n").0,
        "CLIENT_ERROR invalid numeric delta argument\r\n"
    );
    assert_eq!(
        answered(b"incr k x noreply\r\n"),
        (
            "CLIENT_ERROR invalid numeric delta argument\r\n".into(),
            true
        )
    );
    assert!(
        answered(b"delete k 5\r\n")
            .0
            .contains("Usage: delete <key> [noreply]")
    );
    assert!(answered(b"delete k 5 noreply\r\n").1);
    assert_eq!(
        answered(b"flush_all noreply 5\r\n").0,
        "CLIENT_ERROR invalid exptime argument\r\n"
    );
    assert_eq!(
        answered(b"set k 0 0 -1\r\n").0,
        "CLIENT_ERROR bad command line format\r\n"
    );
    assert_eq!(answered(b"set k 0 0\r\n").0, "ERROR\r\n");
    assert_eq!(
        answered(b"ms k 2 MX\r\n").0,
        "CLIENT_ERROR invalid mode for ms M token\r\n"
    );
    assert!(matches!(
        line(b"ms k 2 Z\r\n"),
        Command::Answer { swallow: 4, .. }
    ));
    assert_eq!(
        answered(b"md k Z\r\n").0,
        "CLIENT_ERROR invalid or duplicate flag\r\n"
    );
}

#[test]
fn numbers_wrap_like_memcached() {
    match line(b"set f 4294967296 4294967297 4294967299\r\n") {
        Command::Store(head) => {
            assert_eq!(head.len, 3);
            assert_eq!(head.client_flags(), 0);
        }
        other => panic!("{other:?}"),
    }
}
