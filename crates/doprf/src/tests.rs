//! The round functions driven in one thread, with no sockets: messages are handed from one
//! role to the next by hand, exactly as the driver sends them.

use doram_core::wire::PeerFault;
use doram_core::{CodecError, PartyId, Seed};
use doram_field::Fp;
use doram_mpc::Additive;
use rand::SeedableRng;
use rand_chacha::ChaCha12Rng;

use crate::msgs::{MaskedZ3, UnmaskedY2};
use crate::{DoprfError, KeyHolder, LegendrePrf, Mode, Params, Receiver1, Receiver2, Roles};

/// K's, R1's and R2's outputs of one masked evaluation.
type MaskedOutputs = (Vec<u128>, Vec<u128>, Vec<u128>);

struct Trio {
    k: KeyHolder,
    r1: Receiver1,
    r2: Receiver2,
}

fn setup(params: Params, roles: Roles, seed: u8) -> Trio {
    let s = |p: PartyId| Seed([seed ^ (p.index() as u8) << 4; 16]);
    let (kp, k_seed) =
        KeyHolder::setup_start(params, roles, roles.key_holder(), s(roles.key_holder())).unwrap();
    let (r1p, r_seed, k1) =
        Receiver1::setup_start(params, roles, roles.r1(), s(roles.r1())).unwrap();
    let (r2p, k2) = Receiver2::setup_start(params, roles, roles.r2(), s(roles.r2())).unwrap();
    Trio {
        k: kp.finish(k1, k2).unwrap(),
        r1: r1p.finish(k_seed),
        r2: r2p.finish(r_seed),
    }
}

impl Trio {
    fn preprocess(&mut self, mode: Mode, count: usize) {
        match mode {
            Mode::Unmasked => {
                let pending = self.k.unmasked_preprocess_start(count);
                let c1 = self.r1.unmasked_preprocess(count);
                self.r2.unmasked_preprocess(count);
                self.k.unmasked_preprocess_finish(pending, c1).unwrap();
            }
            Mode::Masked => {
                self.k.masked_preprocess(count);
                let c3 = self.r1.masked_preprocess(count);
                let pending = self.r2.masked_preprocess_start(count);
                self.r2.masked_preprocess_finish(pending, c3).unwrap();
            }
        }
    }

    fn unmasked(&mut self, x: [&[Additive<Fp>]; 3]) -> Result<Vec<u128>, DoprfError> {
        let k = self.k.unmasked_eval_start(x[0])?;
        let y2 = self.r1.unmasked_eval(x[1])?;
        let (r2, e) = self.r2.unmasked_eval_start(x[2])?;
        let z1 = k.finish(y2, e)?;
        r2.finish(z1)
    }

    /// (K's output, R1's output, R2's output).
    fn masked(&mut self, x: [&[Additive<Fp>]; 3]) -> Result<MaskedOutputs, DoprfError> {
        let (k, d) = self.k.masked_eval_start(x[0])?;
        let (r1_out, y2) = self.r1.masked_eval(x[1])?;
        let r2 = self.r2.masked_eval_start(x[2])?;
        let (r2_out, z3) = r2.finish(y2, d)?;
        Ok((k.finish(z3)?, r1_out, r2_out))
    }
}

/// Random shares (K's, R1's, R2's) and the values they share.
fn shares(rng: &mut ChaCha12Rng, count: usize) -> ([Vec<Additive<Fp>>; 3], Vec<Fp>) {
    let v: [Vec<Fp>; 3] =
        std::array::from_fn(|_| (0..count).map(|_| Fp::random(&mut *rng)).collect());
    let x = (0..count).map(|i| v[0][i] + v[1][i] + v[2][i]).collect();
    (v.map(Additive::from_shares), x)
}

#[test]
fn both_modes_match_the_plaintext_prf() {
    let mut rng = ChaCha12Rng::seed_from_u64(11);
    for (n, roles) in Roles::all().into_iter().enumerate() {
        for bits in [1, 13, 80, 128] {
            let params = Params::new(bits).unwrap();
            let mut t = setup(params, roles, n as u8);
            let prf = LegendrePrf::new(t.k.key().clone());
            // Two preprocessing batches, consumed across batch boundaries.
            for mode in [Mode::Unmasked, Mode::Masked] {
                t.preprocess(mode, 3);
                t.preprocess(mode, 6);
            }
            for count in [0, 1, 8] {
                let (x, plain) = shares(&mut rng, count);
                let y = prf.eval_batch(&plain);
                assert_eq!(t.unmasked([&x[0], &x[1], &x[2]]).unwrap(), y);
                let (k, r1, r2) = t.masked([&x[0], &x[1], &x[2]]).unwrap();
                assert_eq!(r1, r2);
                let joined: Vec<u128> = k.iter().zip(&r1).map(|(k, r)| k ^ r).collect();
                assert_eq!(joined, y);
                assert!(r1.iter().all(|&r| r & !params.output_mask() == 0));
            }
            assert_eq!(t.k.available(Mode::Masked), 0);
            assert_eq!(t.r2.available(Mode::Unmasked), 0);
        }
    }
}

