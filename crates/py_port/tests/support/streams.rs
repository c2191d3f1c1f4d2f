//! The streams of `tools/numpy_rng/numpy_streams.py`, drawn with py_port, in the same text
//! format. Shared by `examples/numpy_streams.rs` (the full check against NumPy) and
//! `tests/numpy_golden.rs` (the small committed file); the case list must match the Python
//! script's line for line.

use py_port::format::float_hex;
use py_port::random::{Generator, SeedSequence};
use std::io::{self, Write};

/// The seeds of the full check (Python: `SEEDS`).
pub const SEEDS: [u128; 11] = [
    0,
    1,
    42,
    12345,
    (1 << 32) + 5,
    (1 << 63) + 7,
    7,
    2024,
    987_654_321,
    (1 << 32) - 1,
    u64::MAX as u128,
];

const P5: [f64; 5] = [0.1, 0.2, 0.3, 0.25, 0.15];
const P10: [f64; 10] = [0.05, 0.15, 0.1, 0.1, 0.2, 0.05, 0.05, 0.1, 0.15, 0.05];

/// One drawn value, printed as the Python script prints it.
pub enum Value {
    /// An integer, in decimal.
    Int(i128),
    /// A float, with `float.hex()`.
    Float(f64),
    /// A string element of a choice.
    Str(&'static str),
}

impl Value {
    fn text(&self) -> String {
        match self {
            Value::Int(i) => i.to_string(),
            Value::Float(x) => float_hex(*x),
            Value::Str(s) => (*s).to_owned(),
        }
    }
}

fn ints<T: Into<i128>>(v: Vec<T>) -> Vec<Value> {
    v.into_iter().map(|x| Value::Int(x.into())).collect()
}

fn floats(v: Vec<f64>) -> Vec<Value> {
    v.into_iter().map(Value::Float).collect()
}

fn indices(v: Vec<usize>) -> Vec<Value> {
    v.into_iter().map(|x| Value::Int(x as i128)).collect()
}

/// Calls `call` until `n` values are out, dropping the last call's extra values.
fn repeat(n: usize, mut call: impl FnMut() -> Vec<Value>) -> Vec<Value> {
    let mut out = Vec::with_capacity(n);
    while out.len() < n {
        out.extend(call());
    }
    out.truncate(n);
    out
}

type Case = (&'static str, fn(&mut Generator, usize) -> Vec<Value>);

/// The cases, in the Python script's order (its `CASES`).
pub const CASES: &[Case] = &[
    ("random_raw", |g, n| {
        ints((0..n).map(|_| g.random_raw()).collect())
    }),
    ("random", |g, n| floats(g.random_n(n).unwrap())),
    ("integers(0,10)", |g, n| {
        ints(g.integers_n(0, 10, n).unwrap())
    }),
    ("integers(-5,2**40)", |g, n| {
        ints(g.integers_n(-5, 1 << 40, n).unwrap())
    }),
    ("integers(0,2**32)", |g, n| {
        ints(g.integers_n(0, 1 << 32, n).unwrap())
    }),
    ("integers(-2**63,2**63-1)", |g, n| {
        ints(g.integers_n(i64::MIN, i64::MAX, n).unwrap())
    }),
    ("integers(-3,3,endpoint=True)", |g, n| {
        ints(
            (0..n)
                .map(|_| g.integers_inclusive(-3, 3).unwrap())
                .collect(),
        )
    }),
    ("standard_normal", |g, n| {
        floats(g.standard_normal_n(n).unwrap())
    }),
    ("normal(2,3)", |g, n| {
        floats(g.normal_n(2.0, 3.0, n).unwrap())
    }),
    ("standard_exponential", |g, n| {
        floats(g.standard_exponential_n(n).unwrap())
    }),
    ("exponential(0.5)", |g, n| {
        floats(g.exponential_n(0.5, n).unwrap())
    }),
    ("geometric(0.2)", |g, n| {
        ints(g.geometric_n(0.2, n).unwrap())
    }),
    ("geometric(0.7)", |g, n| {
        ints(g.geometric_n(0.7, n).unwrap())
    }),
    ("geometric(0.001)", |g, n| {
        ints(g.geometric_n(0.001, n).unwrap())
    }),
    ("choice(10)", |g, n| {
        indices(g.choice_index(10, n, true, None).unwrap())
    }),
    ("choice(5,p=P5)", |g, n| {
        indices(g.choice_index(5, n, true, Some(&P5)).unwrap())
    }),
    ("choice([x,y,z])", |g, n| {
        let got = g.choice(&["x", "y", "z"], n, true, None).unwrap();
        got.into_iter().map(Value::Str).collect()
    }),
    ("choice(100,50,replace=False)", |g, n| {
        repeat(n, || indices(g.choice_index(100, 50, false, None).unwrap()))
    }),
    ("choice(20000,500,replace=False)", |g, n| {
        repeat(n, || {
            indices(g.choice_index(20000, 500, false, None).unwrap())
        })
    }),
    ("choice(10,5,replace=False,p=P10)", |g, n| {
        repeat(n, || {
            indices(g.choice_index(10, 5, false, Some(&P10)).unwrap())
        })
    }),
    ("permutation(50)", |g, n| {
        repeat(n, || indices(g.permutation(50).unwrap()))
    }),
    ("shuffle(list(range(20)))", |g, n| {
        let mut x: Vec<usize> = (0..20).collect();
        repeat(n, || {
            g.shuffle(&mut x);
            indices(x.clone())
        })
    }),
    ("mixed", |g, n| {
        repeat(n, || {
            vec![
                Value::Int(g.integers(0, 10).unwrap().into()),
                Value::Float(g.random()),
                Value::Int(g.integers(0, 1000).unwrap().into()),
                Value::Float(g.standard_normal()),
            ]
        })
    }),
];

/// zlib's CRC-32 (IEEE, reflected polynomial 0xEDB88320), as Python's `zlib.crc32`.
pub fn crc32(data: &[u8]) -> u32 {
    let mut table = [0u32; 256];
    for (i, entry) in table.iter_mut().enumerate() {
        let mut c = i as u32;
        for _ in 0..8 {
            c = if c & 1 == 1 {
                (c >> 1) ^ 0xEDB8_8320
            } else {
                c >> 1
            };
        }
        *entry = c;
    }
    !data.iter().fold(!0u32, |crc, &b| {
        table[((crc ^ u32::from(b)) & 0xff) as usize] ^ (crc >> 8)
    })
}

/// The Python script's `--digests` lines: one per seed and case, the length and CRC-32 of the
/// block of `draws` value lines.
pub fn digest_lines(seeds: &[u128], draws: usize) -> Vec<String> {
    let mut lines = Vec::new();
    for &seed in seeds {
        for (name, draw) in CASES {
            let mut g = Generator::from_seed_sequence(&SeedSequence::new(seed));
            let block: String = draw(&mut g, draws)
                .iter()
                .map(|v| v.text() + "\n")
                .collect();
            lines.push(format!(
                "seed={seed} case={name} draws={draws} bytes={} crc32={:08x}",
                block.len(),
                crc32(block.as_bytes())
            ));
        }
    }
    lines
}

/// Writes every case for every seed, `draws` values each, as the Python script does.
pub fn write_streams(out: &mut impl Write, seeds: &[u128], draws: usize) -> io::Result<()> {
    for &seed in seeds {
        for (name, draw) in CASES {
            let mut g = Generator::from_seed_sequence(&SeedSequence::new(seed));
            let values = draw(&mut g, draws);
            writeln!(out, "== seed={seed} case={name}")?;
            for v in values {
                writeln!(out, "{}", v.text())?;
            }
        }
    }
    Ok(())
}
