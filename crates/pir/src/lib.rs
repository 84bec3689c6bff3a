//! Three-server private information retrieval with guaranteed output (work in progress).

pub mod dpf;
pub mod error;
mod prg;

pub use error::PirError;
