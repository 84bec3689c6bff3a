//! [`Step`]: the steps of Ramen whose time is measured, each mapped to its figure, and
//! [`StepTimes`], the accumulated wall-clock time per step of one party.

use std::time::{Duration, Instant};

/// A timed step of Ramen. Every step also names the session phase its messages are counted in
/// ([`Step::phase`]), so bytes, messages and rounds are attributed to the same steps.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Step {
    /// Pairwise PRG seeds and DOPRF Init/KeyGen (Ramen Fig. 9/22, Init and KeyGen).
    Setup,
    /// Input-independent preparation of one epoch: memory keys and tags (Fig. 6, Init steps
    /// 1–3), position maps, p-OT Init (Fig. 2), DOPRF preprocessing (Fig. 9 steps 1–5,
    /// Fig. 22 steps 1–3), the flag and location DPF keys (Fig. 4, steps 4 and 10(c)).
    Preprocess,
    /// The start of an epoch: the masked memory M'_i (Fig. 6, Init step 5; Fig. 14's Refresh).
    Refresh,
    /// Reading the stash: Fig. 4 (masked DOPRF, flag lookup, location opening, val_st), with
    /// Fig. 14, step 2 (the F_Select for adr_M).
    StashRead,
    /// Reading the memory: Fig. 6, Access (three unmasked DOPRFs, p-OT), with Fig. 5, steps 1–2
    /// (the stash tag of adr_M).
    MemoryRead,
    /// Writing the stash: Fig. 5, steps 3–11, with Fig. 14, step 5 (the output select).
    StashWrite,
    /// Writing the stash back into the memory: Fig. 7 (at the end of each epoch).
    WriteBack,
    /// Get Memory (Fig. 14): the memory with the pending stash written back.
    GetMemory,
}

impl Step {
    /// All steps, in protocol order.
    pub const ALL: [Step; 8] = [
        Step::Setup,
        Step::Preprocess,
        Step::Refresh,
        Step::StashRead,
        Step::MemoryRead,
        Step::StashWrite,
        Step::WriteBack,
        Step::GetMemory,
    ];

    /// A short name, also used as the session phase of the step's messages.
    pub const fn phase(self) -> &'static str {
        match self {
            Step::Setup => "setup",
            Step::Preprocess => "preprocess",
            Step::Refresh => "refresh",
            Step::StashRead => "stash-read",
            Step::MemoryRead => "memory-read",
            Step::StashWrite => "stash-write",
            Step::WriteBack => "write-back",
            Step::GetMemory => "get-memory",
        }
    }

    /// The paper's figure(s) for the step.
    pub const fn figure(self) -> &'static str {
        match self {
            Step::Setup => "Fig. 9/22 (Init, KeyGen)",
            Step::Preprocess => "Fig. 2, 4, 6, 9, 22 (input-independent parts)",
            Step::Refresh => "Fig. 6 (Init step 5), Fig. 14 (Refresh)",
            Step::StashRead => "Fig. 4, Fig. 14 step 2",
            Step::MemoryRead => "Fig. 6 (Access), Fig. 5 steps 1-2",
            Step::StashWrite => "Fig. 5, Fig. 14 step 5",
            Step::WriteBack => "Fig. 7",
            Step::GetMemory => "Fig. 14 (Get Memory)",
        }
    }

    /// Whether the step belongs to the online phase (everything but setup and preprocessing).
    pub const fn is_online(self) -> bool {
        !matches!(self, Step::Setup | Step::Preprocess)
    }

    const fn index(self) -> usize {
        self as usize
    }
}

/// Accumulated time per [`Step`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct StepTimes {
    total: [Duration; 8],
}

impl StepTimes {
    /// Adds `d` to `step`.
    pub fn add(&mut self, step: Step, d: Duration) {
        self.total[step.index()] += d;
    }

    /// The time spent in `step`.
    pub fn get(&self, step: Step) -> Duration {
        self.total[step.index()]
    }

    /// The total of the online steps.
    pub fn online(&self) -> Duration {
        Step::ALL
            .iter()
            .filter(|s| s.is_online())
            .map(|&s| self.get(s))
            .sum()
    }

    /// The time of [`Step::Preprocess`].
    pub fn preprocessing(&self) -> Duration {
        self.get(Step::Preprocess)
    }

    /// The time since `start`, added to `step`.
    pub(crate) fn since(&mut self, step: Step, start: Instant) {
        self.add(step, start.elapsed());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn steps_accumulate() {
        let mut t = StepTimes::default();
        t.add(Step::StashRead, Duration::from_millis(2));
        t.add(Step::StashRead, Duration::from_millis(3));
        t.add(Step::Preprocess, Duration::from_millis(7));
        assert_eq!(t.get(Step::StashRead), Duration::from_millis(5));
        assert_eq!(t.online(), Duration::from_millis(5));
        assert_eq!(t.preprocessing(), Duration::from_millis(7));
        for (i, s) in Step::ALL.iter().enumerate() {
            assert_eq!(s.index(), i);
            assert!(!s.phase().is_empty() && !s.figure().is_empty());
        }
    }
}
