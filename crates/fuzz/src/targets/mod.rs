//! The harnesses, by area.

pub mod decoders;
pub mod pir;
pub mod protocols;

use crate::Target;

/// Every target.
pub const ALL: &[Target] = &[
    decoders::FRAMES,
    decoders::CONFIG,
    decoders::PEM,
    decoders::DPF_KEYS,
    decoders::FIELD_VECTORS,
    decoders::DUORAM2P_UPDATE,
    decoders::PROGRAM_INPUTS,
    pir::SERVER_INPUT,
    pir::CLIENT_INPUT,
    pir::DATABASE,
    protocols::RAMEN,
    protocols::DUORAM,
    protocols::BINARY_SEARCH,
    protocols::LOOKUP,
];
