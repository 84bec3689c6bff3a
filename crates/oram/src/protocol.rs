//! [`Protocol`]: how a generic driver — the bench runner ([`crate::bench`](mod@crate::bench)), the command-line
//! tool — makes an instance of a [`DistributedOram`] from a session, and what it may report of
//! the protocol's own steps.

use std::time::Duration;

use doram_core::Seed;
use doram_net::Session;

use crate::error::OramError;
use crate::interface::DistributedOram;

/// A [`DistributedOram`] that a generic driver can construct by name.
///
/// Implemented by every protocol crate for its DORAM (`Ramen`, `Duoram<Z64>`, …) and here for
/// [`LinearScanOram`](crate::LinearScanOram).
pub trait Protocol: DistributedOram + Sized {
    /// A short lower-case name, as on the command line and in reports (`ramen`, `duoram`,
    /// `linear-scan`). It is also the domain of each party's seed
    /// ([`Entropy::party_seed`](doram_core::Entropy::party_seed)).
    const NAME: &'static str;

    /// Sets up this party's instance over `session` for a memory of `n` words, with this party's
    /// secret randomness derived from `seed`; `threads` is the number of worker threads the
    /// party may use (protocols without parallel code ignore it).
    ///
    /// # Errors
    /// A size the protocol does not support (before anything is sent); a peer fault during
    /// the setup.
    fn setup(session: Session, n: usize, threads: usize, seed: Seed) -> Result<Self, OramError>;

    /// The number of parties (2 or 3): a generic driver makes a mesh of this many.
    const PARTIES: usize = 3;

    /// The smallest memory the protocol supports: a driver with a smaller memory pads it.
    const MIN_LEN: usize = 1;

    /// Whether an access does less than O(n) local work, amortised (Ramen's O(√n·log n)),
    /// rather than touching the whole memory (a DPF evaluation over it, a linear scan).
    /// Programs use it to choose between engine-side tables and memory accesses. By default,
    /// no.
    const SUBLINEAR_ACCESS: bool = false;

    /// Whether preprocessing `accesses` accesses of an `n`-word memory up front is reasonable
    /// memory-wise; otherwise a driver lets each access do its own preprocessing inline. By
    /// default, always.
    fn preprocess_upfront(n: usize, accesses: usize) -> bool {
        let _ = (n, accesses);
        true
    }

    /// The protocol's own per-step wall-clock times so far, in protocol order, each under the
    /// name of the session phase its messages are counted in (empty if the protocol keeps
    /// none). Reports show them next to the generic phases.
    fn step_times(&self) -> Vec<(&'static str, Duration)> {
        Vec::new()
    }
}

/// The linear scan over any integer word (`Fp`, `Z64`); it has no parallel code, so `threads`
/// is ignored.
impl<W: crate::word::IntegerWord> Protocol for crate::LinearScanOram<W> {
    const NAME: &'static str = "linear-scan";

    fn setup(session: Session, n: usize, _threads: usize, seed: Seed) -> Result<Self, OramError> {
        crate::LinearScanOram::setup(session, n, seed)
    }

    /// Preprocessed material is 8n words per access: keep it under 2^23 words.
    fn preprocess_upfront(n: usize, accesses: usize) -> bool {
        n.saturating_mul(accesses).saturating_mul(8) <= 1 << 23
    }
}
