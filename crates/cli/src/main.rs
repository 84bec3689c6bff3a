//! `doram`: run parties, benchmarks and demos.
fn main() {}
