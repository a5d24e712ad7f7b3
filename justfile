# The commands people type. Each is a plain cargo command underneath.

# the CI job: install memcached if missing, lint, test, run the gate
ci:
    .ci/run

# all tests (the differential test needs a memcached binary)
test:
    cargo test --workspace

# the scenario suite as a gate
check *ARGS:
    cargo run --release -- check {{ARGS}}

# run one scenario
run SCENARIO *ARGS:
    cargo run --release -- run {{SCENARIO}} {{ARGS}}

# replay one execution: just replay scenarios/x.toml --seed 3
replay SCENARIO *ARGS:
    cargo run --release -- replay {{SCENARIO}} {{ARGS}}

# benchmarks
bench:
    cargo bench --workspace

# the loom cross-check: the same recipes under loom and `mcsim explore`, verdicts compared
loom:
    RUSTFLAGS="--cfg loom" CARGO_TARGET_DIR=target/loom cargo test -p mcsim-models -p rate-limiter --test loom --test loom_trait --release -- --nocapture --test-threads=1

# mcsim, loom and shuttle side by side; writes reports/bench.md
compare *ARGS:
    cargo run --release -p mcsim-compare --bin compare -- {{ARGS}}

# the example HTML report and its screenshot in reports/example/ (needs chromium), and
# the terminal output of run and explore in reports/example-*.txt
example-report:
    mkdir -p reports/example
    cargo run --release -- check {{example_scenarios}} --json target/example-report.json --html reports/example/check.html
    chromium --headless --no-sandbox --disable-gpu --disable-quic --no-first-run --disable-background-networking --disable-component-update --disable-sync --hide-scrollbars --user-data-dir=target/chromium-profile --window-size=1280,1500 --screenshot=reports/example/check.png "file://$PWD/reports/example/check.html"
    # the terminal's view: a lost increment, a shrunk lock counterexample, an exhaustive search
    -cargo run --release -q -- run scenarios/counter-get-set.toml > reports/example-counter-get-set.txt
    -cargo run --release -q -- run scenarios/lock-add-evict.toml > reports/example-lock-add-evict.txt
    cargo run --release -q -- explore scenarios/counter-incr-add.toml > reports/example-explore-counter-incr-add.txt

# the findings report: every recipe's claim judged, rates with 95% intervals, magnitudes,
# sweeps, a 2-to-16-client sweep, counterexamples confirmed on memcached; writes
# reports/findings.md, reports/findings.html and reports/findings.json
findings *ARGS:
    cargo run --release -- findings {{ARGS}}

# everything under reports/ that is committed: bench.md, the example report and screenshot
reports: compare example-report findings

# the scenarios of the example report: a pass, races, a fault, a TTL edge, a sweep
example_scenarios := "scenarios/counter-get-set.toml scenarios/counter-incr-add.toml scenarios/lock-add-evict.toml scenarios/lock-add.toml scenarios/cache-add-lock-evict.toml scenarios/tags-time-skew.toml scenarios/visitor-as-written.toml scenarios/visitor-as-written-sweep.toml"

# format and lint
lint:
    cargo fmt --all -- --check
    cargo clippy --workspace --all-targets -- -D warnings
    RUSTDOCFLAGS="-D warnings" cargo doc --workspace --no-deps
    RUSTFLAGS="--cfg loom" CARGO_TARGET_DIR=target/loom cargo clippy -p mcsim -p mcsim-models -p rate-limiter --tests -- -D warnings

# mutation testing over models/ (recipes, harnesses, invariants): too slow for CI, run it
# before a release; prints the score. Survivors kept on purpose: .cargo/mutants.toml
mutants *ARGS:
    -cargo mutants --package mcsim-models --profile mutants {{ARGS}}
    @c=$(wc -l < mutants.out/caught.txt); m=$(wc -l < mutants.out/missed.txt); t=$(wc -l < mutants.out/timeout.txt); echo "mutation score: $c caught of $((c+m+t)) viable ($m missed, $t timed out); missed ones in mutants.out/missed.txt"
