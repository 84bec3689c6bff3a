//! Helpers shared by the integration tests.
#![allow(dead_code, clippy::unwrap_used)]

use std::sync::Mutex;
use std::time::Duration;

use doram_gkk12::Params;
use doram_gkk12::binsort::{Bins, Layout, Role, Split, place_bins, place_framed, place_split};
use doram_gkk12::driver::{AccessLabels, Client, Gkk12Error, Server};
use doram_gkk12::load::{self, ClientLoad, ServerLoad};
use doram_gkk12::plain::words_for;
use doram_gkk12::shuffle::Shares;
use doram_gkk12::testkit::open_insecurely;
use doram_gkk12::tree::{Slot, path};
use doram_net::Transcript;
use doram_net::{LocalMesh, Session};
use doram_twopc::driver::{softspoken_receiver_setup, softspoken_sender_setup};
use doram_twopc::gc::{Evaluator, Garbler, random_delta};
use doram_twopc::insecure_rng_for_tests;
use doram_twopc::ot_ext::{CotExtReceiver, CotExtSender};
use doram_twopc::softspoken::ChunkBits;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha12Rng;

/// Every tree's slots, opened: `(slot, payload)` each.
pub type Opened = Vec<Vec<(Slot, Vec<u64>)>>;

/// One access as the tests drive it: address, and the data to write (None: read).
pub type Op = (u64, Option<Vec<u64>>);

/// Runs the server (`p0`, party 0) and the client (`p1`) on a two-party in-process mesh.
pub fn run2<A: Send, B: Send>(
    p0: impl FnOnce(Session) -> A + Send,
    p1: impl FnOnce(Session) -> B + Send,
) -> (A, B) {
    let p0 = Mutex::new(Some(p0));
    let p1 = Mutex::new(Some(p1));
    let mesh = LocalMesh::new(2).timeout(Duration::from_secs(60));
    let mut out = doram_net::testkit::run(mesh.build(), |s| {
        if s.me().index() == 0 {
            (Some(p0.lock().unwrap().take().unwrap()(s)), None)
        } else {
            (None, Some(p1.lock().unwrap().take().unwrap()(s)))
        }
    })
    .into_iter();
    (
        out.next().unwrap().0.unwrap(),
        out.next().unwrap().1.unwrap(),
    )
}

/// A random payload of `bits` bits (bits beyond them clear), in words.
pub fn random_words(rng: &mut impl Rng, bits: usize) -> Vec<u64> {
    (0..words_for(bits))
        .map(|k| {
            let used = bits - 64 * k;
            let w: u64 = rng.random();
            if used >= 64 { w } else { w & ((1 << used) - 1) }
        })
        .collect()
}

pub fn bits_of(words: &[u64], n: usize) -> Vec<bool> {
    (0..n)
        .map(|k| (words[k / 64] >> (k % 64)) & 1 == 1)
        .collect()
}

pub fn words_of(bits: &[bool]) -> Vec<u64> {
    bits.chunks(64)
        .map(|c| {
            c.iter()
                .enumerate()
                .fold(0, |a, (k, &b)| a | (u64::from(b) << k))
        })
        .collect()
}

/// The server's side of `n_ops` accesses the client supplies, each result revealed to it.
pub fn serve_ops<S: CotExtSender>(server: &mut Server<S>, s: &mut Session, n_ops: usize) {
    let (abits, bits) = (
        server.params().address_bits(),
        server.params().payload_bits(),
    );
    for _ in 0..n_ops {
        let inputs = server.peer_input(s, abits + 1 + bits).unwrap();
        let labels = AccessLabels {
            addr: inputs[..abits].to_vec(),
            write: inputs[abits],
            data: inputs[abits + 1..].to_vec(),
        };
        let out = server.access(s, &labels).unwrap();
        server.reveal_to_client(s, &out).unwrap();
    }
}

