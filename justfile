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
