//! The `--insecure-seed` option of every command that runs parties.

use std::sync::Once;

use clap::Args;
use doram_core::Entropy;

/// Where the parties' secret randomness comes from: the OS unless `--insecure-seed` is given.
#[derive(Debug, Clone, Copy, Default, Args)]
pub struct Randomness {
    /// INSECURE: derive every party's secret randomness (shares, masks, DPF seeds, triples)
    /// from this public number instead of the operating system, so that a run can be replayed
    /// exactly. Anyone who knows the number can recover every secret of the run: for tests and
    /// reproducible benchmarks only. Prints a warning and is recorded in every report.
    #[arg(long, value_name = "N")]
    pub insecure_seed: Option<u64>,
}

impl Randomness {
    /// The source, after printing the insecure warning (once per process) if there is one.
    pub fn entropy(&self) -> Entropy {
        let e = Entropy::from_insecure_seed(self.insecure_seed);
        if let Some(w) = e.warning() {
            static WARNED: Once = Once::new();
            WARNED.call_once(|| eprintln!("{w}"));
        }
        e
    }

    /// `os` or `insecure-seed N`, as reports record it.
    pub fn label(&self) -> String {
        Entropy::from_insecure_seed(self.insecure_seed).to_string()
    }

    /// The option as a child process's arguments (none for OS randomness: every process draws
    /// its own).
    pub fn args(&self) -> Vec<String> {
        self.insecure_seed
            .map(|n| vec!["--insecure-seed".to_string(), n.to_string()])
            .unwrap_or_default()
    }
}