/// The client's side of `ops`; returns what each access read.
pub fn client_ops<R: CotExtReceiver>(
    client: &mut Client<R>,
    s: &mut Session,
    ops: &[Op],
) -> Vec<Vec<u64>> {
    let (abits, bits) = (
        client.params().address_bits(),
        client.params().payload_bits(),
    );
    let mut results = Vec::new();
    for (v, write) in ops {
        let mut input: Vec<bool> = (0..abits).map(|k| (v >> k) & 1 == 1).collect();
        input.push(write.is_some());
        let zeros = vec![0; words_for(bits)];
        input.extend(bits_of(write.as_ref().unwrap_or(&zeros), bits));
        let labels = client.input(s, &input).unwrap();
        let labels = AccessLabels {
            addr: labels[..abits].to_vec(),
            write: labels[abits],
            data: labels[abits + 1..].to_vec(),
        };
        let out = client.access(s, &labels).unwrap();
        results.push(words_of(&client.reveal(s, &out).unwrap()));
    }
    results
}

/// Opened slots of every tree and the base map's values, from both parties' states.
pub fn open_both<S: CotExtSender, R: CotExtReceiver>(
    params: &Params,
    server: &Server<S>,
    client: &Client<R>,
) -> (Opened, Vec<u64>) {
    let opened = open_insecurely(params, server.trees(), client.key_insecurely());
    let w = params.base_entry_bits() as usize;
    let base_bits: Vec<bool> = server
        .base_labels()
        .iter()
        .zip(client.base_labels())
        .map(|(&z, &a)| (z ^ a) & 1 == 1)
        .collect();
    let base = if w == 0 {
        vec![0; params.base_entries() as usize]
    } else {
        base_bits.chunks(w).map(words_of_bits).collect()
    };
    (opened, base)
}

fn words_of_bits(c: &[bool]) -> u64 {
    c.iter()
        .enumerate()
        .fold(0, |a, (k, &b)| a | (u64::from(b) << k))
}

/// Every item of every tree is on the path to its leaf exactly once; the position maps and
/// the base map hold the items' leaves.
pub fn check_invariants(params: &Params, opened: &[Vec<(Slot, Vec<u64>)>], base: &[u64]) {
    for (i, slots) in opened.iter().enumerate() {
        let g = params.tree(i);
        let mut leaf_of = vec![None; g.items as usize];
        for (s, (slot, _)) in slots.iter().enumerate() {
            if !slot.valid {
                continue;
            }
            assert!(
                leaf_of[slot.addr as usize].is_none(),
                "tree {i}: item {} twice",
                slot.addr
            );
            leaf_of[slot.addr as usize] = Some(slot.leaf);
            assert!(
                path(g.height, slot.leaf).any(|b| b == s / g.bucket),
                "tree {i}: off path"
            );
        }
        let leaves: Vec<u64> = leaf_of
            .into_iter()
            .map(|l| l.expect("an item is missing"))
            .collect();
        if i + 1 < params.trees() {
            for (addr, &leaf) in leaves.iter().enumerate() {
                let holder = opened[i + 1]
                    .iter()
                    .find(|(s, _)| s.valid && s.addr == (addr >> 4) as u64)
                    .unwrap();
                assert_eq!(
                    holder.1[addr & 15],
                    leaf,
                    "tree {} entry for item {addr}",
                    i + 1
                );
            }
        } else {
            assert_eq!(base, &leaves[..], "base map");
        }
    }
}

/// What the three parties' load returns: the server's and client's parts, and the three
/// transcripts.
pub type Loaded = (
    Result<ServerLoad, Gkk12Error>,
    Result<ClientLoad, Gkk12Error>,
    Result<(), Gkk12Error>,
    [Transcript; 3],
);

