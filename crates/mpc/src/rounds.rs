//! Pending rounds: the state a one-round operation keeps between sending its messages and
//! receiving its peers' ones.
//!
//! Every one-round operation is split into a start function on [`Party`](crate::Party) (for
//! example [`Party::mul_start`](crate::Party::mul_start)), which returns a pending round and the
//! [`Outgoing`](crate::Outgoing) messages, and [`Round::finish`], which takes the [`Inbound`] messages listed by
//! [`Round::expected`] and returns the result. No function here performs I/O; the driver
//! ([`run_round`](crate::run_round)) or a test moves the messages.

use doram_core::wire::PeerFault;
use doram_field::{Group, Ring};

use crate::error::MpcError;
use crate::msgs::{Expected, Inbound};
use crate::share::{Additive, Replicated};

/// A one-round operation that has produced its outgoing messages and waits for the messages in
/// [`expected`](Round::expected).
pub trait Round<F: Group> {
    /// The result of the operation.
    type Output;

    /// The messages this party must receive, in this order (empty if it receives nothing).
    fn expected(&self) -> &[Expected];

    /// Completes the operation with the received messages, one per entry of
    /// [`expected`](Round::expected), in the same order.
    ///
    /// # Errors
    /// [`MpcError::Peer`] (naming the sender) if a message has the wrong element count,
    /// [`MpcError::ApiMisuse`] if the messages do not match the expected senders and kinds.
    fn finish(self, inbound: Vec<Inbound<F>>) -> Result<Self::Output, MpcError>;
}

/// Checks `inbound` against `expected` and returns the payloads in the same order.
fn take_payloads<F: Group>(
    expected: &[Expected],
    inbound: Vec<Inbound<F>>,
) -> Result<Vec<Vec<F>>, MpcError> {
    if inbound.len() != expected.len() {
        return Err(MpcError::ApiMisuse(
            "finish() got a different number of messages than expected() lists",
        ));
    }
    expected
        .iter()
        .zip(inbound)
        .map(|(e, m)| {
            if m.from != e.from || m.kind != e.kind {
                return Err(MpcError::ApiMisuse(
                    "finish() got a message from another sender or of another kind than expected",
                ));
            }
            if m.elems.len() != e.count {
                return Err(PeerFault::wrong_length(
                    m.from,
                    e.kind.name(),
                    e.bytes::<F>(),
                    m.elems.len() * F::BYTES,
                )
                .into());
            }
            Ok(m.elems)
        })
        .collect()
}

/// The only payload of a round expecting at most one message (an empty vector if the batch is
/// empty and nothing was expected).
fn single_payload<F: Group>(
    expected: &[Expected],
    inbound: Vec<Inbound<F>>,
) -> Result<Vec<F>, MpcError> {
    Ok(take_payloads(expected, inbound)?.pop().unwrap_or_default())
}

/// Pending: `P_i` has sent its fresh additive share c_i to `P_{i+1}` and waits for c_{i−1} from
/// `P_{i−1}`; the result is ⟦c⟧ = (c_i, c_{i−1}).
///
/// Used by ⟨x⟩ → ⟦x⟧ (Ramen Fig. 4, step 8), ⟦x⟧·⟦y⟧ and replicated select.
#[derive(Debug)]
pub struct Rereplicate<F> {
    pub(crate) own: Vec<Additive<F>>,
    pub(crate) expect: Option<Expected>,
}

impl<F: Group> Round<F> for Rereplicate<F> {
    type Output = Vec<Replicated<F>>;

    fn expected(&self) -> &[Expected] {
        self.expect.as_slice()
    }

    fn finish(self, inbound: Vec<Inbound<F>>) -> Result<Self::Output, MpcError> {
        let prev = single_payload(self.expected(), inbound)?;
        Ok(self
            .own
            .iter()
            .zip(prev)
            .map(|(own, prev)| Replicated::from_parts(own.share(), prev))
            .collect())
    }
}

/// Pending: the product ⟨x⟩·⟨y⟩ of two additively shared operands, after `P_i` sent its
/// re-randomised shares of both to `P_{i+1}`; waits for `P_{i−1}`'s, then computes the local
/// replicated product plus an offset (a zero-sharing, and for select the ⟨y⟩ share).
///
/// Used by [`Party::mul_additive_start`](crate::Party::mul_additive_start) and F_Select
/// (Ramen Fig. 23, [`Party::select_start`](crate::Party::select_start)).
#[derive(Debug)]
pub struct ProductRound<F> {
    pub(crate) left: Vec<Additive<F>>,
    pub(crate) right: Vec<Additive<F>>,
    pub(crate) offset: Vec<Additive<F>>,
    pub(crate) expect: Option<Expected>,
}

impl<F: Ring> Round<F> for ProductRound<F> {
    type Output = Vec<Additive<F>>;

    fn expected(&self) -> &[Expected] {
        self.expect.as_slice()
    }

    fn finish(self, inbound: Vec<Inbound<F>>) -> Result<Self::Output, MpcError> {
        let k = self.left.len();
        let payload = single_payload(self.expected(), inbound)?;
        let (left_prev, right_prev) = payload.split_at(payload.len().min(k));
        Ok(self
            .left
            .iter()
            .zip(left_prev)
            .zip(self.right.iter().zip(right_prev))
            .zip(&self.offset)
            .map(|(((l, &lp), (r, &rp)), &offset)| {
                let a = Replicated::from_parts(l.share(), lp);
                let b = Replicated::from_parts(r.share(), rp);
                local_product(a, b) + offset
            })
            .collect())
    }
}

