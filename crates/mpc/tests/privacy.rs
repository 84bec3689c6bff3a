//! Each party's shares on their own look random: they change from run to run on the same
//! inputs, never equal the shared value, are reproducible from the seeds, and are balanced and
//! distinct even when every shared value is 0.

use doram_core::PartyId;
use doram_field::{Fp, Ring, Z64};
use doram_mpc::testkit::{run_mpc3, test_seed};
use doram_mpc::{Additive, Input, Mpc3, MpcError, deal_additive, random_element};
use rand::SeedableRng;
use rand_chacha::ChaCha12Rng;

const ALL: [PartyId; 3] = [PartyId::P0, PartyId::P1, PartyId::P2];

/// Raw output shares of every share-producing operation at one party (replicated shares
/// contribute both components), on the fixed input shares `x`, `y`, `flag`.
fn outputs<F: Ring>(
    mpc: &mut Mpc3,
    plain: &[F],
    x: &[Additive<F>],
    y: &[Additive<F>],
    flag: &[Additive<F>],
) -> Result<Vec<(&'static str, Vec<F>)>, MpcError> {
    let me = mpc.me();
    let k = x.len();
    let mut out = Vec::new();
    let add = |v: Vec<Additive<F>>| Additive::shares(&v);
    let rep = |v: &[doram_mpc::Replicated<F>]| -> Vec<F> {
        v.iter().flat_map(|r| [r.own(), r.prev()]).collect()
    };
    let input = if me == PartyId::P0 {
        Input::Own(plain)
    } else {
        Input::Peer {
            dealer: PartyId::P0,
            count: k,
        }
    };
    out.push(("input_additive", add(mpc.input_additive(input)?)));
    out.push(("input_replicated", rep(&mpc.input_replicated(input)?)));
    out.push(("reshare", add(mpc.reshare(x))));
    let rx = mpc.to_replicated(x)?;
    let ry = mpc.to_replicated(y)?;
    out.push(("to_replicated", rep(&rx)));
    out.push(("mul", rep(&mpc.mul(&rx, &ry)?)));
    out.push(("mul_local", add(mpc.mul_local(&rx, &ry)?)));
    out.push(("mul_additive", add(mpc.mul_additive(x, y)?)));
    out.push(("select", add(mpc.select(flag, x, y)?)));
    let rf = mpc.to_replicated(flag)?;
    out.push((
        "select_replicated",
        rep(&mpc.select_replicated(&rf, &rx, &ry)?),
    ));
    out.push(("zero", add(mpc.zero(k))));
    Ok(out)
}

type Run<F> = [Vec<(&'static str, Vec<F>)>; 3];

fn run<F: Ring>(
    seed: u64,
    plain: &[F],
    x: &[Vec<Additive<F>>; 3],
    y: &[Vec<Additive<F>>; 3],
    f: &[Vec<Additive<F>>; 3],
) -> Run<F> {
    run_mpc3(seed, |mpc| {
        let i = mpc.me().index();
        outputs(mpc, plain, &x[i], &y[i], &f[i])
    })
    .map(|r| r.expect("run completes"))
}

fn deal<F: Ring>(v: &[F], rng: &mut ChaCha12Rng) -> [Vec<Additive<F>>; 3] {
    let mut out: [Vec<Additive<F>>; 3] = Default::default();
    for &x in v {
        for (o, s) in out.iter_mut().zip(deal_additive(x, rng)) {
            o.push(s);
        }
    }
    out
}

fn fresh_and_reproducible<F: Ring>() {
    let seed = test_seed();
    let k = 16;
    let mut rng = ChaCha12Rng::seed_from_u64(seed);
    let x: Vec<F> = (0..k).map(|_| random_element(&mut rng)).collect();
    let y: Vec<F> = (0..k).map(|_| random_element(&mut rng)).collect();
    let flag: Vec<F> = (0..k).map(|j| F::from_u64(j as u64 % 2)).collect();
    let (ax, ay, af) = (
        deal(&x, &mut rng),
        deal(&y, &mut rng),
        deal(&flag, &mut rng),
    );

    let first = run(seed, &x, &ax, &ay, &af);
    let again = run(seed, &x, &ax, &ay, &af);
    let other = run(seed.wrapping_add(1), &x, &ax, &ay, &af);
    for i in 0..3 {
        assert_eq!(
            first[i], again[i],
            "P{i}: same seeds must give the same shares"
        );
        for ((name, a), (_, b)) in first[i].iter().zip(&other[i]) {
            assert!(!a.is_empty());
            for (j, (sa, sb)) in a.iter().zip(b).enumerate() {
                assert_ne!(sa, sb, "P{i}: {name}[{j}] is the same share in two runs");
            }
        }
        // A share alone is not the value it shares (x for the inputs and conversions).
        for (name, shares) in &first[i] {
            if [
                "input_additive",
                "reshare",
                "to_replicated",
                "input_replicated",
            ]
            .contains(name)
            {
                for (j, s) in shares.iter().enumerate() {
                    let value = x[if name.ends_with("replicated") {
                        j / 2
                    } else {
                        j
                    }];
                    assert_ne!(*s, value, "P{i}: {name}[{j}] equals the shared value");
                }
            }
        }
    }
}

#[test]
fn shares_are_fresh_and_reproducible_fp() {
    fresh_and_reproducible::<Fp>();
}

#[test]
fn shares_are_fresh_and_reproducible_z64() {
    fresh_and_reproducible::<Z64>();
}

/// Shares of 4096 zeros, at each party and for each operation: bits balanced within six
/// standard deviations, no two shares equal.
#[test]
fn shares_of_zeros_look_uniform() {
    let seed = test_seed();
    let k = 4096;
    let zeros = vec![Z64::ZERO; k];
    let at = |me: PartyId| -> Vec<Additive<Z64>> { vec![Additive::public(Z64::ZERO, me); k] };
    let public = ALL.map(at);
    let results = run(seed, &zeros, &public, &public, &public);
    for (i, outs) in results.iter().enumerate() {
        for (name, shares) in outs {
            let bits = 64.0 * shares.len() as f64;
            let ones: u64 = shares.iter().map(|s| u64::from(s.0.count_ones())).sum();
            let sd = (bits / 4.0).sqrt();
            assert!(
                (ones as f64 - bits / 2.0).abs() < 6.0 * sd,
                "P{i}: {name}: {ones} one bits out of {bits}"
            );
            let mut sorted: Vec<u64> = shares.iter().map(|s| s.0).collect();
            sorted.sort_unstable();
            sorted.dedup();
            assert_eq!(sorted.len(), shares.len(), "P{i}: {name}: repeated shares");
        }
    }
}