/// Runs the load on a three-party in-process mesh: the server with `data`, the client, and
/// `helper` in the helper's place.
pub fn load3(
    params: Params,
    data: &[Vec<u64>],
    seed: u64,
    helper: impl Fn(&mut Session) -> Result<(), Gkk12Error> + Sync,
) -> Loaded {
    let server = Mutex::new(None);
    let client = Mutex::new(None);
    let help = Mutex::new(None);
    let mesh = LocalMesh::new(3).timeout(Duration::from_secs(20));
    let transcripts = doram_net::testkit::run(mesh.build(), |mut s| {
        s.record_transcript(true);
        match s.me().index() {
            0 => {
                let r = load::serve(&mut s, &params, |v| data[v as usize].clone());
                *server.lock().unwrap() = Some(r);
            }
            1 => {
                let r = load::fetch(&mut s, &params, &mut insecure_rng_for_tests(seed));
                *client.lock().unwrap() = Some(r);
            }
            _ => *help.lock().unwrap() = Some(helper(&mut s)),
        }
        s.take_transcript().unwrap()
    });
    let mut t = transcripts.into_iter();
    (
        server.into_inner().unwrap().unwrap(),
        client.into_inner().unwrap().unwrap(),
        help.into_inner().unwrap().unwrap(),
        [t.next().unwrap(), t.next().unwrap(), t.next().unwrap()],
    )
}

/// One party's side of a bin placement: its shares, its transcript, the rounds it took.
pub type Placed = (Result<Shares, Gkk12Error>, Transcript, u64);

/// Records with bit 0 set (real), `labels[i]` in bits 1.., random bytes after; shared and
/// placed by the two parties in frames of `frame` bytes. The records, then both sides.
pub fn place_records(
    layout: Layout,
    labels: &[u64],
    frame: usize,
    seed: u64,
) -> (Vec<u8>, Placed, Placed) {
    place_records_split(layout, labels, None, frame, seed)
}

/// [`place_records`], then with `split` = `Some((split, bits))` record `i`'s bit `split.bit`
/// set to `bits[i]` and every bin split by it (`place_split`, whose frames are
/// `FRAME_BYTES`: `frame` is then unused).
pub fn place_records_split(
    layout: Layout,
    labels: &[u64],
    split: Option<(Split, &[bool])>,
    frame: usize,
    seed: u64,
) -> (Vec<u8>, Placed, Placed) {
    place_records_to(Dest::Layout(layout, frame), labels, split, seed)
}

/// [`place_records_split`] into bins of any size (`place_bins`, frames of `FRAME_BYTES`).
pub fn place_records_bins(
    bins: Bins,
    labels: &[u64],
    split: Option<(Split, &[bool])>,
    seed: u64,
) -> (Vec<u8>, Placed, Placed) {
    place_records_to(Dest::Bins(bins), labels, split, seed)
}

/// Where the harness places the records: a power-of-two layout with frames of this many
/// bytes (`place_framed` or `place_split`), or bins of any size (`place_bins`).
#[derive(Clone, Copy)]
enum Dest {
    Layout(Layout, usize),
    Bins(Bins),
}

fn place_records_to(
    into: Dest,
    labels: &[u64],
    split: Option<(Split, &[bool])>,
    seed: u64,
) -> (Vec<u8>, Placed, Placed) {
    let layout = match into {
        Dest::Layout(l, _) => l.bins_of(),
        Dest::Bins(b) => b,
    };
    let mut rng = ChaCha12Rng::seed_from_u64(seed);
    let rb = layout.bytes;
    let mut v = vec![0u8; labels.len() * rb];
    for (i, &l) in labels.iter().enumerate() {
        let r = &mut v[i * rb..(i + 1) * rb];
        rng.fill(r);
        let keep = (1u64 << (layout.log_bins + 1)) - 1;
        let mut head = u64::from_le_bytes(r[..8].try_into().unwrap());
        head = (head & !keep) | 1 | (l << 1);
        r[..8].copy_from_slice(&head.to_le_bytes());
        if let Some((sp, bits)) = split.filter(|(sp, _)| sp.bit < 8 * rb) {
            r[sp.bit / 8] &= !(1 << (sp.bit % 8));
            r[sp.bit / 8] |= u8::from(bits[i]) << (sp.bit % 8);
        }
    }
    let split = split.map(|(sp, _)| sp);
    let w: Vec<u8> = (0..v.len()).map(|_| rng.random()).collect();
    let a: Vec<u8> = v.iter().zip(&w).map(|(x, y)| x ^ y).collect();
    let delta = random_delta(&mut insecure_rng_for_tests(seed));
    let (p0, p1) = run2(
        move |mut s: Session| {
            let mut rng = insecure_rng_for_tests(seed + 1);
            let mut send =
                softspoken_sender_setup(&mut s, ChunkBits::default(), delta, &mut rng).unwrap();
            let mut recv =
                softspoken_receiver_setup(&mut s, ChunkBits::default(), &mut rng).unwrap();
            let mut garbler = Garbler::new(delta, 0).unwrap();
            s.record_transcript(true);
            let before = s.rounds();
            let shares = Shares { bytes: rb, data: w };
            let role = Role::Garbler(&mut garbler);
            let to = (into, split);
            let out = place_either(&mut s, role, &mut send, &mut recv, &shares, to, &mut rng);
            let rounds = s.rounds() - before;
            (out, s.take_transcript().unwrap(), rounds)
        },
        move |mut s: Session| {
            let mut rng = insecure_rng_for_tests(seed + 2);
            let mut recv =
                softspoken_receiver_setup(&mut s, ChunkBits::default(), &mut rng).unwrap();
            let mut send = softspoken_sender_setup(
                &mut s,
                ChunkBits::default(),
                random_delta(&mut rng),
                &mut rng,
            )
            .unwrap();
            let mut evaluator = Evaluator::new(0);
            s.record_transcript(true);
            let before = s.rounds();
            let shares = Shares { bytes: rb, data: a };
            let role = Role::Evaluator(&mut evaluator);
            let to = (into, split);
            let out = place_either(&mut s, role, &mut send, &mut recv, &shares, to, &mut rng);
            let rounds = s.rounds() - before;
            (out, s.take_transcript().unwrap(), rounds)
        },
    );
    (v, p0, p1)
}

