//! The driver: runs the round functions of [`crate::party`], [`crate::unmasked`] and
//! [`crate::masked`] over a [`Session`]. This is the only module that performs I/O.
//!
//! [`Doprf`] is one party's end of one DOPRF instance. It borrows the session for each call
//! instead of owning it, because a protocol such as Ramen runs several instances (one per key
//! holder, plus the stash key) and its own messages over the same session.
//!
//! Every step sends all of its messages, then receives the expected ones. Sizes follow from the
//! [`Params`] and the batch length: a message of any other size is rejected with
//! [`DoprfError::Peer`] naming the sender before it is decoded, and an undecodable one
//! likewise. A lost, repeated or reordered frame is refused by the transport's per-link sequence
//! check (`NetError::OutOfSequence` naming the sender), so the DOPRF adds no framing of its own.
//! Batches of zero evaluations return at once and send nothing.
//! The driver changes neither the session's phase ([`Session::set_phase`]) nor its wire phase
//! ([`Session::set_wire_phase`]): callers attribute costs to, and check, their own steps.

use doram_core::wire::{self, Blame};
use doram_core::{PartyId, Seed};
use doram_field::Fp;
use doram_mpc::Additive;
use doram_net::Session;

use crate::error::DoprfError;
use crate::msgs::WireMessage;
use crate::params::{Mode, Params, Role, Roles};
use crate::party::{KeyHolder, Receiver1, Receiver2};
use crate::prf::LegendreKey;

/// One party's role state in a DOPRF instance (boxed: each holds several AES PRG buffers).
#[derive(Debug)]
pub enum RoleState {
    /// This party is K.
    KeyHolder(Box<KeyHolder>),
    /// This party is R1.
    R1(Box<Receiver1>),
    /// This party is R2.
    R2(Box<Receiver2>),
}

/// One party of one DOPRF instance, run over a [`Session`] (see the [module docs](self)).
///
/// All three parties must make the same calls with the same batch lengths in the same order.
#[derive(Debug)]
pub struct Doprf {
    me: PartyId,
    state: RoleState,
}

/// Sends `msg` to `to`.
fn send<M: WireMessage>(session: &mut Session, to: PartyId, msg: &M) -> Result<(), DoprfError> {
    session.send_bytes(to, &msg.encode())?;
    Ok(())
}

/// Receives the message `M` for `count` evaluations from `from`, checking its exact size.
fn recv<M: WireMessage>(
    session: &mut Session,
    from: PartyId,
    params: &Params,
    count: usize,
) -> Result<M, DoprfError> {
    let bytes = session.recv_bytes(from)?;
    let expected = M::wire_len(params, count);
    wire::exact_len(from, M::WHAT, &bytes, expected)?;
    Ok(M::decode(&bytes, params, count).blame(from, M::WHAT)?)
}

