//! The HTML report in a real browser, and shard results merged: `mcsim check --html` and
//! `mcsim test --html` rendered by headless Chromium (a screenshot that is not blank, the
//! page's own check for broken elements passing), and `mcsim merge` over real `check
//! --shard` outputs.

use std::path::{Path, PathBuf};
use std::process::Command;

fn mcsim() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_mcsim"));
    c.current_dir(env!("CARGO_MANIFEST_DIR"));
    c
}

/// A fresh directory of this test's own.
fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("mcsim-report-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// A suite of a few shipped scenarios: a pass, violations with their counterexamples
/// (one with a fault), a sweep. With `wrong`, one more that expects the wrong verdict.
fn suite(dir: &Path, wrong: bool) -> PathBuf {
    let scenarios = dir.join("scenarios");
    std::fs::create_dir_all(&scenarios).unwrap();
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios");
    for name in [
        "counter-get-set",
        "counter-incr-add",
        "lock-add-evict",
        "tags-time-skew",
        "visitor-as-written-sweep",
    ] {
        let file = format!("{name}.toml");
        std::fs::copy(root.join(&file), scenarios.join(&file)).unwrap();
    }
    if wrong {
        let text = std::fs::read_to_string(root.join("counter-get-set.toml"))
            .unwrap()
            .replace(
                "verdict = \"counter.no_lost_increments\"",
                "verdict = \"pass\"",
            );
        std::fs::write(scenarios.join("counter-said-to-pass.toml"), text).unwrap();
    }
    scenarios
}

/// The browser, if one is installed.
fn chromium() -> Option<&'static str> {
    ["chromium", "chromium-browser", "google-chrome"]
        .into_iter()
        .find(|b| {
            Command::new(b)
                .arg("--version")
                .output()
                .is_ok_and(|o| o.status.success())
        })
}

/// Headless Chromium with a fresh profile and no background traffic.
fn browser(binary: &str, profile: &Path) -> Command {
    let mut c = Command::new(binary);
    c.args([
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--hide-scrollbars",
    ])
    .arg(format!("--user-data-dir={}", profile.display()));
    c
}

/// The page's own check runs in the browser; its answer is in the DOM.
fn passes_its_self_check(binary: &str, dir: &Path, page: &Path) {
    let dom = browser(binary, &dir.join("profile-dom"))
        .args(["--virtual-time-budget=2000", "--dump-dom"])
        .arg(format!("file://{}", page.display()))
        .output()
        .unwrap();
    let dom = String::from_utf8_lossy(&dom.stdout);
    assert!(
        dom.contains("data-selfcheck=\"ok\""),
        "the page's self-check: {}",
        dom.split("data-selfcheck=")
            .nth(1)
            .map(|s| s.chars().take(300).collect::<String>())
            .unwrap_or_else(|| "never ran".into())
    );
}

#[test]
fn chromium_renders_the_check_report_and_its_self_check_passes() {
    let Some(binary) = chromium() else {
        assert!(
            std::env::var_os("CI").is_none(),
            "no Chromium: CI must install it (apt-get install -y chromium)"
        );
        eprintln!("SKIPPED: no chromium binary (apt-get install -y chromium)");
        return;
    };
    let dir = scratch("html");
    let scenarios = suite(&dir, false);
    let page = dir.join("check.html");
    let out = mcsim()
        .arg("check")
        .arg(&scenarios)
        .arg("--json")
        .arg(dir.join("check.json"))
        .arg("--html")
        .arg(&page)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(
        !html.contains("<script src") && !html.contains("<link"),
        "the page loads nothing from outside"
    );
    assert!(html.contains("id=\"f-lock-add-evict\"") && html.contains("⚡"));
    let url = format!("file://{}", page.display());
    passes_its_self_check(binary, &dir, &page);

    // A screenshot that is not blank: many pixels not white, many colours.
    let shot = dir.join("check.png");
    let status = browser(binary, &dir.join("profile-shot"))
        .args(["--window-size=1400,1600"])
        .arg(format!("--screenshot={}", shot.display()))
        .arg(&url)
        .output()
        .unwrap();
    assert!(shot.exists(), "no screenshot: {status:?}");
    let decoder = png::Decoder::new(std::io::BufReader::new(std::fs::File::open(&shot).unwrap()));
    let mut reader = decoder.read_info().unwrap();
    let mut buf = vec![0; reader.output_buffer_size().unwrap()];
    let info = reader.next_frame(&mut buf).unwrap();
    let bytes = &buf[..info.buffer_size()];
    let channels = info.color_type.samples();
    let pixels = bytes.chunks(channels);
    let total = (info.width * info.height) as usize;
    let mut colours = std::collections::BTreeSet::new();
    let mut inked = 0usize;
    for p in pixels {
        if p[..3].iter().any(|&c| c < 235) {
            inked += 1;
        }
        colours.insert((p[0] >> 3, p[1] >> 3, p[2] >> 3));
    }
    assert!(inked * 50 > total, "{inked} of {total} pixels drawn: blank");
    assert!(colours.len() > 20, "{} colours: not a page", colours.len());
}