/// `place_framed` with `frame`, or `place_split` with `split`; `place_bins` into bins.
fn place_either(
    s: &mut Session,
    role: Role<'_>,
    send: &mut impl CotExtSender,
    recv: &mut impl CotExtReceiver,
    shares: &Shares,
    (into, split): (Dest, Option<Split>),
    rng: &mut impl rand::RngCore,
) -> Result<Shares, Gkk12Error> {
    match (into, split) {
        (Dest::Layout(l, frame), None) => {
            place_framed(s, role, send, recv, shares, &l, 0, rng, frame)
        }
        (Dest::Layout(l, _), Some(sp)) => place_split(s, role, send, recv, shares, &l, sp, 0, rng),
        (Dest::Bins(b), sp) => place_bins(s, role, send, recv, shares, &b, sp, 0, rng),
    }
}

/// Every real record of `v` is in its label's bin of the opened `s0 ⊕ s1`, every other slot
/// is an all-zero dummy.
pub fn check_bins(l: &Layout, v: &[u8], labels: &[u64], s0: &Shares, s1: &Shares) {
    check_bins_of(&l.bins_of(), v, labels, s0, s1);
}

/// [`check_bins`] for bins of any size.
pub fn check_bins_of(l: &Bins, v: &[u8], labels: &[u64], s0: &Shares, s1: &Shares) {
    let bytes = l.bytes;
    let open: Vec<u8> = s0.data.iter().zip(&s1.data).map(|(x, y)| x ^ y).collect();
    let z = l.slots;
    assert_eq!(open.len(), l.bins() * z * bytes);
    for b in 0..l.bins() {
        let mut got: Vec<&[u8]> = Vec::new();
        for slot in 0..z {
            let e = &open[(b * z + slot) * bytes..(b * z + slot + 1) * bytes];
            if e[0] & 1 == 1 {
                got.push(e);
            } else {
                assert!(e.iter().all(|&x| x == 0), "a dummy that is not zero");
            }
        }
        let mut want: Vec<&[u8]> = (0..labels.len())
            .filter(|&i| labels[i] == b as u64)
            .map(|i| &v[i * bytes..(i + 1) * bytes])
            .collect();
        got.sort();
        want.sort();
        assert_eq!(got, want, "bin {b} of {}", l.bins());
    }
}

/// A bin layout whose records hold the valid bit at bit 0 and the label from bit 1.
pub fn layout(log_bins: u32, log_slots: u32, bytes: usize) -> Layout {
    Layout {
        log_bins,
        log_slots,
        bytes,
        valid: 0,
        label: 1,
    }
}
