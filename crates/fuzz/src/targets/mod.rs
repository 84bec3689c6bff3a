//! The harnesses, by area.

pub mod decoders;
pub mod protocols;

use crate::Target;

/// Every target.
pub const ALL: &[Target] = &[
    decoders::FRAMES,
    decoders::CONFIG,
    decoders::PEM,
    decoders::DPF_KEYS,
    decoders::FIELD_VECTORS,
    decoders::PROGRAM_INPUTS,
    protocols::RAMEN,
    protocols::DUORAM,
    protocols::BINARY_SEARCH,
    protocols::LOOKUP,
];
