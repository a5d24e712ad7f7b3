//! The `cargo test` command that reruns the test a check runs in, exactly: its package,
//! its profile, its target and its name, as the running test binary shows them.

use std::path::Path;

/// `cargo test -p <package> [--release | --profile <p>] [--test <target>] --
/// --exact <test> --include-ignored --nocapture`: each part that cannot be found out is
/// left for cargo's defaults (then it runs more than the one test, never another one).
/// `caller` is the source file the test is in: it tells an integration test named like
/// its package from the library's own tests, whose binaries have the same name.
pub(crate) fn rerun_command(test: Option<&str>, caller: &str) -> String {
    let mut out = String::from("cargo test");
    let package = std::env::var("CARGO_PKG_NAME").ok();
    if let Some(p) = &package {
        out.push_str(&format!(" -p {p}"));
    }
    let exe = std::env::current_exe().ok();
    if let Some(exe) = &exe {
        out.push_str(&profile_flag(exe));
        if let Some(target) = target_of(exe, package.as_deref(), caller) {
            out.push(' ');
            out.push_str(&target);
        }
    }
    if let Some(test) = test {
        out.push_str(&format!(
            " -- --exact {} --include-ignored --nocapture",
            crate::report::shell_word(test)
        ));
    }
    out
}

/// ` --release`, ` --profile <p>` or nothing (the dev profile), from the directory the
/// binary was built in: `target/<dir>/deps/<binary>`.
fn profile_flag(exe: &Path) -> String {
    let dir = exe
        .parent()
        .filter(|d| d.file_name().is_some_and(|n| n == "deps"))
        .and_then(Path::parent)
        .and_then(Path::file_name)
        .and_then(|n| n.to_str());
    match dir {
        Some("release") => " --release".into(),
        Some("debug") | None => String::new(),
        Some(profile) => format!(" --profile {profile}"),
    }
}

/// `--test <name>` or `--lib`: a test binary is `<target>-<hash>`; the library's target
/// has the package's name (dashes as underscores), and so has an integration test in
/// `tests/<package>.rs`: the file the check was called from tells them apart.
fn target_of(exe: &Path, package: Option<&str>, caller: &str) -> Option<String> {
    let stem = exe.file_stem()?.to_str()?;
    let (target, hash) = stem.rsplit_once('-')?;
    if hash.len() != 16 || !hash.chars().all(|c| c.is_ascii_hexdigit()) {
        return None;
    }
    // The first `src` or `tests` folder on the caller's path is its package's.
    let in_tests = Path::new(caller)
        .components()
        .map(|c| c.as_os_str())
        .find(|c| *c == "src" || *c == "tests")
        .is_some_and(|c| c == "tests");
    if package.is_some_and(|p| p.replace('-', "_") == target) && !in_tests {
        Some("--lib".into())
    } else {
        Some(format!("--test {target}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_binary_names_its_profile_and_target() {
        let release = Path::new("/w/target/release/deps/check_api-0123456789abcdef");
        assert_eq!(profile_flag(release), " --release");
        assert_eq!(
            target_of(release, Some("mcsim-models"), "tests/check_api.rs").as_deref(),
            Some("--test check_api")
        );
        let lib = Path::new("/w/target/mutants/deps/mcsim_models-0123456789abcdef");
        assert_eq!(profile_flag(lib), " --profile mutants");
        // The library's tests, and an integration test named like the package: the
        // caller's file tells them apart.
        assert_eq!(
            target_of(lib, Some("mcsim-models"), "models/src/tests/mod.rs").as_deref(),
            Some("--lib")
        );
        assert_eq!(
            target_of(lib, Some("mcsim-models"), "tests/mcsim_models.rs").as_deref(),
            Some("--test mcsim_models")
        );
        let debug = Path::new("/w/target/debug/deps/lock-0123456789abcdef");
        assert_eq!(profile_flag(debug), "");
        assert_eq!(
            target_of(Path::new("/tmp/rustdoctest"), None, "src/lib.rs"),
            None
        );
    }
}
