//! Three-server private information retrieval with guaranteed output (work in progress).

pub mod answer;
pub mod behaviour;
pub mod bench;
pub mod client;
pub mod codec;
pub mod db;
pub mod dpf;
pub mod error;
pub mod local;
mod prg;
pub mod proto;
pub mod server;

pub use behaviour::{Behaviour, Stage};
pub use client::{Client, Deviation, Fallback, QueryOutcome, Suspects};
pub use db::{Database, DbInfo};
pub use error::PirError;
pub use proto::ServerId;
pub use server::{Server, ServerConfig, ShutdownHandle};
