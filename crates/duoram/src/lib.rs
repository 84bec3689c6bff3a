//! Duoram: a three-party distributed ORAM (work in progress).
