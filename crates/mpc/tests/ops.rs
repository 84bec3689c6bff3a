//! Every operation against plaintext, on three threads over an in-process mesh, for `Fp` and
//! `Z64` and batches of 0, 1, 7 and 1000.

use doram_core::PartyId;
use doram_field::{Fp, Ring, Z64};
use doram_mpc::testkit::{run_mpc3, test_seed};
use doram_mpc::{
    Additive, Input, Mpc3, MpcError, Replicated, deal_additive, random_element,
    reconstruct_additive, reconstruct_replicated,
};
use rand::SeedableRng;
use rand_chacha::ChaCha12Rng;

const SIZES: [usize; 4] = [0, 1, 7, 1000];
const ALL: [PartyId; 3] = [PartyId::P0, PartyId::P1, PartyId::P2];

fn rec_add<F: Ring>(v: [&Vec<Additive<F>>; 3]) -> Vec<F> {
    assert!(
        v.iter().all(|s| s.len() == v[0].len()),
        "share vectors differ in length"
    );
    (0..v[0].len())
        .map(|j| reconstruct_additive(&[v[0][j], v[1][j], v[2][j]]))
        .collect()
}

fn rec_rep<F: Ring>(v: [&Vec<Replicated<F>>; 3]) -> Vec<F> {
    assert!(
        v.iter().all(|s| s.len() == v[0].len()),
        "share vectors differ in length"
    );
    (0..v[0].len())
        .map(|j| {
            reconstruct_replicated(&[v[0][j], v[1][j], v[2][j]])
                .unwrap_or_else(|| panic!("inconsistent replicated shares at {j}"))
        })
        .collect()
}

/// Deals additive shares of each element of `v`, as three per-party vectors.
fn deal<F: Ring>(v: &[F], rng: &mut ChaCha12Rng) -> [Vec<Additive<F>>; 3] {
    let mut out: [Vec<Additive<F>>; 3] = Default::default();
    for &x in v {
        for (o, s) in out.iter_mut().zip(deal_additive(x, rng)) {
            o.push(s);
        }
    }
    out
}

/// What each party computes; reconstructed and compared with plaintext afterwards.
#[derive(Default)]
struct Out<F> {
    zero: Vec<Additive<F>>,
    random_additive: Vec<Additive<F>>,
    random_replicated: Vec<Replicated<F>>,
    input_additive: Vec<Vec<Additive<F>>>,
    input_replicated: Vec<Vec<Replicated<F>>>,
    reshare: Vec<Additive<F>>,
    to_replicated: Vec<Replicated<F>>,
    to_additive: Vec<Additive<F>>,
    open: Vec<F>,
    open_to: Vec<Option<Vec<F>>>,
    open_replicated: Vec<F>,
    open_replicated_to: Vec<Option<Vec<F>>>,
    mul: Vec<Replicated<F>>,
    mul_depth2: Vec<Replicated<F>>,
    mul_local: Vec<Additive<F>>,
    mul_additive: Vec<Additive<F>>,
    select: Vec<Additive<F>>,
    select_replicated: Vec<Replicated<F>>,
    select_local: Vec<Additive<F>>,
    linear: Vec<Additive<F>>,
    linear_replicated: Vec<Replicated<F>>,
}

fn program<F: Ring>(
    mpc: &mut Mpc3,
    plain_x: &[F],
    x: &[Additive<F>],
    y: &[Additive<F>],
    flag: &[Additive<F>],
    c: F,
) -> Result<Out<F>, MpcError> {
    let me = mpc.me();
    let k = x.len();
    let mut o = Out {
        zero: mpc.zero(k),
        random_additive: mpc.random_additive(k),
        random_replicated: mpc.random_replicated(k),
        ..Out::default()
    };
    for dealer in ALL {
        let input = if dealer == me {
            Input::Own(plain_x)
        } else {
            Input::Peer { dealer, count: k }
        };
        o.input_additive.push(mpc.input_additive(input)?);
        o.input_replicated.push(mpc.input_replicated(input)?);
    }
    o.reshare = mpc.reshare(x);
    let rx = mpc.to_replicated(x)?;
    let ry = mpc.to_replicated(y)?;
    let rf = mpc.to_replicated(flag)?;
    o.to_additive = mpc.to_additive(&rx);
    o.open = mpc.open(x)?;
    o.open_replicated = mpc.open_replicated(&rx)?;
    for to in ALL {
        o.open_to.push(mpc.open_to(to, x)?);
        o.open_replicated_to.push(mpc.open_replicated_to(to, &rx)?);
    }
    o.mul = mpc.mul(&rx, &ry)?;
    o.mul_depth2 = mpc.mul(&o.mul, &rx)?;
    o.mul_local = mpc.mul_local(&rx, &ry)?;
    o.mul_additive = mpc.mul_additive(x, y)?;
    o.select = mpc.select(flag, x, y)?;
    o.select_replicated = mpc.select_replicated(&rf, &rx, &ry)?;
    o.select_local = mpc.select_local(&rf, &rx, &ry)?;
    o.linear = x
        .iter()
        .zip(y)
        .map(|(&a, &b)| (a * c - b + -a).add_public(c, me))
        .collect();
    o.linear_replicated = rx
        .iter()
        .zip(&ry)
        .map(|(&a, &b)| (a * c - b + -a).add_public(c, me))
        .collect();
    o.to_replicated = rx;
    Ok(o)
}

