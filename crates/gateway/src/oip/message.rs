//! Inference requests and responses of the Open Inference Protocol, in JSON or with
//! Triton's binary tensor data extension: the body's first
//! `Inference-Header-Content-Length` bytes are the JSON, then the binary data of each
//! tensor whose `parameters.binary_data_size` says how long it is, in tensor order.

use axum::body::Bytes;
use serde_json::{Map, Value};

use super::tensor::{self, Data, DataType};

/// The header naming the JSON part's length (HTTP headers are case-insensitive).
pub const HEADER_LEN: &str = "inference-header-content-length";

#[derive(Clone, Debug, PartialEq)]
pub struct Tensor {
    pub name: String,
    pub datatype: DataType,
    pub shape: Vec<i64>,
    /// Its parameters less `binary_data_size` (that belongs to one encoding).
    pub parameters: Map<String, Value>,
    /// None: the data is elsewhere (Triton's shared memory), not in the body.
    pub data: Option<Data>,
}

/// An output a request asks for.
#[derive(Clone, Debug, PartialEq)]
pub struct Wanted {
    pub name: String,
    pub parameters: Map<String, Value>,
}

/// A request (`tensors` are its inputs) or a response (its outputs).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Message {
    pub id: Option<Value>,
    pub model_name: Option<String>,
    pub model_version: Option<String>,
    pub parameters: Map<String, Value>,
    pub tensors: Vec<Tensor>,
    /// A request's requested outputs; None: every output.
    pub outputs: Option<Vec<Wanted>>,
    /// Whether its body carried binary tensor data.
    pub binary: bool,
}

impl Message {
    /// The first dimension shared by every input, if there is one (what batches).
    pub fn batch_size(&self) -> Option<u64> {
        let first = self.tensors.first()?.shape.first().copied()?;
        let same = self
            .tensors
            .iter()
            .all(|t| t.shape.first() == Some(&first) && t.data.is_some());
        (same && first >= 0).then_some(first as u64)
    }
}

fn field<'a>(o: &'a Map<String, Value>, k: &str) -> Option<&'a Value> {
    o.get(k).filter(|v| !v.is_null())
}

/// Parses a body whose JSON part is `header_len` bytes (None: all of it). `tensors` is
/// `inputs` for a request, `outputs` for a response.
pub fn parse(body: &Bytes, header_len: Option<usize>, tensors: &str) -> Result<Message, String> {
    let json_len = header_len.unwrap_or(body.len());
    if json_len > body.len() {
        return Err(format!(
            "the Inference-Header-Content-Length header says {json_len} bytes of JSON, but \
             the body has only {}",
            body.len()
        ));
    }
    let head: Value = serde_json::from_slice(&body[..json_len])
        .map_err(|e| format!("the JSON of the inference message is malformed: {e}"))?;
    let Value::Object(mut o) = head else {
        return Err("the inference message must be a JSON object".into());
    };
    let mut binary = body.slice(json_len..);
    let mut msg = Message {
        id: o.remove("id").filter(|v| !v.is_null()),
        model_name: field(&o, "model_name")
            .and_then(Value::as_str)
            .map(str::to_string),
        model_version: field(&o, "model_version")
            .and_then(Value::as_str)
            .map(str::to_string),
        parameters: match o.remove("parameters") {
            Some(Value::Object(p)) => p,
            None | Some(Value::Null) => Map::new(),
            Some(_) => return Err("\"parameters\" must be an object".into()),
        },
        binary: header_len.is_some(),
        ..Message::default()
    };
    let list = match o.remove(tensors) {
        Some(Value::Array(a)) => a,
        None | Some(Value::Null) if tensors == "outputs" => Vec::new(),
        _ => return Err(format!("\"{tensors}\" must be an array of tensors")),
    };
    for t in list {
        msg.tensors.push(parse_tensor(t, &mut binary)?);
    }
    if tensors == "inputs" {
        msg.outputs = match o.remove("outputs") {
            None | Some(Value::Null) => None,
            Some(Value::Array(a)) => Some(
                a.into_iter()
                    .map(|w| {
                        let Value::Object(mut w) = w else {
                            return Err("each requested output must be an object".to_string());
                        };
                        let name = match w.remove("name") {
                            Some(Value::String(s)) => s,
                            _ => return Err("a requested output has no \"name\"".to_string()),
                        };
                        let parameters = match w.remove("parameters") {
                            Some(Value::Object(p)) => p,
                            _ => Map::new(),
                        };
                        Ok(Wanted { name, parameters })
                    })
                    .collect::<Result<_, _>>()?,
            ),
            Some(_) => return Err("\"outputs\" must be an array".into()),
        };
    }
    if !binary.is_empty() {
        return Err(format!(
            "{} bytes of binary data follow the JSON that no tensor's binary_data_size \
             accounts for",
            binary.len()
        ));
    }
    Ok(msg)
}