impl Doprf {
    /// Ramen Fig. 9/22, Init and KeyGen, in one round: sets up this party's end of the instance
    /// with roles `roles`, all of its randomness derived from `seed`.
    ///
    /// Costs: K sends 16 bytes (to R1); R1 sends 16 bytes (to R2) and ℓ elements (to K); R2
    /// sends ℓ elements (to K).
    ///
    /// # Errors
    /// [`DoprfError::WrongPartyCount`] unless the session has three parties (checked before
    /// anything is sent); transport and message errors naming the peer.
    pub fn setup(
        session: &mut Session,
        params: Params,
        roles: Roles,
        seed: Seed,
    ) -> Result<Doprf, DoprfError> {
        if session.n_parties() != 3 {
            return Err(DoprfError::WrongPartyCount {
                n_parties: session.n_parties(),
            });
        }
        let me = session.me();
        let state = match roles.role_of(me) {
            Some(Role::KeyHolder) => {
                let (pending, seed_msg) = KeyHolder::setup_start(params, roles, me, seed)?;
                // [Ramen Fig. 9/22, Init] K → R1: k_{k,1}.
                send(session, roles.r1(), &seed_msg)?;
                // [Ramen Fig. 9/22, KeyGen] R1 → K: k_1; R2 → K: k_2.
                let k1 = recv(session, roles.r1(), &params, 0)?;
                let k2 = recv(session, roles.r2(), &params, 0)?;
                RoleState::KeyHolder(Box::new(pending.finish(k1, k2)?))
            }
            Some(Role::R1) => {
                let (pending, seed_msg, k1) = Receiver1::setup_start(params, roles, me, seed)?;
                // [Ramen Fig. 9/22, Init] R1 → R2: k_{1,2}.
                send(session, roles.r2(), &seed_msg)?;
                // [Ramen Fig. 9/22, KeyGen] R1 → K: k_1.
                send(session, roles.key_holder(), &k1)?;
                // [Ramen Fig. 9/22, Init] K → R1: k_{k,1}.
                let k_seed = recv(session, roles.key_holder(), &params, 0)?;
                RoleState::R1(Box::new(pending.finish(k_seed)))
            }
            Some(Role::R2) => {
                let (pending, k2) = Receiver2::setup_start(params, roles, me, seed)?;
                // [Ramen Fig. 9/22, KeyGen] R2 → K: k_2.
                send(session, roles.key_holder(), &k2)?;
                // [Ramen Fig. 9/22, Init] R1 → R2: k_{1,2}.
                let r_seed = recv(session, roles.r1(), &params, 0)?;
                RoleState::R2(Box::new(pending.finish(r_seed)))
            }
            // Unreachable for a valid `Roles` in a three-party session, but not worth a panic.
            None => {
                return Err(DoprfError::ApiMisuse(
                    "this party plays no role in the DOPRF instance",
                ));
            }
        };
        Ok(Doprf { me, state })
    }

    /// Ramen Fig. 9/22, KeyGen again (e.g. a new epoch): K's key becomes k_1 + k_2 for fresh
    /// shares from R1 and R2. One round; R1 and R2 send ℓ elements each to K. Preprocessed
    /// material is kept (it does not depend on the key).
    ///
    /// # Errors
    /// Transport and message errors naming the peer; [`DoprfError::ApiMisuse`] if `session`
    /// belongs to another party.
    pub fn rekey(&mut self, session: &mut Session) -> Result<(), DoprfError> {
        self.check_session(session)?;
        match &mut self.state {
            RoleState::KeyHolder(k) => {
                let (params, roles) = (k.params, k.roles);
                // [Ramen Fig. 9/22, KeyGen] R1 → K: k_1; R2 → K: k_2.
                let k1 = recv(session, roles.r1(), &params, 0)?;
                let k2 = recv(session, roles.r2(), &params, 0)?;
                k.rekey(k1, k2)
            }
            RoleState::R1(r1) => {
                let msg = r1.rekey();
                // [Ramen Fig. 9/22, KeyGen] R1 → K: k_1.
                send(session, r1.roles.key_holder(), &msg)
            }
            RoleState::R2(r2) => {
                let msg = r2.rekey();
                // [Ramen Fig. 9/22, KeyGen] R2 → K: k_2.
                send(session, r2.roles.key_holder(), &msg)
            }
        }
    }

