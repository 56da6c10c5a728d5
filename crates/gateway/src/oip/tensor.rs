//! Tensor data in the two forms the Open Inference Protocol carries it: JSON (a flat or
//! nested array of numbers, booleans or strings) and Triton's binary tensor data (raw
//! little-endian elements, row-major; a BYTES element is a 4-byte little-endian length
//! then its bytes). Either converts to the other, and splits or joins along the first
//! dimension, which is what batching needs.

use axum::body::Bytes;
use serde_json::{Number, Value};

#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum DataType {
    Bool,
    U8,
    U16,
    U32,
    U64,
    I8,
    I16,
    I32,
    I64,
    F16,
    F32,
    F64,
    Bf16,
    Bytes,
}

const NAMES: [(DataType, &str); 14] = [
    (DataType::Bool, "BOOL"),
    (DataType::U8, "UINT8"),
    (DataType::U16, "UINT16"),
    (DataType::U32, "UINT32"),
    (DataType::U64, "UINT64"),
    (DataType::I8, "INT8"),
    (DataType::I16, "INT16"),
    (DataType::I32, "INT32"),
    (DataType::I64, "INT64"),
    (DataType::F16, "FP16"),
    (DataType::F32, "FP32"),
    (DataType::F64, "FP64"),
    (DataType::Bf16, "BF16"),
    (DataType::Bytes, "BYTES"),
];

impl DataType {
    pub fn parse(s: &str) -> Option<Self> {
        NAMES.iter().find(|(_, n)| *n == s).map(|(d, _)| *d)
    }

    pub fn name(self) -> &'static str {
        NAMES
            .iter()
            .find(|(d, _)| *d == self)
            .map_or("BYTES", |(_, n)| n)
    }

    /// Bytes per element; None for BYTES (variable).
    pub fn size(self) -> Option<usize> {
        use DataType::*;
        Some(match self {
            Bool | U8 | I8 => 1,
            U16 | I16 | F16 | Bf16 => 2,
            U32 | I32 | F32 => 4,
            U64 | I64 | F64 => 8,
            Bytes => return None,
        })
    }
}

/// A tensor's elements, flat, in one of the two forms.
#[derive(Clone, Debug, PartialEq)]
pub enum Data {
    Json(Vec<Value>),
    Raw(Bytes),
}

/// A JSON `data` array, nested or flat, as its elements in row-major order.
pub fn flatten(v: Value, out: &mut Vec<Value>) {
    match v {
        Value::Array(a) => {
            for x in a {
                flatten(x, out);
            }
        }
        x => out.push(x),
    }
}

/// Elements in the data.
pub fn count(dt: DataType, d: &Data) -> Result<usize, String> {
    match d {
        Data::Json(v) => Ok(v.len()),
        Data::Raw(b) => match dt.size() {
            Some(s) => {
                if !b.len().is_multiple_of(s) {
                    return Err(format!(
                        "{} bytes of binary data are not a whole number of {} elements",
                        b.len(),
                        dt.name()
                    ));
                }
                Ok(b.len() / s)
            }
            None => bytes_offsets(b).map(|o| o.len() - 1),
        },
    }
}

/// The offsets at which each BYTES element starts, and the end.
fn bytes_offsets(b: &[u8]) -> Result<Vec<usize>, String> {
    let mut out = vec![0];
    let mut at = 0;
    while at < b.len() {
        let Some(len) = b.get(at..at + 4) else {
            return Err("BYTES binary data ends inside an element's 4-byte length".into());
        };
        let len = u32::from_le_bytes([len[0], len[1], len[2], len[3]]) as usize;
        at = at
            .checked_add(4 + len)
            .filter(|&e| e <= b.len())
            .ok_or("a BYTES element's length runs past the end of its binary data")?;
        out.push(at);
    }
    Ok(out)
}

