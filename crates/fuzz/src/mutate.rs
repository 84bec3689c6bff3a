//! Byte-level mutations of an input.

use rand::Rng;

/// Values that sit on the edges of ranges a decoder checks.
const BYTES: [u8; 8] = [0, 1, 0x7f, 0x80, 0xfe, 0xff, b'\n', b'"'];

/// 32-bit values for length and count fields.
fn u32_value(rng: &mut impl Rng, len: usize) -> u32 {
    let len = len as u32;
    match rng.random_range(0..8) {
        0 => 0,
        1 => 1,
        2 => len.wrapping_sub(1),
        3 => len.wrapping_add(1),
        4 => u32::MAX,
        5 => 1 << 31,
        6 => 1 << rng.random_range(0..32),
        _ => rng.random(),
    }
}

/// `base` with one to four random edits; `other` is a second input to splice from.
pub fn mutate(base: &[u8], other: &[u8], rng: &mut impl Rng) -> Vec<u8> {
    let mut v = base.to_vec();
    for _ in 0..rng.random_range(1..=4) {
        edit(&mut v, other, rng);
    }
    v
}

fn edit(v: &mut Vec<u8>, other: &[u8], rng: &mut impl Rng) {
    let n = v.len();
    match rng.random_range(0..9) {
        0 if n > 0 => {
            let i = rng.random_range(0..n);
            v[i] ^= 1 << rng.random_range(0..8);
        }
        1 if n > 0 => {
            let i = rng.random_range(0..n);
            v[i] = BYTES[rng.random_range(0..BYTES.len())];
        }
        2 if n >= 4 => {
            let i = rng.random_range(0..=n - 4);
            v[i..i + 4].copy_from_slice(&u32_value(rng, n).to_le_bytes());
        }
        3 => {
            let i = rng.random_range(0..=n);
            let k = rng.random_range(1..=16);
            let bytes: Vec<u8> = (0..k).map(|_| rng.random()).collect();
            v.splice(i..i, bytes);
        }
        4 if n > 0 => {
            let i = rng.random_range(0..n);
            let k = rng.random_range(1..=(n - i).min(64));
            v.drain(i..i + k);
        }
        5 if n > 0 => {
            let i = rng.random_range(0..n);
            let k = rng.random_range(1..=(n - i).min(64));
            let dup = v[i..i + k].to_vec();
            v.splice(i..i, dup);
        }
        6 if n > 0 => v.truncate(rng.random_range(0..n)),
        7 if !other.is_empty() => {
            let i = rng.random_range(0..=n);
            let j = rng.random_range(0..other.len());
            v.truncate(i);
            v.extend_from_slice(&other[j..]);
        }
        _ => {
            let i = rng.random_range(0..=n);
            v.insert(i, BYTES[rng.random_range(0..BYTES.len())]);
        }
    }
}