    /// Input-independent preprocessing of `count` evaluations of `mode` (Ramen Fig. 22,
    /// steps 1–3, or Fig. 9, steps 1–5). One round: R1 sends count·ℓ elements to K (unmasked)
    /// or count·ℓ elements and count ℓ-bit masks to R2 (masked). May be called any number of
    /// times; the material queues up and each evaluation consumes one unit, oldest first.
    ///
    /// # Errors
    /// Transport and message errors naming the peer; [`DoprfError::ApiMisuse`] if `session`
    /// belongs to another party.
    pub fn preprocess(
        &mut self,
        session: &mut Session,
        mode: Mode,
        count: usize,
    ) -> Result<(), DoprfError> {
        self.check_session(session)?;
        if count == 0 {
            return Ok(());
        }
        match (&mut self.state, mode) {
            (RoleState::KeyHolder(k), Mode::Unmasked) => {
                let pending = k.unmasked_preprocess_start(count);
                // [Ramen Fig. 22, step 3] R1 → K: c_1.
                let c1 = recv(session, k.roles.r1(), &k.params, count)?;
                k.unmasked_preprocess_finish(pending, c1)
            }
            (RoleState::KeyHolder(k), Mode::Masked) => {
                k.masked_preprocess(count);
                Ok(())
            }
            (RoleState::R1(r1), Mode::Unmasked) => {
                let c1 = r1.unmasked_preprocess(count);
                // [Ramen Fig. 22, step 3] R1 → K: c_1.
                send(session, r1.roles.key_holder(), &c1)
            }
            (RoleState::R1(r1), Mode::Masked) => {
                let c3 = r1.masked_preprocess(count);
                // [Ramen Fig. 9, steps 3 and 5] R1 → R2: r, c_3.
                send(session, r1.roles.r2(), &c3)
            }
            (RoleState::R2(r2), Mode::Unmasked) => {
                r2.unmasked_preprocess(count);
                Ok(())
            }
            (RoleState::R2(r2), Mode::Masked) => {
                let pending = r2.masked_preprocess_start(count);
                // [Ramen Fig. 9, steps 3 and 5] R1 → R2: r, c_3.
                let c3 = recv(session, r2.roles.r1(), &r2.params, count)?;
                r2.masked_preprocess_finish(pending, c3)
            }
        }
    }

    /// Ramen Fig. 22, steps 4–9: the unmasked DOPRF on the shared inputs ⟨x⟩ (this party's
    /// shares `x`, one per evaluation). R2 gets `Some(PRF(k, x))` for every input; K and R1 get
    /// `None`. Two rounds; consumes `x.len()` unmasked preprocessed evaluations.
    ///
    /// # Errors
    /// [`DoprfError::PreprocessingExhausted`] before anything is sent if fewer evaluations are
    /// preprocessed; transport and message errors naming the peer.
    pub fn eval_unmasked(
        &mut self,
        session: &mut Session,
        x: &[Additive<Fp>],
    ) -> Result<Option<Vec<u128>>, DoprfError> {
        self.check_session(session)?;
        let count = x.len();
        match &mut self.state {
            RoleState::KeyHolder(k) => {
                let pending = k.unmasked_eval_start(x)?;
                if count == 0 {
                    return Ok(None);
                }
                let (params, roles) = (k.params, k.roles);
                // [Ramen Fig. 22, steps 4–5] R1 → K: y_2; R2 → K: e.
                let y2 = recv(session, roles.r1(), &params, count)?;
                let e = recv(session, roles.r2(), &params, count)?;
                let z1 = pending.finish(y2, e)?;
                // [Ramen Fig. 22, step 6] K → R2: z_1.
                send(session, roles.r2(), &z1)?;
                Ok(None)
            }
            RoleState::R1(r1) => {
                let y2 = r1.unmasked_eval(x)?;
                if count > 0 {
                    // [Ramen Fig. 22, step 4] R1 → K: y_2.
                    send(session, r1.roles.key_holder(), &y2)?;
                }
                Ok(None)
            }
            RoleState::R2(r2) => {
                let (pending, e) = r2.unmasked_eval_start(x)?;
                if count == 0 {
                    return Ok(Some(Vec::new()));
                }
                let (params, roles) = (r2.params, r2.roles);
                // [Ramen Fig. 22, step 5] R2 → K: e.
                send(session, roles.key_holder(), &e)?;
                // [Ramen Fig. 22, step 6] K → R2: z_1.
                let z1 = recv(session, roles.key_holder(), &params, count)?;
                Ok(Some(pending.finish(z1)?))
            }
        }
    }