fn parse_tensor(t: Value, binary: &mut Bytes) -> Result<Tensor, String> {
    let Value::Object(mut t) = t else {
        return Err("each tensor must be a JSON object".into());
    };
    let name = match t.remove("name") {
        Some(Value::String(s)) => s,
        _ => return Err("a tensor has no \"name\"".into()),
    };
    let dt_name = t.remove("datatype");
    let datatype = dt_name
        .as_ref()
        .and_then(Value::as_str)
        .and_then(DataType::parse)
        .ok_or_else(|| {
            format!(
                "tensor {name}: datatype {} is not one of BOOL, UINT8-64, INT8-64, FP16, FP32, \
                 FP64, BF16, BYTES",
                dt_name.unwrap_or(Value::Null)
            )
        })?;
    let shape = match t.remove("shape") {
        Some(Value::Array(a)) => a
            .iter()
            .map(|d| d.as_i64())
            .collect::<Option<Vec<_>>>()
            .ok_or_else(|| format!("tensor {name}: \"shape\" must be an array of integers"))?,
        _ => return Err(format!("tensor {name} has no \"shape\"")),
    };
    let mut parameters = match t.remove("parameters") {
        Some(Value::Object(p)) => p,
        _ => Map::new(),
    };
    let data = match parameters.remove("binary_data_size") {
        Some(n) => {
            let n = n
                .as_u64()
                .and_then(|n| usize::try_from(n).ok())
                .ok_or_else(|| format!("tensor {name}: binary_data_size must be a byte count"))?;
            if n > binary.len() {
                return Err(format!(
                    "tensor {name}: binary_data_size is {n} but only {} bytes of binary data \
                     are left in the body",
                    binary.len()
                ));
            }
            Some(Data::Raw(binary.split_to(n)))
        }
        None => t.remove("data").map(|d| {
            let mut flat = Vec::new();
            tensor::flatten(d, &mut flat);
            Data::Json(flat)
        }),
    };
    Ok(Tensor {
        name,
        datatype,
        shape,
        parameters,
        data,
    })
}

/// The JSON of a tensor and its binary data when `binary` (else the data inline).
fn tensor_json(t: Tensor, binary: bool, out: &mut Vec<u8>) -> Result<Value, String> {
    let mut o = Map::new();
    o.insert("name".into(), Value::String(t.name.clone()));
    o.insert("datatype".into(), Value::String(t.datatype.name().into()));
    o.insert("shape".into(), Value::from(t.shape));
    let mut params = t.parameters;
    match t.data {
        Some(d) if binary => {
            let raw = tensor::into_raw(t.datatype, d).map_err(|e| format!("{}: {e}", t.name))?;
            params.insert("binary_data_size".into(), Value::from(raw.len()));
            out.extend_from_slice(&raw);
        }
        Some(d) => {
            let v = tensor::into_json(t.datatype, d).map_err(|e| format!("{}: {e}", t.name))?;
            o.insert("data".into(), Value::Array(v));
        }
        None => {}
    }
    if !params.is_empty() {
        o.insert("parameters".into(), Value::Object(params));
    }
    Ok(Value::Object(o))
}