/// The data split into consecutive runs of `counts` elements (the requests of a batch).
pub fn split(dt: DataType, d: &Data, counts: &[usize]) -> Result<Vec<Data>, String> {
    let total: usize = counts.iter().sum();
    let have = count(dt, d)?;
    if have != total {
        return Err(format!(
            "an output has {have} elements where its shape says {total}"
        ));
    }
    let mut out = Vec::with_capacity(counts.len());
    match d {
        Data::Json(v) => {
            let mut at = 0;
            for &c in counts {
                out.push(Data::Json(v[at..at + c].to_vec()));
                at += c;
            }
        }
        Data::Raw(b) => {
            let offsets = match dt.size() {
                Some(s) => (0..=have).map(|i| i * s).collect(),
                None => bytes_offsets(b)?,
            };
            let mut at = 0;
            for &c in counts {
                out.push(Data::Raw(b.slice(offsets[at]..offsets[at + c])));
                at += c;
            }
        }
    }
    Ok(out)
}

/// Parts joined in order, as raw bytes or JSON.
pub fn concat(dt: DataType, parts: &[&Data], raw: bool) -> Result<Data, String> {
    if raw {
        let mut out = Vec::new();
        for p in parts {
            match p {
                Data::Raw(b) => out.extend_from_slice(b),
                Data::Json(v) => out.extend_from_slice(&to_raw(dt, v)?),
            }
        }
        Ok(Data::Raw(out.into()))
    } else {
        let mut out = Vec::new();
        for p in parts {
            match p {
                Data::Json(v) => out.extend(v.iter().cloned()),
                Data::Raw(b) => out.extend(to_json(dt, b)?),
            }
        }
        Ok(Data::Json(out))
    }
}

/// The data as raw bytes.
pub fn into_raw(dt: DataType, d: Data) -> Result<Bytes, String> {
    match d {
        Data::Raw(b) => Ok(b),
        Data::Json(v) => to_raw(dt, &v).map(Bytes::from),
    }
}

/// The data as JSON elements.
pub fn into_json(dt: DataType, d: Data) -> Result<Vec<Value>, String> {
    match d {
        Data::Json(v) => Ok(v),
        Data::Raw(b) => to_json(dt, &b),
    }
}

fn int<T: TryFrom<i64> + TryFrom<u64>>(v: &Value, dt: DataType) -> Result<T, String> {
    let bad = || format!("{v} is not a {} value", dt.name());
    if let Some(i) = v.as_i64() {
        return T::try_from(i).map_err(|_| bad());
    }
    if let Some(u) = v.as_u64() {
        return T::try_from(u).map_err(|_| bad());
    }
    Err(bad())
}

fn float(v: &Value, dt: DataType) -> Result<f64, String> {
    v.as_f64()
        .ok_or_else(|| format!("{v} is not a {} value", dt.name()))
}

/// JSON elements as raw little-endian bytes.
pub fn to_raw(dt: DataType, v: &[Value]) -> Result<Vec<u8>, String> {
    use DataType::*;
    let mut out = Vec::with_capacity(v.len() * dt.size().unwrap_or(8));
    for x in v {
        match dt {
            Bool => out.push(
                x.as_bool()
                    .ok_or_else(|| format!("{x} is not a BOOL value (true or false)"))?
                    as u8,
            ),
            U8 => out.push(int::<u8>(x, dt)?),
            I8 => out.extend(int::<i8>(x, dt)?.to_le_bytes()),
            U16 => out.extend(int::<u16>(x, dt)?.to_le_bytes()),
            I16 => out.extend(int::<i16>(x, dt)?.to_le_bytes()),
            U32 => out.extend(int::<u32>(x, dt)?.to_le_bytes()),
            I32 => out.extend(int::<i32>(x, dt)?.to_le_bytes()),
            U64 => out.extend(int::<u64>(x, dt)?.to_le_bytes()),
            I64 => out.extend(int::<i64>(x, dt)?.to_le_bytes()),
            F16 => out.extend(f32_to_f16(float(x, dt)? as f32).to_le_bytes()),
            Bf16 => out.extend(f32_to_bf16(float(x, dt)? as f32).to_le_bytes()),
            F32 => out.extend((float(x, dt)? as f32).to_le_bytes()),
            F64 => out.extend(float(x, dt)?.to_le_bytes()),
            Bytes => {
                let s = x
                    .as_str()
                    .ok_or_else(|| format!("{x} is not a BYTES value (a string)"))?;
                let len =
                    u32::try_from(s.len()).map_err(|_| "a BYTES element over 4 GiB".to_string())?;
                out.extend(len.to_le_bytes());
                out.extend(s.as_bytes());
            }
        }
    }
    Ok(out)
}