    /// Ramen Fig. 9, steps 6–11: the masked DOPRF on the shared inputs ⟨x⟩. Every party gets
    /// one ℓ-bit string per input: K gets PRF(k, x) ⊕ r, R1 and R2 get r. Two rounds; consumes
    /// `x.len()` masked preprocessed evaluations.
    ///
    /// # Errors
    /// [`DoprfError::PreprocessingExhausted`] before anything is sent if fewer evaluations are
    /// preprocessed; transport and message errors naming the peer.
    pub fn eval_masked(
        &mut self,
        session: &mut Session,
        x: &[Additive<Fp>],
    ) -> Result<Vec<u128>, DoprfError> {
        self.check_session(session)?;
        let count = x.len();
        match &mut self.state {
            RoleState::KeyHolder(k) => {
                let (pending, d) = k.masked_eval_start(x)?;
                if count == 0 {
                    return Ok(Vec::new());
                }
                let (params, roles) = (k.params, k.roles);
                // [Ramen Fig. 9, step 7] K → R2: d.
                send(session, roles.r2(), &d)?;
                // [Ramen Fig. 9, step 8] R2 → K: z_3.
                let z3 = recv(session, roles.r2(), &params, count)?;
                pending.finish(z3)
            }
            RoleState::R1(r1) => {
                let (r, y2) = r1.masked_eval(x)?;
                if count > 0 {
                    // [Ramen Fig. 9, step 6] R1 → R2: y_2.
                    send(session, r1.roles.r2(), &y2)?;
                }
                Ok(r)
            }
            RoleState::R2(r2) => {
                let pending = r2.masked_eval_start(x)?;
                if count == 0 {
                    return Ok(Vec::new());
                }
                let (params, roles) = (r2.params, r2.roles);
                // [Ramen Fig. 9, steps 6–7] R1 → R2: y_2; K → R2: d.
                let y2 = recv(session, roles.r1(), &params, count)?;
                let d = recv(session, roles.key_holder(), &params, count)?;
                let (r, z3) = pending.finish(y2, d)?;
                // [Ramen Fig. 9, step 8] R2 → K: z_3.
                send(session, roles.key_holder(), &z3)?;
                Ok(r)
            }
        }
    }

    /// This party.
    pub fn me(&self) -> PartyId {
        self.me
    }

    /// The role this party plays.
    pub fn role(&self) -> Role {
        match self.state {
            RoleState::KeyHolder(_) => Role::KeyHolder,
            RoleState::R1(_) => Role::R1,
            RoleState::R2(_) => Role::R2,
        }
    }

    /// The parameters.
    pub fn params(&self) -> &Params {
        match &self.state {
            RoleState::KeyHolder(k) => k.params(),
            RoleState::R1(r) => r.params(),
            RoleState::R2(r) => r.params(),
        }
    }

    /// The role assignment.
    pub fn roles(&self) -> &Roles {
        match &self.state {
            RoleState::KeyHolder(k) => k.roles(),
            RoleState::R1(r) => r.roles(),
            RoleState::R2(r) => r.roles(),
        }
    }

    /// Preprocessed evaluations of `mode` not yet used (equal at all three parties when they
    /// follow the protocol).
    pub fn available(&self, mode: Mode) -> usize {
        match &self.state {
            RoleState::KeyHolder(k) => k.available(mode),
            RoleState::R1(r) => r.available(mode),
            RoleState::R2(r) => r.available(mode),
        }
    }

    /// The key, if this party is K.
    pub fn key(&self) -> Option<&LegendreKey> {
        match &self.state {
            RoleState::KeyHolder(k) => Some(k.key()),
            _ => None,
        }
    }

    /// The I/O-free role state.
    pub fn state(&self) -> &RoleState {
        &self.state
    }

    /// The I/O-free role state, e.g. to run round functions directly.
    pub fn into_state(self) -> RoleState {
        self.state
    }

    /// Wraps a role state (e.g. one set up with the round functions) for use over a session.
    pub fn from_state(state: RoleState) -> Doprf {
        let (roles, role) = match &state {
            RoleState::KeyHolder(k) => (k.roles, Role::KeyHolder),
            RoleState::R1(r) => (r.roles, Role::R1),
            RoleState::R2(r) => (r.roles, Role::R2),
        };
        Doprf {
            me: roles.party(role),
            state,
        }
    }

    fn check_session(&self, session: &Session) -> Result<(), DoprfError> {
        if session.me() == self.me {
            Ok(())
        } else {
            Err(DoprfError::ApiMisuse(
                "the session belongs to another party than this DOPRF state",
            ))
        }
    }
}