#[test]
fn a_shared_zero_of_k_plus_x_gives_bit_zero_unmasked() {
    let params = Params::new(16).unwrap();
    let roles = Roles::ramen_stash();
    let mut t = setup(params, roles, 1);
    let prf = LegendrePrf::new(t.k.key().clone());
    // x = −k_3: symbol 0 in bit 3.
    let x = -t.k.key().elements()[3];
    t.preprocess(Mode::Unmasked, 1);
    let zero = [Additive::ZERO];
    let y = t
        .unmasked([&[Additive::from_share(x)], &zero, &zero])
        .unwrap();
    assert_eq!(y, vec![prf.eval(x)]);
    assert_eq!(y[0] >> 3 & 1, 0);
}

#[test]
fn masks_are_fresh_and_outputs_change_with_the_key() {
    let params = Params::new(64).unwrap();
    let roles = Roles::ramen_stash();
    let mut t = setup(params, roles, 2);
    t.preprocess(Mode::Masked, 4);
    let x = [Additive::from_share(Fp::from_u64(5))];
    let z = [Additive::ZERO];
    let (k1, r1, _) = t.masked([&x, &z, &z]).unwrap();
    let (k2, r2, _) = t.masked([&x, &z, &z]).unwrap();
    assert_ne!(r1, r2, "each evaluation has its own mask");
    assert_eq!(k1[0] ^ r1[0], k2[0] ^ r2[0], "same input, same PRF value");
    // After a rekey the same input maps elsewhere.
    let before = k1[0] ^ r1[0];
    let (k1s, k2s) = (t.r1.rekey(), t.r2.rekey());
    t.k.rekey(k1s, k2s).unwrap();
    let (k3, r3, _) = t.masked([&x, &z, &z]).unwrap();
    assert_ne!(k3[0] ^ r3[0], before);
    assert_eq!(
        k3[0] ^ r3[0],
        LegendrePrf::new(t.k.key().clone()).eval(Fp::from_u64(5))
    );
    // One unit left; two requested.
    let x2 = [x[0], x[0]];
    let z2 = [z[0], z[0]];
    assert!(matches!(
        t.masked([&x2, &z2, &z2]),
        Err(DoprfError::PreprocessingExhausted {
            mode: Mode::Masked,
            requested: 2,
            available: 1
        })
    ));
    assert_eq!(t.k.available(Mode::Masked), 1);
}

#[test]
fn exhaustion_is_an_error_at_every_role() {
    let params = Params::new(8).unwrap();
    let mut t = setup(params, Roles::ramen_stash(), 3);
    let x = [Additive::ZERO];
    assert!(matches!(
        t.k.unmasked_eval_start(&x),
        Err(DoprfError::PreprocessingExhausted {
            mode: Mode::Unmasked,
            ..
        })
    ));
    assert!(t.r1.unmasked_eval(&x).is_err());
    assert!(t.r2.unmasked_eval_start(&x).is_err());
    assert!(t.k.masked_eval_start(&x).is_err());
    assert!(t.r1.masked_eval(&x).is_err());
    assert!(t.r2.masked_eval_start(&x).is_err());
    // Preprocessing one mode does not feed the other.
    t.preprocess(Mode::Masked, 1);
    assert!(t.unmasked([&x, &x, &x]).is_err());
    assert!(t.masked([&x, &x, &x]).is_ok());
    assert!(t.masked([&x, &x, &x]).is_err());
}

#[test]
fn wrong_roles_and_wrong_lengths_are_rejected() {
    let params = Params::new(8).unwrap();
    let roles = Roles::ramen_stash();
    assert!(matches!(
        KeyHolder::setup_start(params, roles, PartyId::P1, Seed::default()),
        Err(DoprfError::WrongRole {
            me: PartyId::P1,
            ..
        })
    ));
    assert!(Receiver1::setup_start(params, roles, PartyId::P0, Seed::default()).is_err());
    assert!(Receiver2::setup_start(params, roles, PartyId::P1, Seed::default()).is_err());

    let mut t = setup(params, roles, 4);
    t.preprocess(Mode::Unmasked, 2);
    t.preprocess(Mode::Masked, 2);
    let x = [Additive::ZERO; 2];
    // y_2 with one element too few: the error names R1.
    let k = t.k.unmasked_eval_start(&x).unwrap();
    let (_, e) = t.r2.unmasked_eval_start(&x).unwrap();
    let short = UnmaskedY2 { y2: vec![Fp::ZERO] };
    assert!(matches!(
        k.finish(short, e),
        Err(DoprfError::Peer(PeerFault {
            peer: PartyId::P1,
            fault: CodecError::WrongLength {
                expected: 32,
                got: 16
            },
            ..
        }))
    ));
    // z_3 with an extra element: the error names R2.
    let (k, _) = t.k.masked_eval_start(&x).unwrap();
    let long = MaskedZ3 {
        z3: vec![Fp::ZERO; 17],
    };
    assert!(matches!(
        k.finish(long),
        Err(DoprfError::Peer(PeerFault {
            peer: PartyId::P2,
            fault: CodecError::WrongLength { .. },
            ..
        }))
    ));
}

#[test]
fn states_can_move_between_threads() {
    fn send<T: Send + Sync>() {}
    send::<crate::Doprf>();
    send::<KeyHolder>();
    send::<Receiver1>();
    send::<Receiver2>();
    send::<crate::masked::AwaitingZ3>();
    send::<crate::unmasked::AwaitingZ1>();
}
