//! Bad scenario files get an error naming the file, the line and the field; never a panic.

use std::path::Path;

use mcsim::scenario::{Scenario, ScenarioError};
use mcsim_models::RECIPES;

const GOOD: &str = r#"
recipe = "lock"
variant = "add"
clients = 2

[params]
hold_ms = 5

[expect]
verdict = "pass"
"#;

fn error(source: &str) -> ScenarioError {
    match Scenario::parse(Path::new("scenarios/bad.toml"), source, RECIPES) {
        Ok(s) => panic!("accepted: {s:?}"),
        Err(e) => e,
    }
}

#[test]
fn the_good_file_loads() {
    let s = Scenario::parse(Path::new("scenarios/good.toml"), GOOD, RECIPES).unwrap();
    assert_eq!(
        (s.name.as_str(), s.clients, s.expect.as_str()),
        ("good", 2, "pass")
    );
}

#[test]
fn a_wrong_type_names_line_and_field() {
    let e = error(&GOOD.replace("clients = 2", "clients = \"two\""));
    assert_eq!((e.line, e.field.as_deref()), (4, Some("clients")));
    assert!(e.to_string().starts_with("scenarios/bad.toml:4:"), "{e}");
}

#[test]
fn an_unknown_field_is_named() {
    let e = error(&GOOD.replace("clients = 2", "clients = 2\nclinets = 3"));
    assert_eq!(e.line, 5);
    assert!(e.message.contains("clinets"), "{e}");
}

#[test]
fn an_unknown_parameter_is_named_with_the_known_ones() {
    let e = error(&GOOD.replace("hold_ms = 5", "hold_ms = 5\nhodl_ms = 7"));
    assert_eq!((e.line, e.field.as_deref()), (8, Some("params.hodl_ms")));
    assert!(e.message.contains("hold_ms"), "{e}");
}

#[test]
fn a_parameter_of_the_wrong_type_is_named() {
    let e = error(&GOOD.replace("hold_ms = 5", "hold_ms = -5"));
    assert_eq!((e.line, e.field.as_deref()), (7, Some("params.hold_ms")));
}

#[test]
fn an_unknown_variant_lists_the_known_ones() {
    let e = error(&GOOD.replace("variant = \"add\"", "variant = \"ad\""));
    assert_eq!((e.line, e.field.as_deref()), (3, Some("variant")));
    assert!(e.message.contains("get-set"), "{e}");
}

#[test]
fn an_unknown_verdict_is_rejected() {
    let e = error(&GOOD.replace("verdict = \"pass\"", "verdict = \"lock.exclusoin\""));
    assert_eq!(e.field.as_deref(), Some("expect.verdict"));
    assert!(e.message.contains("lock.exclusion"), "{e}");
}

#[test]
fn a_probability_above_one_is_rejected() {
    let e = error(&format!(
        "{GOOD}\n[faults]\nevict = {{ max = 1, probability = 1.5 }}\n"
    ));
    assert_eq!(e.field.as_deref(), Some("faults.evict.probability"));
    assert_eq!(e.line, 13);
}

#[test]
fn zero_clients_and_inverted_latencies_are_rejected() {
    assert_eq!(
        error(&GOOD.replace("clients = 2", "clients = 0"))
            .field
            .as_deref(),
        Some("clients")
    );
    let e = error(&format!("{GOOD}\n[timing]\nlatency_us = [500, 100]\n"));
    assert_eq!(e.field.as_deref(), Some("timing.latency_us"));
}

#[test]
fn a_missing_file_is_an_error() {
    let e = Scenario::load(Path::new("scenarios/no-such-file.toml"), RECIPES).unwrap_err();
    assert!(
        e.to_string().contains("no-such-file.toml: cannot read"),
        "{e}"
    );
}