fn num(f: f64) -> Value {
    // JSON has no NaN or infinity; Triton's JSON answers cannot carry them either.
    Number::from_f64(f).map_or(Value::Null, Value::Number)
}

/// Raw little-endian bytes as JSON elements. A BYTES element that is not UTF-8 is
/// refused: JSON cannot carry it (ask for the output in binary).
pub fn to_json(dt: DataType, b: &[u8]) -> Result<Vec<Value>, String> {
    use DataType::*;
    let mut out = Vec::with_capacity(b.len() / dt.size().unwrap_or(8));
    let Some(size) = dt.size() else {
        let offs = bytes_offsets(b)?;
        for w in offs.windows(2) {
            let s = std::str::from_utf8(&b[w[0] + 4..w[1]]).map_err(|_| {
                "a BYTES element is not UTF-8, which JSON cannot carry; ask for the output \
                 as binary data (parameters.binary_data = true)"
                    .to_string()
            })?;
            out.push(Value::String(s.to_string()));
        }
        return Ok(out);
    };
    if !b.len().is_multiple_of(size) {
        return Err(format!(
            "{} bytes of binary data are not a whole number of {} elements",
            b.len(),
            dt.name()
        ));
    }
    for c in b.chunks_exact(size) {
        let mut a = [0u8; 8];
        a[..size].copy_from_slice(c);
        out.push(match dt {
            Bool => Value::Bool(c[0] != 0),
            U8 => Value::from(c[0]),
            I8 => Value::from(c[0] as i8),
            U16 => Value::from(u16::from_le_bytes([a[0], a[1]])),
            I16 => Value::from(i16::from_le_bytes([a[0], a[1]])),
            U32 => Value::from(u32::from_le_bytes([a[0], a[1], a[2], a[3]])),
            I32 => Value::from(i32::from_le_bytes([a[0], a[1], a[2], a[3]])),
            U64 => Value::from(u64::from_le_bytes(a)),
            I64 => Value::from(i64::from_le_bytes(a)),
            F16 => num(f16_to_f32(u16::from_le_bytes([a[0], a[1]])) as f64),
            Bf16 => num(f32::from_bits((u16::from_le_bytes([a[0], a[1]]) as u32) << 16) as f64),
            F32 => num(f32::from_le_bytes([a[0], a[1], a[2], a[3]]) as f64),
            F64 => num(f64::from_le_bytes(a)),
            Bytes => Value::Null,
        });
    }
    Ok(out)
}

/// IEEE half precision, rounded to nearest even.
fn f32_to_f16(x: f32) -> u16 {
    let b = x.to_bits();
    let sign = ((b >> 16) & 0x8000) as u16;
    let exp = ((b >> 23) & 0xff) as i32;
    let man = b & 0x7f_ffff;
    if exp == 0xff {
        return sign | 0x7c00 | if man != 0 { 0x200 } else { 0 };
    }
    let e = exp - 127 + 15;
    if e >= 0x1f {
        return sign | 0x7c00;
    }
    let round = |half: u32, rem: u32, mid: u32| {
        if rem > mid || (rem == mid && half & 1 == 1) {
            half + 1
        } else {
            half
        }
    };
    if e <= 0 {
        if e < -10 {
            return sign;
        }
        let m = man | 0x80_0000;
        let shift = (14 - e) as u32;
        let r = round(m >> shift, m & ((1 << shift) - 1), 1 << (shift - 1));
        return sign | r as u16;
    }
    let half = ((e as u32) << 10) | (man >> 13);
    sign | round(half, man & 0x1fff, 0x1000) as u16
}

fn f16_to_f32(h: u16) -> f32 {
    let neg = h & 0x8000 != 0;
    let exp = ((h >> 10) & 0x1f) as u32;
    let man = (h & 0x3ff) as u32;
    let v = match exp {
        0 => man as f32 * (2f32).powi(-24),
        0x1f => f32::from_bits(0x7f80_0000 | (man << 13)),
        _ => f32::from_bits(((exp + 112) << 23) | (man << 13)),
    };
    if neg {
        -v
    } else {
        v
    }
}