/// Encodes `m` with its tensors under `key` (`inputs` or `outputs`), each tensor binary
/// where `binary(tensor)`; the body and, when any tensor is binary, the JSON's length
/// (for the `Inference-Header-Content-Length` header).
pub fn encode(
    m: Message,
    key: &str,
    binary: &dyn Fn(&Tensor) -> bool,
) -> Result<(Bytes, Option<usize>), String> {
    let mut o = Map::new();
    if let Some(n) = m.model_name {
        o.insert("model_name".into(), Value::String(n));
    }
    if let Some(v) = m.model_version {
        o.insert("model_version".into(), Value::String(v));
    }
    if let Some(id) = m.id {
        o.insert("id".into(), id);
    }
    if !m.parameters.is_empty() {
        o.insert("parameters".into(), Value::Object(m.parameters));
    }
    let mut bin = Vec::new();
    let mut list = Vec::with_capacity(m.tensors.len());
    for t in m.tensors {
        let b = binary(&t);
        list.push(tensor_json(t, b, &mut bin)?);
    }
    o.insert(key.into(), Value::Array(list));
    if let Some(w) = m.outputs {
        let w: Vec<Value> = w
            .into_iter()
            .map(|w| {
                let mut x = Map::new();
                x.insert("name".into(), Value::String(w.name));
                if !w.parameters.is_empty() {
                    x.insert("parameters".into(), Value::Object(w.parameters));
                }
                Value::Object(x)
            })
            .collect();
        o.insert("outputs".into(), Value::Array(w));
    }
    let mut body = serde_json::to_vec(&Value::Object(o)).map_err(|e| e.to_string())?;
    if bin.is_empty() && !m.binary {
        return Ok((body.into(), None));
    }
    let json_len = body.len();
    body.extend_from_slice(&bin);
    Ok((body.into(), Some(json_len)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_binary_request_parses_and_encodes_back_the_same() {
        let head = json!({
            "id": "7",
            "inputs": [
                {"name": "a", "datatype": "FP32", "shape": [2, 1],
                 "parameters": {"binary_data_size": 8}},
                {"name": "b", "datatype": "INT32", "shape": [2], "data": [[1], [2]]}
            ],
            "outputs": [{"name": "y", "parameters": {"binary_data": true}}]
        });
        let mut body = serde_json::to_vec(&head).unwrap();
        let n = body.len();
        body.extend(1.0f32.to_le_bytes());
        body.extend(2.0f32.to_le_bytes());
        let m = parse(&body.into(), Some(n), "inputs").unwrap();
        assert_eq!(m.batch_size(), Some(2));
        assert_eq!(
            m.tensors[1].data,
            Some(Data::Json(vec![json!(1), json!(2)]))
        );
        assert_eq!(m.outputs.as_ref().unwrap()[0].name, "y");
        let (bytes, len) = encode(m.clone(), "inputs", &|t| t.name == "a").unwrap();
        let again = parse(&bytes, len, "inputs").unwrap();
        assert_eq!(again, m);
    }

    #[test]
    fn malformed_messages_say_what_is_wrong() {
        let e = |s: &str, h| parse(&Bytes::from(s.to_string()), h, "inputs").unwrap_err();
        assert!(e("[]", None).contains("JSON object"));
        assert!(e("{", None).contains("malformed"));
        assert!(e(
            r#"{"inputs":[{"name":"a","datatype":"X","shape":[1]}]}"#,
            None
        )
        .contains("datatype"));
        assert!(e(r#"{"inputs":[{"name":"a","datatype":"FP32"}]}"#, None).contains("shape"));
        assert!(e(r#"{"inputs":[]}"#, Some(99)).contains("only"));
        assert!(e(
            r#"{"inputs":[{"name":"a","datatype":"FP32","shape":[1],"parameters":{"binary_data_size":4}}]}"#,
            None
        )
        .contains("binary_data_size is 4"));
    }
}
