//! Criterion benchmarks live in `benches/benches/`; this library holds their shared fixtures.
