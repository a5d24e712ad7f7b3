//! Bad scenario files get an error naming the file, the line and the field; never a panic.

use std::path::Path;

use mcsim::scenario::{Scenario, ScenarioError};
use mcsim_models::Recipes;

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
    match Scenario::parse(Path::new("scenarios/bad.toml"), source, &Recipes) {
        Ok(s) => panic!("accepted: {s:?}"),
        Err(e) => e,
    }
}

#[test]
fn the_good_file_loads() {
    let s = Scenario::parse(Path::new("scenarios/good.toml"), GOOD, &Recipes).unwrap();
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
    let e = Scenario::load(Path::new("scenarios/no-such-file.toml"), &Recipes).unwrap_err();
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
    let e = mcsim::scenario::load_points(&path, &Recipes).unwrap_err();
    assert_eq!(e.field.as_deref(), Some("sweep.params.hold_ms"), "{e}");
    assert_eq!(e.line, 13, "{e}");
    std::fs::remove_dir_all(&dir).ok();
}
