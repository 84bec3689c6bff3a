//! Services built on doram's primitives: what a deployment runs between hosts.
//!
//! Brief overview: [`lookup`] is a private lookup into a public table held by two servers
//! (P0, P1) for a client (P2) whose index stays hidden from each server — a two-server PIR from
//! distributed point functions, run over any [`doram_net::Session`] backend. It is what
//! `doram demo` shows.

pub mod lookup;
