//! Communication statistics and transcripts.
//!
//! Every message is counted on the link it used, under the phase that was current when it was
//! sent or received (see [`Session::set_phase`](crate::Session::set_phase)). Rounds follow the
//! Lamport rule documented on [`Session::rounds`](crate::Session::rounds).

use std::sync::Arc;

use doram_core::PartyId;

/// Counters for one link (this party and one peer) within one phase.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LinkStats {
    /// Messages sent to the peer.
    pub msgs_sent: u64,
    /// Messages received from the peer.
    pub msgs_received: u64,
    /// Payload bytes sent (what the caller passed, excluding framing).
    pub bytes_sent: u64,
    /// Payload bytes received.
    pub bytes_received: u64,
    /// Framing bytes sent (frame headers; TLS record overhead is not included).
    pub overhead_sent: u64,
    /// Framing bytes received.
    pub overhead_received: u64,
    /// Distinct Lamport timestamps among the messages sent to the peer: the number of rounds in
    /// which this party sent to it.
    pub rounds_sent: u64,
    /// Distinct Lamport timestamps among the messages received from the peer.
    pub rounds_received: u64,
    /// Payload bytes of the largest message sent to the peer (a sum of stats keeps the
    /// largest): what a frame limit for this traffic must at least allow.
    pub largest_sent: u64,
}

impl LinkStats {
    fn add(&mut self, o: &LinkStats) {
        self.msgs_sent += o.msgs_sent;
        self.msgs_received += o.msgs_received;
        self.bytes_sent += o.bytes_sent;
        self.bytes_received += o.bytes_received;
        self.overhead_sent += o.overhead_sent;
        self.overhead_received += o.overhead_received;
        self.rounds_sent += o.rounds_sent;
        self.rounds_received += o.rounds_received;
        self.largest_sent = self.largest_sent.max(o.largest_sent);
    }
}

/// Statistics of one phase (or of a whole session, see [`Stats::total`]).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PhaseStats {
    /// Per-peer counters, indexed by [`PartyId::index`]; this party's own entry stays zero.
    pub links: [LinkStats; PartyId::MAX_PARTIES],
    /// How far this party's Lamport round count advanced while the phase was current.
    pub rounds: u64,
}

impl PhaseStats {
    /// The counters of the link with `peer`.
    pub fn link(&self, peer: PartyId) -> &LinkStats {
        &self.links[peer.index()]
    }

    /// The counters of all links added up (`rounds_sent`/`rounds_received` are summed over
    /// peers, so a round in which several peers were addressed counts once per peer).
    pub fn sum(&self) -> LinkStats {
        let mut t = LinkStats::default();
        for l in &self.links {
            t.add(l);
        }
        t
    }

    fn add(&mut self, o: &PhaseStats) {
        for (a, b) in self.links.iter_mut().zip(&o.links) {
            a.add(b);
        }
        self.rounds += o.rounds;
    }
}

/// What one party sent in some phases, over all its links: the summary a benchmark reports
/// next to its times (see [`Stats::comm`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Comm {
    /// Payload bytes sent.
    pub bytes: u64,
    /// Framing bytes sent (transport headers).
    pub overhead: u64,
    /// Messages sent.
    pub messages: u64,
    /// Rounds: how far the party's Lamport round count advanced in these phases.
    pub rounds: u64,
}

/// Per-phase statistics of a session, in the order the phases were first entered.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Stats {
    phases: Vec<(Arc<str>, PhaseStats)>,
    current: usize,
}

/// The phase a session starts in.
pub const DEFAULT_PHASE: &str = "default";

impl Default for Stats {
    fn default() -> Self {
        Stats {
            phases: vec![(Arc::from(DEFAULT_PHASE), PhaseStats::default())],
            current: 0,
        }
    }
}

impl Stats {
    /// All phases with their statistics, in order of first use.
    pub fn phases(&self) -> impl Iterator<Item = (&str, &PhaseStats)> {
        self.phases.iter().map(|(n, s)| (&**n, s))
    }

    /// The statistics of the phase called `name`, if it was ever entered.
    pub fn phase(&self, name: &str) -> Option<&PhaseStats> {
        self.phases
            .iter()
            .find(|(n, _)| &**n == name)
            .map(|(_, s)| s)
    }

    /// The name of the current phase.
    pub fn current_phase(&self) -> &str {
        &self.phases[self.current].0
    }

    /// All phases added up; `rounds` is then the session's total round count.
    pub fn total(&self) -> PhaseStats {
        let mut t = PhaseStats::default();
        for (_, s) in &self.phases {
            t.add(s);
        }
        t
    }

    /// What this party sent in the phases named, added up; a phase never entered counts as
    /// nothing sent.
    pub fn comm<'a>(&self, phases: impl IntoIterator<Item = &'a str>) -> Comm {
        let mut c = Comm::default();
        for p in phases.into_iter().filter_map(|name| self.phase(name)) {
            let sum = p.sum();
            c.bytes += sum.bytes_sent;
            c.overhead += sum.overhead_sent;
            c.messages += sum.msgs_sent;
            c.rounds += p.rounds;
        }
        c
    }

    pub(crate) fn current_name(&self) -> Arc<str> {
        Arc::clone(&self.phases[self.current].0)
    }

    pub(crate) fn set_phase(&mut self, name: &str) {
        match self.phases.iter().position(|(n, _)| &**n == name) {
            Some(i) => self.current = i,
            None => {
                self.phases.push((Arc::from(name), PhaseStats::default()));
                self.current = self.phases.len() - 1;
            }
        }
    }

    pub(crate) fn cur(&mut self) -> &mut PhaseStats {
        &mut self.phases[self.current].1
    }

    pub(crate) fn reset(&mut self) {
        for (_, s) in &mut self.phases {
            *s = PhaseStats::default();
        }
    }
}

/// One message in a [`Transcript`].
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct TranscriptEvent {
    /// The phase current at the recording party when the message was sent or received.
    pub phase: Arc<str>,
    /// The sender.
    pub from: PartyId,
    /// The receiver.
    pub to: PartyId,
    /// Payload bytes.
    pub bytes: u64,
    /// The message's Lamport timestamp (its round).
    pub round: u64,
}

/// The sequence of messages one party sent and received, in the order it sent and received them.
///
/// Two runs of an oblivious protocol on different inputs must produce equal transcripts: the
/// transcript records the shape of the communication (who, when, how much), never the contents.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct Transcript {
    /// The events, in the order they happened at the recording party.
    pub events: Vec<TranscriptEvent>,
}

impl Transcript {
    /// Number of events.
    pub fn len(&self) -> usize {
        self.events.len()
    }

    /// Whether no message was recorded.
    pub fn is_empty(&self) -> bool {
        self.events.is_empty()
    }
}
