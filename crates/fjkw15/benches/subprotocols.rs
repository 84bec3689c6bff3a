//! The sub-protocols of FJKW15 §3 at the sizes of one tree of the 2^20 benchmark point
//! (`Params::bench(20)`: τ = 4, w = 32, 4-byte records; OT_4 has d = 11, 480 tuples of 268
//! bits per path, A fields of 2^4 labels of 15 bits). Each sample runs all three roles'
//! computation in one thread, messages handed over in memory and encoded and parsed as on the
//! wire: the CPU cost of one instance, without the network.
//!
//! `fjkw15_access` times whole reads at the 2^12 and 2^20 points, all three roles' computation
//! in one thread.
//!
//! `cargo bench -p doram-fjkw15 --bench subprotocols`; criterion prints the median of each
//! benchmark (the middle value of the "time:" line). Measured medians are in
//! docs/notes/fjkw15.md.
#![allow(clippy::unwrap_used)]

use criterion::{Criterion, criterion_group, criterion_main};
use doram_core::Entropy;
use doram_fjkw15::Params;
use doram_fjkw15::bits::Strings;
use doram_fjkw15::layout::TupleLayout;
use doram_fjkw15::msgs::{WireMessage, receive};
use doram_fjkw15::party::{Role, Roles, setup_in_process};
use doram_fjkw15::plain::{Op, PlainForest};
use doram_fjkw15::sample::permutation;
use doram_fjkw15::shift::{ShiftMap, ShiftParams};
use doram_fjkw15::ss_cot::CotParams;
use doram_fjkw15::ss_iot::IotParams;
use doram_fjkw15::testkit::{access_in_process, deal};
use doram_fjkw15::xot::XotParams;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha12Rng;

/// Fixed seed of every benchmark, for reproducibility.
const SEED: u64 = 0xf1c5_2015;

/// Encodes and parses `msg` as the receiver would.
fn wire<M: WireMessage>(msg: &M, from: Role, shape: &M::Shape) -> M {
    let roles = Roles::default();
    receive::<M>(roles.party(from), &msg.encode(), shape).expect("well-formed")
}

fn bench(c: &mut Criterion) {
    let params = Params::bench(20).expect("a benchmark point");
    let i = 4;
    let layout = TupleLayout::new(&params, i);
    let (n, w) = (params.path_tuples(i), params.w());
    let (mut pc, mut pd, mut pe) = setup_in_process(Roles::default(), Entropy::InsecureSeed(SEED));
    let mut rng = ChaCha12Rng::seed_from_u64(SEED);
    let mut g = c.benchmark_group("fjkw15_2e20_tree4");

    // SS-COT[n] as Access uses it: messages are A fields, keys fb‖N_i.
    let cot = CotParams::new(n, params.a_bits(i), 1 + params.prefix_bits(i) as usize).unwrap();
    let m = Strings::random(n, params.a_bits(i), &mut rng);
    let a: Vec<u128> = (0..n).map(|_| rng.random::<u128>() & 0x1_ffff).collect();
    let mut b: Vec<u128> = a.iter().map(|x| x ^ 1).collect();
    b[n / 3] = a[n / 3];
    g.bench_function("ss_cot", |bench| {
        bench.iter(|| {
            let from_e = wire(&pe.cot_send(&cot, &m, &a).unwrap(), Role::E, &cot);
            let from_d = wire(&pd.cot_help(&cot, &b).unwrap(), Role::D, &cot);
            pc.cot_receive_one(&cot, &from_e, &from_d).unwrap()
        })
    });

    // SS-IOT[2^τ] on the labels of one A field.
    let iot = IotParams::new(params.tau(), params.depth(i + 1) as usize).unwrap();
    let labels = Strings::random(iot.n(), iot.msg_bits(), &mut rng);
    g.bench_function("ss_iot", |bench| {
        bench.iter(|| {
            let from_e = wire(&pe.iot_send(&iot, &labels, 5).unwrap(), Role::E, &iot);
            let from_d = wire(&pd.iot_help(&iot, 9).unwrap(), Role::D, &iot);
            pc.iot_receive(&iot, &from_e, &from_d).unwrap()
        })
    });

    // SS-XOT[n + 2 choose n] as Eviction uses it, on whole tuples.
    let xot = XotParams::new(n + 2, n, layout.bits()).unwrap();
    let (s_c, s_e) = (
        Strings::random(n + 2, layout.bits(), &mut rng),
        Strings::random(n + 2, layout.bits(), &mut rng),
    );
    let idx = permutation(n + 2, &mut rng)[..n].to_vec();
    g.bench_function("ss_xot", |bench| {
        bench.iter(|| {
            let c_to_e = wire(&pc.ss_xot_send(&xot, &s_c).unwrap(), Role::C, &xot);
            let e_to_c = wire(&pe.ss_xot_send(&xot, &s_e).unwrap(), Role::E, &xot);
            let (d_to_e, d_to_c) = pd.ss_xot_index(&xot, &idx).unwrap();
            let (d_to_e, d_to_c) = (wire(&d_to_e, Role::D, &xot), wire(&d_to_c, Role::D, &xot));
            let out_c = pc.ss_xot_finish(&xot, &e_to_c, &d_to_c).unwrap();
            (out_c, pe.ss_xot_finish(&xot, &c_to_e, &d_to_e).unwrap())
        })
    });

    // Shift of the path: buckets back by σ, A fields flipped by ρ.
    let shift = ShiftParams::new(n, layout.bits());
    let map = ShiftMap::rotate_back(n / w, w, 3).with_flip(layout.a_flip(6).expect("i < h"));
    let (x_c, x_e) = (
        Strings::random(n, layout.bits(), &mut rng),
        Strings::random(n, layout.bits(), &mut rng),
    );
    g.bench_function("shift", |bench| {
        bench.iter(|| {
            let pre = wire(&pd.shift_prepare(&shift, &map).unwrap(), Role::D, &shift);
            let (new_c, u) = pc.shift_send(&shift, &x_c).unwrap();
            let u = wire(&u, Role::C, &shift);
            (
                new_c,
                pe.shift_finish(&shift, &map, &x_e, &pre, &u).unwrap(),
            )
        })
    });
    g.finish();
}

/// Whole reads (Access, PostProcess, Eviction with its garbled circuits, write-back) at the
/// benchmark points 2^12 and 2^20, all three roles in one thread
/// (`testkit::access_in_process`).
fn whole_access(c: &mut Criterion) {
    let mut g = c.benchmark_group("fjkw15_access");
    g.sample_size(20);
    for m in [12, 20] {
        let params = Params::bench(m).expect("a benchmark point");
        let mut rng = ChaCha12Rng::seed_from_u64(SEED);
        let items = 1u64 << m;
        let forest = PlainForest::load(params, items, |n| vec![n], &mut rng).expect("loads");
        let (mut fd, mut fe) = deal(&forest, &mut rng);
        let mut parties = setup_in_process(Roles::default(), Entropy::InsecureSeed(SEED));
        g.bench_function(format!("2e{m}"), |bench| {
            bench.iter(|| {
                let addr = rng.random_range(0..items);
                access_in_process(&mut parties, (&mut fd, &mut fe), addr, Op::Read, &mut rng)
                    .expect("reads")
            })
        });
    }
    g.finish();
}

/// The benchmark group (a private module, so the generated function needs no docs).
mod groups {
    use super::*;
    criterion_group!(benches, bench, whole_access);
}
criterion_main!(groups::benches);