#[test]
fn a_bad_sweep_value_names_the_sweep_field() {
    let dir = std::env::temp_dir().join(format!("mcsim-sweep-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("sweep.toml");
    std::fs::write(
        &path,
        format!("{GOOD}\n[sweep]\nparams.hold_ms = [5, \"x\"]\n"),
    )
    .unwrap();
    let e = mcsim::scenario::load_points(&path, RECIPES).unwrap_err();
    assert_eq!(e.field.as_deref(), Some("sweep.params.hold_ms"), "{e}");
    assert_eq!(e.line, 13, "{e}");
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn a_server_index_past_the_servers_is_rejected_not_a_panic() {
    let text = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../scenarios/cluster-rehash.toml"),
    )
    .unwrap()
    .replace("leave_server = 0", "leave_server = 7");
    let e = match Scenario::parse(Path::new("scenarios/bad.toml"), &text, RECIPES) {
        Ok(_) => panic!("accepted"),
        Err(e) => e,
    };
    assert_eq!(e.field.as_deref(), Some("params.leave_server"), "{e}");
    assert_eq!(e.line, 8, "{e}");
    assert!(e.message.contains("4"), "{e}");
}

#[test]
fn values_out_of_range_name_their_field_and_line() {
    for (edit, field, line) in [
        ("clients = 100000", "clients", 4),
        ("clients = 2\n[servers]\ncount = 0", "servers.count", 12),
        (
            "clients = 2\n[servers]\nmemory_mb = 1\nitem_size_max = 1048576",
            "servers.item_size_max",
            13,
        ),
        (
            "clients = 2\n[servers]\nitem_size_max = 10",
            "servers.item_size_max",
            12,
        ),
        (
            "clients = 2\n[servers]\nitem_size_max = 16384",
            "servers.item_size_max",
            12,
        ),
        (
            "clients = 2\n[servers]\nitem_size_max = 1048576\nslab_chunk_max = 100000",
            "servers.slab_chunk_max",
            13,
        ),
        (
            "clients = 2\n[servers]\nphase_ms = 1000",
            "servers.phase_ms",
            12,
        ),
        (
            "clients = 2\n[timing]\nmax_steps = 0",
            "timing.max_steps",
            12,
        ),
        (
            "clients = 2\n[timing]\nmax_time_s = 0",
            "timing.max_time_s",
            12,
        ),
        (
            "clients = 2\n[faults]\ntimeout_ms = 0",
            "faults.timeout_ms",
            12,
        ),
        (
            "clients = 2\n[explore]\nexecutions = 0",
            "explore.executions",
            12,
        ),
        (
            "clients = 2\n[explore]\npreemptions = \"many\"",
            "explore.preemptions",
            12,
        ),
        ("clients = 2\n[explore]\nfaults = -1", "explore.faults", 12),
        ("clients = 2\n[explore]\nclients = 3", "explore.clients", 12),
    ] {
        // The edited lines go where `clients` was, before `[params]`: move params after.
        let text = GOOD
            .replace("clients = 2", edit)
            .replace("[params]\nhold_ms = 5\n", "");
        let text = format!("{text}\n");
        let e = error(&text);
        assert_eq!(e.field.as_deref(), Some(field), "{edit}: {e}");
        assert!(
            e.line > 0 && (e.line == line || field != "clients"),
            "{edit}: {e}"
        );
    }
}

#[test]
fn parameters_out_of_range_are_rejected() {
    for (value, field) in [
        ("hold_ms = 99999999999999", "params.hold_ms"),
        ("rounds = 4000000000", "params.rounds"),
    ] {
        let e = error(&GOOD.replace("hold_ms = 5", value));
        assert_eq!(e.field.as_deref(), Some(field), "{e}");
        assert_eq!(e.line, 7, "{e}");
    }
}

#[test]
fn a_misspelt_name_gets_a_suggestion() {
    let e = error(&GOOD.replace("recipe = \"lock\"", "recipe = \"lokc\""));
    assert!(e.message.contains("did you mean \"lock\""), "{e}");
    let e = error(&GOOD.replace("variant = \"add\"", "variant = \"get-sett\""));
    assert!(e.message.contains("did you mean \"get-set\""), "{e}");
    let e = error(&GOOD.replace("verdict = \"pass\"", "verdict = \"lock.exclusoin\""));
    assert!(e.message.contains("did you mean \"lock.exclusion\""), "{e}");
    let e = error(&GOOD.replace("hold_ms = 5", "hodl_ms = 5"));
    assert!(e.message.contains("did you mean \"hold_ms\""), "{e}");
}

#[test]
fn a_zero_pause_is_rejected() {
    let e = error(&format!("{GOOD}\n[faults]\npause_ms = 0\n"));
    assert_eq!(e.field.as_deref(), Some("faults.pause_ms"), "{e}");
    assert_eq!(e.line, 13, "{e}");
}

/// Every range a family checks beyond its parameter types: the largest value loads, one
/// more is an error at that field's line.
#[test]
fn each_family_checks_its_ranges_at_their_bounds() {
    let cases: &[(&str, &str, &str, u64)] = &[
        ("eventlog", "chunk-keys", "event_bytes", 64 << 20),
        ("eventlog", "chunk-keys", "large_bytes", 64 << 20),
        ("eventlog", "chunk-keys", "put_deadline_ms", 3_600_000),
        ("online", "add", "sessions", 100_000),
        ("tags", "counter", "master_window_ms", 3_600_000),
        ("visitor", "aligned", "edge_offset_us", 3_600_000_000),
        ("cluster", "rehash", "leave_server", 2),
    ];
    for &(recipe, variant, param, max) in cases {
        let file = |value: u64| {
            format!(
                "recipe = \"{recipe}\"\nvariant = \"{variant}\"\nclients = 1\n\n\
                 [servers]\ncount = 3\n\n[params]\n{param} = {value}\n\n\
                 [expect]\nverdict = \"pass\"\n"
            )
        };
        let at_max = Scenario::parse(Path::new("scenarios/max.toml"), &file(max), RECIPES);
        assert!(at_max.is_ok(), "{recipe}: {param} = {max}: {at_max:?}");
        let e = error(&file(max + 1));
        assert_eq!(
            e.field.as_deref(),
            Some(format!("params.{param}").as_str()),
            "{e}"
        );
        assert_eq!(e.line, 9, "{e}");
    }
}

#[test]
fn exhaustive_bounds_default_to_three_clients_two_preemptions_and_one_fault() {
    use mcsim::scenario::ExhaustiveBounds;
    let s = Scenario::parse(Path::new("scenarios/good.toml"), GOOD, RECIPES).unwrap();
    let default = ExhaustiveBounds {
        clients: 2,
        preemptions: Some(2),
        faults: Some(1),
        draws: 1,
        phases: None,
    };
    assert_eq!(s.bounds, default);
    let text =
        format!("{GOOD}\n[explore]\nclients = 1\npreemptions = \"all\"\nfaults = 0\nphases = 3\n");
    let s = Scenario::parse(Path::new("scenarios/good.toml"), &text, RECIPES).unwrap();
    let given = ExhaustiveBounds {
        clients: 1,
        preemptions: None,
        faults: Some(0),
        draws: 1,
        phases: Some(3),
    };
    assert_eq!(s.bounds, given);
}

#[test]
fn expect_lists_name_known_verdicts_and_conditions() {
    let e = error(&GOOD.replace(
        "verdict = \"pass\"",
        "verdict = \"lock.exclusion\"\nmay = [\"lock.exclusoin\"]",
    ));
    assert_eq!(e.field.as_deref(), Some("expect.may"), "{e}");
    assert!(e.message.contains("did you mean"), "{e}");
    let e = error(&GOOD.replace(
        "verdict = \"pass\"",
        "verdict = \"pass\"\nalso = [\"lock.exclusion\"]",
    ));
    assert_eq!(e.field.as_deref(), Some("expect.also"), "{e}");
    let e = error(&GOOD.replace(
        "verdict = \"pass\"",
        "verdict = \"pass\"\nsometimes = [\"faults.evcit.bit\"]",
    ));
    assert_eq!(e.field.as_deref(), Some("expect.sometimes"), "{e}");
    assert!(e.message.contains("faults.KIND.bit"), "{e}");
    let e = error(&GOOD.replace(
        "verdict = \"pass\"",
        "verdict = \"lock.exclusion\"\nsometimes = [\"faults.evict.bit\"]",
    ));
    assert_eq!(e.field.as_deref(), Some("expect.sometimes"), "{e}");
}

/// A pass with faults in its plan must say what danger it survived, in its own file, and
/// every pass with faults gets at least "each kind bit once" when it says nothing.
#[test]
fn every_shipped_pass_with_faults_declares_its_danger() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../scenarios");
    let mut checked = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_none_or(|x| x != "toml") {
            continue;
        }
        let text = std::fs::read_to_string(&path).unwrap();
        let s = Scenario::parse(&path, &text, RECIPES).unwrap();
        if s.expect != "pass" || s.config.faults.is_empty() {
            continue;
        }
        checked += 1;
        assert!(
            text.contains("\nsometimes = "),
            "{}: a pass with faults declares [expect] sometimes",
            path.display()
        );
        assert!(
            s.expectation
                .sometimes
                .iter()
                .any(|c| c.starts_with("faults.")),
            "{}: its dangers include a fault that bit",
            path.display()
        );
    }
    assert!(checked >= 5, "{checked}");
}