/// bfloat16, rounded to nearest even.
fn f32_to_bf16(x: f32) -> u16 {
    let b = x.to_bits();
    if x.is_nan() {
        return ((b >> 16) as u16) | 0x40;
    }
    (b.wrapping_add(0x7fff + ((b >> 16) & 1)) >> 16) as u16
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn every_type_goes_to_raw_and_back() {
        let cases = [
            ("BOOL", json!([true, false])),
            ("UINT8", json!([0, 255])),
            ("INT8", json!([-128, 127])),
            ("UINT16", json!([65535, 1])),
            ("INT16", json!([-32768, 5])),
            ("UINT32", json!([4294967295u64, 2])),
            ("INT32", json!([-7, 7])),
            ("UINT64", json!([u64::MAX, 0])),
            ("INT64", json!([i64::MIN, 3])),
            ("FP16", json!([1.5, -0.25, 65504.0, 0.0])),
            ("BF16", json!([1.5, -2.0])),
            ("FP32", json!([1.25, -3.5])),
            ("FP64", json!([0.1, 1e300])),
            ("BYTES", json!(["", "héllo", "x"])),
        ];
        for (name, v) in cases {
            let dt = DataType::parse(name).unwrap();
            assert_eq!(dt.name(), name);
            let Value::Array(elems) = v else { panic!() };
            let raw = to_raw(dt, &elems).unwrap();
            assert_eq!(
                count(dt, &Data::Raw(raw.clone().into())).unwrap(),
                elems.len()
            );
            assert_eq!(to_json(dt, &raw).unwrap(), elems, "{name}");
        }
    }

    #[test]
    fn out_of_range_and_wrong_kinds_are_named() {
        assert!(to_raw(DataType::U8, &[json!(256)])
            .unwrap_err()
            .contains("UINT8"));
        assert!(to_raw(DataType::I32, &[json!(1.5)])
            .unwrap_err()
            .contains("INT32"));
        assert!(to_raw(DataType::Bytes, &[json!(1)])
            .unwrap_err()
            .contains("string"));
        assert!(count(DataType::F32, &Data::Raw(vec![0u8; 5].into())).is_err());
        assert!(count(DataType::Bytes, &Data::Raw(vec![9u8, 0, 0, 0, 1].into())).is_err());
        assert!(to_json(DataType::Bytes, &[1, 0, 0, 0, 0xff])
            .unwrap_err()
            .contains("binary"));
    }

    #[test]
    fn split_and_concat_are_inverse_in_both_forms() {
        let strings = json!(["a", "bb", "", "dddd", "e"]);
        let Value::Array(elems) = strings else {
            panic!()
        };
        let raw = Data::Raw(to_raw(DataType::Bytes, &elems).unwrap().into());
        let parts = split(DataType::Bytes, &raw, &[2, 0, 3]).unwrap();
        assert_eq!(
            into_json(DataType::Bytes, parts[2].clone()).unwrap(),
            vec![json!(""), json!("dddd"), json!("e")]
        );
        let refs: Vec<&Data> = parts.iter().collect();
        assert_eq!(concat(DataType::Bytes, &refs, true).unwrap(), raw);
        assert_eq!(
            concat(DataType::Bytes, &refs, false).unwrap(),
            Data::Json(elems)
        );
        let f = Data::Json(vec![json!(1.0), json!(2.0), json!(3.0)]);
        let p = split(DataType::F32, &f, &[1, 2]).unwrap();
        assert_eq!(p[1], Data::Json(vec![json!(2.0), json!(3.0)]));
        assert!(split(DataType::F32, &f, &[1, 1]).is_err());
    }

    #[test]
    fn half_precision_rounds_and_keeps_specials() {
        assert_eq!(f32_to_f16(1.0), 0x3c00);
        assert_eq!(f32_to_f16(1e6), 0x7c00);
        assert_eq!(f32_to_f16(5.960_464_5e-8), 0x0001);
        assert_eq!(f16_to_f32(0x0001), 5.960_464_5e-8);
        assert!(f16_to_f32(f32_to_f16(f32::NAN)).is_nan());
        assert_eq!(f32_to_bf16(1.0), 0x3f80);
    }
}
