//! Round-trip properties of the codec.

#[allow(unused_imports)]
use super::*;

// ---------------------------------------------------------------------------------------
// Properties.

pub(crate) fn request_round_trip(r: ArbRequest) -> bool {
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

pub(crate) fn reply_round_trip(x: ArbExchange) -> bool {
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

pub(crate) fn session_ignores_splitting(requests: Vec<ArbRequest>, cuts: Vec<usize>) -> bool {
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
pub(crate) fn write_request_then_read_request_is_identity() {
    QuickCheck::new()
        .tests(2000)
        .quickcheck(request_round_trip as fn(ArbRequest) -> bool);
}

#[test]
pub(crate) fn write_reply_then_read_reply_is_identity() {
    QuickCheck::new()
        .tests(2000)
        .quickcheck(reply_round_trip as fn(ArbExchange) -> bool);
}

#[test]
pub(crate) fn session_output_does_not_depend_on_how_input_is_split() {
    QuickCheck::new()
        .tests(300)
        .quickcheck(session_ignores_splitting as fn(Vec<ArbRequest>, Vec<usize>) -> bool);
}