#[test]
fn an_unknown_set_workload_is_named() {
    let text = "recipe = \"set\"\nvariant = \"retry\"\nclients = 2\n[params]\nmembers = \"hostile\"\n[expect]\nverdict = \"pass\"\n";
    let e = Scenario::parse(Path::new("scenarios/set.toml"), text, RECIPES).unwrap_err();
    assert_eq!(e.field.as_deref(), Some("params.members"), "{e}");
    assert!(e.message.contains("known: plain, encoding"), "{e}");
}

#[test]
fn settings_memcached_refuses_are_refused_in_its_words() {
    let e = error(&GOOD.replace("[params]", "[servers]\nitem_size_max = 16384\n\n[params]"));
    assert_eq!(
        (e.line, e.field.as_deref()),
        (7, Some("servers.item_size_max"))
    );
    assert!(
        e.message.contains(
            "\"slab_chunk_max (bytes: 524288) cannot be larger than -I (item_size_max 16384)\""
        ) && e.message.contains("set slab_chunk_max = 16384"),
        "{e}"
    );
    let e = error(&GOOD.replace("[params]", "[servers]\nitem_size_max = 2000000\n\n[params]"));
    assert!(
        e.message
            .contains("-I (item_size_max: 2000000) must be evenly divisible by slab_chunk_max"),
        "{e}"
    );
    let fixed = GOOD.replace(
        "[params]",
        "[servers]\nitem_size_max = 16384\nslab_chunk_max = 16384\n\n[params]",
    );
    assert!(Scenario::parse(Path::new("scenarios/good.toml"), &fixed, RECIPES).is_ok());
}