fn all_ops<F: Ring>(seed: u64) {
    for k in SIZES {
        let mut rng = ChaCha12Rng::seed_from_u64(seed ^ (k as u64).rotate_left(32));
        let x: Vec<F> = (0..k).map(|_| random_element(&mut rng)).collect();
        let y: Vec<F> = (0..k).map(|_| random_element(&mut rng)).collect();
        let f: Vec<F> = (0..k)
            .map(|j| F::from_u64((j as u64 * 7 + seed) % 3 % 2))
            .collect();
        let c: F = random_element(&mut rng);
        let (ax, ay, af) = (deal(&x, &mut rng), deal(&y, &mut rng), deal(&f, &mut rng));

        let outs = run_mpc3(seed.wrapping_add(k as u64), |mpc| {
            let i = mpc.me().index();
            program(mpc, &x, &ax[i], &ay[i], &af[i], c)
        });
        let [o0, o1, o2] = outs.map(|r| r.unwrap_or_else(|e| panic!("k = {k}: {e}")));
        let o = [&o0, &o1, &o2];
        let add = |g: &dyn Fn(&Out<F>) -> &Vec<Additive<F>>| rec_add(o.map(g));
        let rep = |g: &dyn Fn(&Out<F>) -> &Vec<Replicated<F>>| rec_rep(o.map(g));

        let xy: Vec<F> = x.iter().zip(&y).map(|(&a, &b)| a * b).collect();
        let sel: Vec<F> = (0..k)
            .map(|j| if f[j] == F::ONE { x[j] } else { y[j] })
            .collect();
        let lin: Vec<F> = (0..k).map(|j| x[j] * c - y[j] - x[j] + c).collect();

        assert_eq!(add(&|o| &o.zero), vec![F::ZERO; k], "zero, k = {k}");
        assert_eq!(add(&|o| &o.random_additive).len(), k);
        assert_eq!(rep(&|o| &o.random_replicated).len(), k);
        for d in 0..3 {
            assert_eq!(
                add(&|o| &o.input_additive[d]),
                x,
                "input_additive from P{d}, k = {k}"
            );
            assert_eq!(
                rep(&|o| &o.input_replicated[d]),
                x,
                "input_replicated from P{d}, k = {k}"
            );
        }
        assert_eq!(add(&|o| &o.reshare), x, "reshare, k = {k}");
        assert_eq!(rep(&|o| &o.to_replicated), x, "to_replicated, k = {k}");
        assert_eq!(add(&|o| &o.to_additive), x, "to_additive, k = {k}");
        for (i, p) in o.iter().enumerate() {
            assert_eq!(p.open, x, "open at P{i}, k = {k}");
            assert_eq!(p.open_replicated, x, "open_replicated at P{i}, k = {k}");
            for t in 0..3 {
                let expected = (i == t).then(|| x.clone());
                assert_eq!(p.open_to[t], expected, "open_to(P{t}) at P{i}, k = {k}");
                assert_eq!(
                    p.open_replicated_to[t], expected,
                    "open_replicated_to(P{t}) at P{i}"
                );
            }
        }
        assert_eq!(rep(&|o| &o.mul), xy, "mul, k = {k}");
        let xyx: Vec<F> = xy.iter().zip(&x).map(|(&a, &b)| a * b).collect();
        assert_eq!(rep(&|o| &o.mul_depth2), xyx, "mul depth 2, k = {k}");
        assert_eq!(add(&|o| &o.mul_local), xy, "mul_local, k = {k}");
        assert_eq!(add(&|o| &o.mul_additive), xy, "mul_additive, k = {k}");
        assert_eq!(add(&|o| &o.select), sel, "select, k = {k}");
        assert_eq!(
            rep(&|o| &o.select_replicated),
            sel,
            "select_replicated, k = {k}"
        );
        assert_eq!(add(&|o| &o.select_local), sel, "select_local, k = {k}");
        assert_eq!(add(&|o| &o.linear), lin, "linear, k = {k}");
        assert_eq!(
            rep(&|o| &o.linear_replicated),
            lin,
            "linear replicated, k = {k}"
        );
    }
}

#[test]
fn all_ops_match_plaintext_fp() {
    all_ops::<Fp>(test_seed());
}

#[test]
fn all_ops_match_plaintext_z64() {
    all_ops::<Z64>(test_seed());
}

/// Selecting with flags 0 and 1 on the same inputs, and with public and boundary values.
#[test]
fn select_edge_values() {
    let seed = test_seed();
    let x = [Fp::ZERO, -Fp::ONE, Fp::from_u64(42), -Fp::ONE];
    let y = [-Fp::ONE, Fp::ZERO, Fp::from_u64(42), Fp::from_u64(9)];
    let [a, b, c] = run_mpc3(seed, |mpc| {
        let me = mpc.me();
        let public = |v: &[Fp]| -> Vec<Additive<Fp>> {
            v.iter().map(|&v| Additive::public(v, me)).collect()
        };
        let (sx, sy) = (public(&x), public(&y));
        let ones = public(&[Fp::ONE; 4]);
        let zeros = public(&[Fp::ZERO; 4]);
        let pick_x = mpc.select(&ones, &sx, &sy)?;
        let pick_y = mpc.select(&zeros, &sx, &sy)?;
        let mut both = pick_x;
        both.extend(pick_y);
        mpc.open(&both)
    });
    let expected: Vec<Fp> = x.iter().chain(&y).copied().collect();
    for r in [a, b, c] {
        assert_eq!(r.expect("select runs"), expected);
    }
}
