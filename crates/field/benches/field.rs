//! Benchmarks of the field arithmetic and the Legendre symbol.
fn main() {}
