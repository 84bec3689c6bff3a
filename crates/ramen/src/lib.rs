//! Ramen.
#![deny(missing_docs)]

pub mod error;
pub mod msgs;
pub mod params;
pub mod pot;
pub mod tags;

pub use error::RamenError;
pub use params::Params;