/// `P_i`'s part x_i·y_i + x_i·y_{i−1} + x_{i−1}·y_i of the product of two replicated sharings:
/// the three parts cover all nine products x_a·y_b, so they are additive shares of x·y.
/// Computed as x_i·(y_i + y_{i−1}) + x_{i−1}·y_i: the same value with two multiplications.
#[inline]
pub(crate) fn local_product<F: Ring>(x: Replicated<F>, y: Replicated<F>) -> Additive<F> {
    Additive::from_share(x.own() * (y.own() + y.prev()) + x.prev() * y.own())
}

/// Pending: an opening; this party holds `partial` (the sum of the shares it has) and adds the
/// shares it receives.
pub struct OpenRound<F> {
    pub(crate) partial: Vec<F>,
    pub(crate) expect: Vec<Expected>,
}

impl<F: Group> Round<F> for OpenRound<F> {
    type Output = Vec<F>;

    fn expected(&self) -> &[Expected] {
        &self.expect
    }

    fn finish(self, inbound: Vec<Inbound<F>>) -> Result<Self::Output, MpcError> {
        let mut sum = self.partial;
        for payload in take_payloads(&self.expect, inbound)? {
            for (s, x) in sum.iter_mut().zip(payload) {
                *s += x;
            }
        }
        Ok(sum)
    }
}

/// Pending: an opening towards one party. The receiver gets `Some(values)`, the others `None`
/// (they only sent).
#[derive(Debug)]
pub struct OpenToRound<F>(pub(crate) Option<OpenRound<F>>);

impl<F: Group> Round<F> for OpenToRound<F> {
    type Output = Option<Vec<F>>;

    fn expected(&self) -> &[Expected] {
        self.0.as_ref().map_or(&[], |r| r.expected())
    }

    fn finish(self, inbound: Vec<Inbound<F>>) -> Result<Self::Output, MpcError> {
        match self.0 {
            Some(r) => r.finish(inbound).map(Some),
            None => take_payloads::<F>(&[], inbound).map(|_| None),
        }
    }
}

/// Pending: replicated input from a dealer. The dealer is done already; each other party waits
/// for the component x_{d+1} from the dealer `P_d`.
pub struct InputRound<F> {
    pub(crate) state: InputState<F>,
    pub(crate) expect: Option<Expected>,
}

/// What a party of a replicated input holds before the round completes.
pub(crate) enum InputState<F> {
    /// The dealer: both components.
    Dealer(Vec<Replicated<F>>),
    /// `P_{d+1}`: knows x_d (its `prev` component); the wire brings its `own` one.
    WireIsOwn(Vec<F>),
    /// `P_{d−1}`: knows x_{d−1} (its `own` component); the wire brings its `prev` one.
    WireIsPrev(Vec<F>),
}

impl<F: Group> Round<F> for InputRound<F> {
    type Output = Vec<Replicated<F>>;

    fn expected(&self) -> &[Expected] {
        self.expect.as_slice()
    }

    fn finish(self, inbound: Vec<Inbound<F>>) -> Result<Self::Output, MpcError> {
        let wire = single_payload(self.expect.as_slice(), inbound)?;
        Ok(match self.state {
            InputState::Dealer(done) => done,
            InputState::WireIsOwn(prev) => prev
                .into_iter()
                .zip(wire)
                .map(|(p, o)| Replicated::from_parts(o, p))
                .collect(),
            InputState::WireIsPrev(own) => own
                .into_iter()
                .zip(wire)
                .map(|(o, p)| Replicated::from_parts(o, p))
                .collect(),
        })
    }
}

// The pending states hold shares: their `Debug` shows the shape only.
impl<F> core::fmt::Debug for OpenRound<F> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("OpenRound")
            .field("len", &self.partial.len())
            .field("expect", &self.expect)
            .finish_non_exhaustive()
    }
}

impl<F> core::fmt::Debug for InputRound<F> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        let (role, len) = match &self.state {
            InputState::Dealer(v) => ("dealer", v.len()),
            InputState::WireIsOwn(v) => ("dealer's successor", v.len()),
            InputState::WireIsPrev(v) => ("dealer's predecessor", v.len()),
        };
        f.debug_struct("InputRound")
            .field("role", &role)
            .field("len", &len)
            .field("expect", &self.expect)
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use doram_field::Fp;

    #[test]
    fn pending_rounds_do_not_print_shares() {
        let secret = Fp::from_u64(987_654_321);
        let open = OpenRound {
            partial: vec![secret],
            expect: Vec::new(),
        };
        let input = InputRound {
            state: InputState::WireIsOwn(vec![secret]),
            expect: None,
        };
        let rerep = Rereplicate {
            own: vec![Additive::from_share(secret)],
            expect: None,
        };
        for s in [
            format!("{open:?}"),
            format!("{input:?}"),
            format!("{rerep:?}"),
        ] {
            assert!(!s.contains("987654321"), "{s}");
        }
    }
}
