//! `mcsim confirm` on a real memcached: counterexamples found in simulation happen on
//! the real server too (a memcached binary is needed; CI installs one).

use std::process::Command;

fn confirm(args: &[&str]) -> Option<String> {
    let (status, text) = confirm_status(args)?;
    assert_eq!(status, 0, "{text}");
    Some(text)
}

/// `mcsim confirm ARGS`: its exit status and what it printed.
fn confirm_status(args: &[&str]) -> Option<(i32, String)> {
    if mcsim_real::MemcachedDaemon::find_binary().is_none() {
        assert!(
            std::env::var("CI").as_deref() != Ok("true"),
            "no memcached binary (apt-get install memcached); CI must run this"
        );
        eprintln!("SKIPPED: no memcached binary (apt-get install memcached)");
        return None;
    }
    let out = Command::new(env!("CARGO_BIN_EXE_mcsim"))
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .arg("confirm")
        .args(args)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let text = text + &String::from_utf8_lossy(&out.stderr);
    Some((out.status.code().unwrap_or(-1), text))
}

#[test]
fn the_get_set_lock_breaks_on_memcached_too() {
    if let Some(text) = confirm(&["scenarios/lock-get-set.toml"]) {
        assert!(text.contains("confirmed on memcached 1.6"), "{text}");
        assert!(text.contains("lock.exclusion"), "{text}");
    }
}

#[test]
fn the_get_set_counter_loses_increments_on_memcached_too() {
    if let Some(text) = confirm(&["scenarios/counter-get-set.toml"]) {
        assert!(text.contains("confirmed on memcached 1.6"), "{text}");
    }
}

#[test]
fn a_lock_held_past_its_ttl_is_taken_on_memcached_too() {
    // A TTL-driven counterexample: the holder outlives its 1 s TTL, the waiter gets in.
    if let Some(text) = confirm(&["scenarios/lock-add-long-hold.toml"]) {
        assert!(text.contains("confirmed on memcached 1.6"), "{text}");
        assert!(text.contains("T1 -> STORED"), "{text}");
    }
}

#[test]
fn the_gutter_route_serves_what_a_returning_primary_held_on_memcached_too() {
    // Calls addressed to the primary while it was out of the clients' list are not sent
    // (a partition: the server runs on, holding its items); the reader then meets the
    // old version on the real primary.
    if let Some(text) = confirm(&["scenarios/gutter-as-written.toml"]) {
        assert!(text.contains("confirmed on memcached 1.6"), "{text}");
        assert!(
            text.contains("refused: server 0 out of the clients' list, as in simulation"),
            "{text}"
        );
        assert!(text.contains("get row_profile -> HIT \"v0\""), "{text}");
    }
}

#[test]
fn a_replay_whose_waits_were_cut_is_not_called_a_divergence() {
    // The holder's 1.5 s hold is cut to nothing: the TTL has not run out on the real
    // server when the waiter asks, so the replies differ, because of the cap alone.
    let Some((status, text)) =
        confirm_status(&["scenarios/lock-add-long-hold.toml", "--max-wait-s", "0"])
    else {
        return;
    };
    assert_eq!(status, 3, "{text}");
    assert!(
        text.contains(
            "not confirmed: waits shortened (1 s asked, 0 s allowed); rerun with --max-wait-s 1"
        ),
        "{text}"
    );
    assert!(!text.contains("diverged"), "{text}");
}

#[test]
fn every_counterexample_of_the_suite_is_confirmed_on_memcached() {
    // Every scenario that is not a sweep and expects a violation: its shrunk
    // counterexample replayed on memcached 1.6.18 started with the scenario's settings,
    // crashes as process restarts, calls timed from the real server's tick edges.
    let Some(text) = confirm(&["--all", "scenarios", "--jobs", "12"]) else {
        return;
    };
    let m = text
        .lines()
        .filter(|l| l.starts_with("ok  ") || l.starts_with("NOT "))
        .count();
    assert!(m >= 40, "{text}");
    assert!(
        text.contains(&format!(
            "{m} of {m} counterexamples confirmed on memcached 1.6"
        )),
        "{text}"
    );
}
