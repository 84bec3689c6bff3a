//! How a server behaves: honestly, or deviating in one of the ways the adversarial tests
//! exercise (a malicious server in the model of spec §1 can do any of these).

use std::sync::Arc;
use std::time::Duration;

use crate::db::Database;

/// A point of the protocol where a server can drop, delay, garble or cut its message.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stage {
    /// The database description sent when a client connects.
    Info,
    /// The view(s) sent to the client (Algorithm 2, step 11).
    Views,
    /// The shares ⟨z⟩_b, ⟨y⟩_b (step 15).
    Answer,
    /// S_2's partial view to S_0 (step 4; S_2 only).
    Offline,
}

/// A server's behaviour. Everything but [`Behaviour::Honest`] is a deviation.
#[derive(Clone, Debug, Default)]
#[non_exhaustive]
pub enum Behaviour {
    /// Follows the protocol.
    #[default]
    Honest,
    /// S_2: flips a bit of σ^1 in the partial view sent to S_0, but reports the true views.
    TamperPartialView,
    /// S_2: flips τ^{1,0} in the partial views of both holders and reports the same tampered
    /// outputs to the client (views agree; the G check fails).
    TamperGOutput,
    /// S_2: shares the payload (2, α) instead of (1, α) (spec §11 P1).
    WrongPayload,
    /// Flips a bit in the view(s) sent to the client (S_2: in view_0).
    TamperView,
    /// S_0/S_1: adds 1 to its share of z in chunk 0.
    WrongZ,
    /// S_0/S_1: adds 1 to its share of y in chunk 0.
    WrongY,
    /// S_0/S_1: adds 1 to its shares of z and y in the last chunk only.
    WrongLastChunk,
    /// S_0/S_1: rotates by Δ + 1 instead of Δ.
    WrongShift,
    /// Announces the honest database's description but computes on this database.
    LyingDatabase(Arc<Database>),
    /// Sends nothing at the stage.
    Drop(Stage),
    /// Sends its message at the stage this much later.
    Delay(Stage, Duration),
    /// Sends random bytes instead of its message at the stage.
    Garbage(Stage),
    /// Closes the connection instead of sending at the stage (not for [`Stage::Offline`]).
    Close(Stage),
    /// S_2: re-sends the first instance's partial views under every later fresh id (and
    /// reports matching views), so that key holders would reuse one key.
    ReplayPartialView,
    /// Returns a wrong record (one bit flipped) when asked in the clear, with the true path.
    LyingClear,
    /// At the stage, sends this connection's previous reply (a stale one, with its old nonce)
    /// instead of the current one ([`Stage::Views`] or [`Stage::Answer`]).
    Stale(Stage),
    /// At the stage, sends this connection's previous reply first, then the current one.
    StaleFirst(Stage),
}

/// What to do with a message at a stage.
pub(crate) enum Act {
    Send,
    Drop,
    Garbage,
    Close,
    /// Send the previous reply at this stage, then (if `then_real`) the current one.
    Stale {
        then_real: bool,
    },
}

impl Behaviour {
    /// The action at `stage`, after any delay.
    pub(crate) fn at(&self, stage: Stage) -> Act {
        match self {
            Behaviour::Drop(s) if *s == stage => Act::Drop,
            Behaviour::Garbage(s) if *s == stage => Act::Garbage,
            Behaviour::Close(s) if *s == stage => Act::Close,
            Behaviour::Stale(s) if *s == stage => Act::Stale { then_real: false },
            Behaviour::StaleFirst(s) if *s == stage => Act::Stale { then_real: true },
            Behaviour::Delay(s, d) if *s == stage => {
                std::thread::sleep(*d);
                Act::Send
            }
            _ => Act::Send,
        }
    }

    /// Whether this is the honest behaviour.
    pub fn is_honest(&self) -> bool {
        matches!(self, Behaviour::Honest)
    }
}
