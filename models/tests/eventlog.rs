//! The event log: DS's ring keeps about one chunk less than it claims (less again with a
//! tick phase, late events or a fast writer), and spins on a chunk at the item size
//! limit; keys named by the chunk number keep the claim.

mod support;

use mcsim::memcache::Memcache;
use mcsim_models::eventlog::{Event, deserialize};
use support::{at_phase_zero, points, quick, violation};

#[test]
fn as_written_keeps_about_one_chunk_less_than_claimed() {
    let report = quick(&at_phase_zero(&points("eventlog-as-written")[0]), 0, false);
    let v = violation(&report);
    assert_eq!(v.invariant, "eventlog.capacity");
    let n = &v.failure.numbers;
    assert_eq!(n["claimed_ms"], 6000);
    // (numChunks - 2) * timeChunk = 4 s, plus how late the chunk's first event came.
    assert!((4000..5000).contains(&n["retention_measured_ms"]), "{n:?}");
    assert!(n["age_ms"] <= 6000);
}

#[test]
fn measured_retention_falls_with_the_tick_phase_and_never_reaches_the_claim() {
    let ps = points("eventlog-as-written-sweep");
    assert_eq!(ps.len(), 6);
    let mut dense = Vec::new();
    for s in &ps {
        let report = quick(s, 3, true);
        assert_eq!(report.label(), "eventlog.capacity", "{:?}", s.point);
        let measured = report.metrics["eventlog.retention_measured_s"].max;
        assert!(measured < 6.0, "{:?}: {measured}", s.point);
        if s.point[0] == "rate_per_s=20" {
            dense.push(measured);
        }
    }
    // Dense traffic: 4 s at phase 0, half a second less at phase 500.
    assert!(
        (dense[0] - 4.0).abs() < 0.2 && (dense[1] - 3.5).abs() < 0.2,
        "{dense:?}"
    );
}

#[test]
fn late_events_and_fast_writers_shorten_retention_further() {
    let late = quick(&points("eventlog-as-written-late")[0], 5, true);
    assert_eq!(late.label(), "eventlog.capacity");
    assert!(late.metrics["eventlog.retention_measured_s"].min < 4.0);
    // DS's follower, fetch(first = lastSeen), never sees some late events.
    assert!(late.metrics["eventlog.tail_missed"].max >= 1.0);
    let skew = quick(&points("eventlog-as-written-skew")[0], 5, true);
    assert_eq!(skew.label(), "eventlog.capacity");
    assert!(skew.metrics["eventlog.retention_measured_s"].min < 3.5);
}

#[test]
fn as_written_spins_on_a_chunk_at_the_item_size_limit() {
    let report = quick(&points("eventlog-as-written-large")[0], 0, false);
    let v = violation(&report);
    assert_eq!(v.invariant, "eventlog.bytes");
    assert!(v.failure.numbers["stuck_ms"] >= 250);
    assert!(v.failure.message.contains("retrying append and add"));
}

#[test]
fn chunk_number_keys_keep_the_claimed_retention() {
    for name in ["eventlog-chunk-keys", "eventlog-chunk-keys-hard"] {
        for s in points(name) {
            let report = quick(&s, 3, false);
            assert_eq!(report.label(), "pass", "{name} {:?}", s.point);
            assert_eq!(report.metrics["eventlog.retention_measured_s"].min, 6.0);
            assert_eq!(report.metrics["eventlog.events_missed"].max, 0.0);
        }
    }
}

#[test]
fn chunk_number_keys_spill_full_chunks_and_report_oversized_events() {
    let ps = points("eventlog-chunk-keys-large");
    let spill = quick(&ps[0], 3, false);
    assert_eq!(spill.label(), "pass");
    assert_eq!(spill.metrics["eventlog.refused"].max, 0.0);
    let oversized = quick(&ps[1], 3, false);
    assert_eq!(oversized.label(), "pass");
    assert!(oversized.metrics["eventlog.refused"].min >= 1.0);
}

#[test]
fn events_survive_serialization_back_to_back() {
    let events = [
        Event::new(1_000, 0, 0, 5),
        Event::new(999, 3, 1, 0),
        Event::new(2_000, 1, 2, 40),
    ];
    let data: Vec<u8> = events.iter().flat_map(|e| e.serialize()).collect();
    assert_eq!(deserialize(&data).unwrap(), events);
    assert!(deserialize(&data[..data.len() - 3]).is_err());
}

/// Runs one client's recipe code on a fresh simulated server; its assertions are the
/// test's (a panic in it is the execution's verdict).
fn on_one_server<F, Fut>(body: F) -> mcsim::Verdict
where
    F: Fn(mcsim::Client) -> Fut + 'static,
    Fut: std::future::Future<Output = Result<(), mcsim::memcache::McError>> + 'static,
{
    let body = std::rc::Rc::new(body);
    let setup = move |sim: &mut mcsim::Sim| {
        let body = body.clone();
        sim.client(mcsim::Skew::default(), move |mc| body(mc));
    };
    let mut strategy = mcsim::explore::Random::new(0);
    mcsim::exec::execute(
        &mcsim::exec::ExecConfig::default(),
        &setup,
        &mut strategy,
        0,
    )
    .verdict
}

#[test]
fn fetch_keeps_to_the_window_it_is_asked_for() {
    use mcsim_models::eventlog::{EventLog, EventLogVariant};
    for variant in [EventLogVariant::AsWritten, EventLogVariant::ChunkKeys] {
        let verdict = on_one_server(move |mc| async move {
            let log = EventLog::new("w", 2, 4, 2, variant);
            for (seq, when) in [1_000, 1_500, 2_500].into_iter().enumerate() {
                log.put(&mc, &Event::new(when, 0, seq as u32, 4))
                    .await
                    .map_err(|e| mcsim::memcache::McError::Unexpected(format!("{e:?}")))?;
            }
            mc.sleep(std::time::Duration::from_secs(3)).await;
            let f = log.fetch(&mc, Some(1_200), Some(2_000)).await?;
            let times: Vec<u64> = f.events.iter().map(|e| e.when_ms).collect();
            assert_eq!(times, [1_500], "{variant:?}");
            assert_eq!((f.first, f.last), (1_200, 2_000));
            Ok(())
        });
        assert!(verdict.is_pass(), "{variant:?}: {verdict}");
    }
}

#[test]
fn chunk_keys_refuse_an_event_when_every_part_is_full() {
    // One part per chunk, room for two events of 6,000 bytes under -I 16k: the third of
    // a chunk is refused to its caller, never written where no fetch reads it.
    let s = points("eventlog-chunk-keys-large")[0]
        .with_set(&[
            "params.parts=1".into(),
            "params.event_bytes=6000".into(),
            "params.large_every=0".into(),
        ])
        .unwrap();
    let report = quick(&s, 5, true);
    assert_eq!(report.label(), "pass", "{:?}", report.verdicts);
    assert!(report.metrics["eventlog.refused"].min >= 1.0);
}
