//! Three-server private information retrieval with guaranteed output (work in progress).

pub mod answer;
pub mod codec;
pub mod db;
pub mod dpf;
pub mod error;
mod prg;

pub use db::{Database, DbInfo};
pub use error::PirError;