#[test]
fn merge_combines_real_shards_into_one_report_and_exit_code() {
    let dir = scratch("merge");
    let scenarios = suite(&dir, true);
    let mut jsons = Vec::new();
    let mut junits = Vec::new();
    let mut codes = Vec::new();
    for i in 1..=2 {
        let json = dir.join(format!("shard-{i}.json"));
        let junit = dir.join(format!("shard-{i}.xml"));
        let out = mcsim()
            .arg("check")
            .arg(&scenarios)
            .args(["--shard", &format!("{i}/2"), "--json"])
            .arg(&json)
            .arg("--junit")
            .arg(&junit)
            .output()
            .unwrap();
        codes.push(out.status.code());
        jsons.push(json);
        junits.push(junit);
    }
    // The scenario that expects the wrong verdict fails exactly one shard.
    assert_eq!(
        codes.iter().filter(|c| **c == Some(1)).count(),
        1,
        "{codes:?}"
    );
    let merged = dir.join("merged.json");
    let out = mcsim()
        .arg("merge")
        .args(&jsons)
        .args(&junits)
        .arg("--json")
        .arg(&merged)
        .arg("--junit")
        .arg(dir.join("merged.xml"))
        .arg("--html")
        .arg(dir.join("merged.html"))
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "one mismatch: {stdout}");
    assert!(
        stdout.contains("6 scenarios, 5 as expected, 1 mismatched"),
        "{stdout}"
    );
    assert!(stdout.contains("MISMATCH counter-said-to-pass"), "{stdout}");
    let rows: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&merged).unwrap()).unwrap();
    let files: Vec<&str> = rows
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["file"].as_str().unwrap())
        .collect();
    let mut sorted = files.clone();
    sorted.sort_unstable();
    assert_eq!(files, sorted);
    assert_eq!(files.len(), 6);
    let junit = std::fs::read_to_string(dir.join("merged.xml")).unwrap();
    assert!(junit.contains("tests=\"6\" failures=\"1\""), "{junit}");
    assert!(
        std::fs::read_to_string(dir.join("merged.html"))
            .unwrap()
            .contains("counter-said-to-pass")
    );

    // A shard missing is an error, not a green gate.
    let out = mcsim()
        .arg("merge")
        .arg(&jsons[0])
        .arg("--json")
        .arg(dir.join("half.json"))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("missing shard 2/2"), "{err}");
}

#[test]
fn the_check_summary_fits_in_100_columns() {
    let out = mcsim()
        .arg("check")
        .arg("--json")
        .arg(scratch("width").join("check.json"))
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let table: Vec<&str> = stdout
        .lines()
        .take_while(|l| !l.starts_with("MISMATCH"))
        .collect();
    assert!(table.len() > 80, "{stdout}");
    for line in table {
        assert!(
            line.chars().count() <= 100,
            "{} columns: {line}",
            line.chars().count()
        );
    }
}

#[test]
fn a_timeline_shows_the_key_evicted_under_the_lock_holders() {
    use mcsim::report::timeline::Timeline;
    use mcsim::run::{self, RunOptions};
    use mcsim::scenario::Scenario;
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/lock-add-evict.toml");
    let s = Scenario::load(&path, mcsim_models::RECIPES).unwrap();
    let report = run::run(&s, &RunOptions::from_scenario(&s));
    let f = report
        .first_failure
        .expect("lock-add-evict breaks exclusion");
    let t = Timeline::of(&f.execution, f.clients);
    assert!(
        t.verdict.text.contains("lock.exclusion"),
        "{}",
        t.verdict.text
    );
    assert_eq!(t.faults.len(), 1, "one eviction: {:?}", t.faults);
    let evicted_at = t.faults[0].at_us;
    let lock = t
        .keys
        .iter()
        .find(|k| k.key.starts_with("lock_"))
        .expect("the lock's key has a strip");
    // Held, then gone at the eviction, then taken again by the second client.
    let states: Vec<(u64, bool)> = lock
        .states
        .iter()
        .map(|s| (s.from_us, s.value.is_some()))
        .collect();
    assert!(
        states
            .windows(3)
            .any(|w| w[0].1 && !w[1].1 && w[1].0 == evicted_at && w[2].1),
        "{states:?}"
    );
    // Every call is on a client's lane, made before it ran.
    assert!(
        t.calls
            .iter()
            .all(|c| c.client < t.clients && c.issued_us <= c.at_us)
    );
}

#[test]
fn chromium_renders_the_page_of_a_program_found_broken_under_mcsim_test() {
    let python_ok = Command::new("/usr/bin/python3")
        .args(["-c", "import pymemcache"])
        .output()
        .is_ok_and(|o| o.status.success());
    let Some(binary) = chromium().filter(|_| python_ok) else {
        assert!(
            std::env::var_os("CI").is_none(),
            "no Chromium or pymemcache: CI must install them"
        );
        eprintln!("SKIPPED: no chromium, or no pymemcache for /usr/bin/python3");
        return;
    };
    let dir = scratch("program-html");
    let page = dir.join("test.html");
    let program =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/python-lock/lock_program.py");
    let out = mcsim()
        .args(["test", "--clients", "2", "--html"])
        .arg(&page)
        .args(["--", "/usr/bin/python3"])
        .arg(&program)
        .arg("get-set")
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{text}");
    let html = std::fs::read_to_string(&page).unwrap();
    // The shrunk run as a swimlane, a lane per participant by name, its replay lines.
    assert!(html.contains("<svg") && html.contains(">t0</text>") && html.contains(">t1</text>"));
    assert!(html.contains("exclusion of section broken"), "{html}");
    let shrunk = text
        .lines()
        .find(|l| l.trim_end().ends_with("# shrunk"))
        .and_then(|l| l.trim().rsplit_once("   #"))
        .map(|(line, _)| line.trim().to_string())
        .unwrap_or_else(|| panic!("no shrunk replay line: {text}"));
    let escaped = shrunk.replace('&', "&amp;").replace('\'', "&#39;");
    assert!(
        html.contains(&shrunk) || html.contains(&escaped),
        "{shrunk}"
    );
    passes_its_self_check(binary, &dir, &page);
}
