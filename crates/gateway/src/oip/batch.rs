//! Joining requests into one batch request and splitting its answer back.
//!
//! A batch goes to the replica in the form its requests came in: JSON when all of them
//! were JSON (any OIP server takes it), Triton's binary tensor data when any of them
//! used it (inputs in binary, every output asked in binary), since that client's
//! replica speaks the extension. Each request gets its share of every output back in
//! the form it asked for, with its own `id`.

use axum::body::Bytes;
use serde_json::{Map, Value};

use super::message::{self, Message, Tensor, Wanted};
use super::tensor::{self, Data};

/// Request parameters the gateway consumes (scheduling, encoding); the rest go on to
/// the replica, and only requests with the same rest batch together.
const OWN_PARAMS: [&str; 3] = ["priority", "timeout", "binary_data_output"];

fn without(p: &Map<String, Value>, drop: &[&str]) -> Map<String, Value> {
    p.iter()
        .filter(|(k, _)| !drop.contains(&k.as_str()))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect()
}

/// What must be equal for two requests to share a batch: the model version, each
/// input's name, type, shape past the first dimension and parameters, the requested
/// outputs and the other request parameters.
pub fn key(m: &Message, version: Option<&str>) -> String {
    let mut inputs: Vec<Value> = m
        .tensors
        .iter()
        .map(|t| {
            serde_json::json!([
                t.name,
                t.datatype.name(),
                t.shape.get(1..).unwrap_or_default(),
                t.parameters
            ])
        })
        .collect();
    inputs.sort_by_key(|v| v[0].as_str().unwrap_or_default().to_string());
    let outputs = m.outputs.as_ref().map(|w| {
        let mut o: Vec<Value> = w
            .iter()
            .map(|w| serde_json::json!([w.name, without(&w.parameters, &["binary_data"])]))
            .collect();
        o.sort_by_key(|v| v[0].as_str().unwrap_or_default().to_string());
        o
    });
    serde_json::json!([
        version,
        inputs,
        outputs,
        without(&m.parameters, &OWN_PARAMS)
    ])
    .to_string()
}

/// Whether a request wants output `name` in binary (its own `binary_data`, else the
/// request's `binary_data_output`, else JSON).
pub fn wants_binary(m: &Message, name: &str) -> bool {
    let own = m
        .outputs
        .as_ref()
        .and_then(|w| w.iter().find(|w| w.name == name))
        .and_then(|w| w.parameters.get("binary_data"))
        .and_then(Value::as_bool);
    own.or_else(|| {
        m.parameters
            .get("binary_data_output")
            .and_then(Value::as_bool)
    })
    .unwrap_or(false)
}

fn uses_binary(m: &Message) -> bool {
    m.binary
        || m.parameters
            .get("binary_data_output")
            .and_then(Value::as_bool)
            == Some(true)
        || m.outputs
            .iter()
            .flatten()
            .any(|w| w.parameters.get("binary_data").and_then(Value::as_bool) == Some(true))
}

/// Checks that a request's data matches its shapes, so a bad request is refused alone
/// instead of failing the batch it would join.
pub fn check(m: &Message) -> Result<(), String> {
    for t in &m.tensors {
        let want = t
            .shape
            .iter()
            .try_fold(1u64, |acc, &d| {
                u64::try_from(d).ok().and_then(|d| acc.checked_mul(d))
            })
            .ok_or_else(|| format!("input {}: shape {:?} is not a tensor's", t.name, t.shape))?;
        if let Some(d) = &t.data {
            let have =
                tensor::count(t.datatype, d).map_err(|e| format!("input {}: {e}", t.name))?;
            if have as u64 != want {
                return Err(format!(
                    "input {}: shape {:?} holds {want} elements but its data has {have}",
                    t.name, t.shape
                ));
            }
            if let Data::Json(v) = d {
                tensor::to_raw(t.datatype, v).map_err(|e| format!("input {}: {e}", t.name))?;
            }
        }
    }
    Ok(())
}

/// A message's body and, when it has binary data, its JSON's length.
pub type Encoded = (Bytes, Option<usize>);

/// The batch request of `parts` (same key, each with its first dimension in `sizes`).
pub fn join(parts: &[&Message], sizes: &[u64]) -> Result<Encoded, String> {
    let Some(first) = parts.first() else {
        return Err("an empty batch".into());
    };
    let raw = parts.iter().any(|m| uses_binary(m));
    let total: u64 = sizes.iter().sum();
    let mut inputs = Vec::with_capacity(first.tensors.len());
    for t in &first.tensors {
        let mut datas = Vec::with_capacity(parts.len());
        for m in parts {
            let d = m
                .tensors
                .iter()
                .find(|x| x.name == t.name)
                .and_then(|x| x.data.as_ref())
                .ok_or_else(|| format!("input {} missing from a request of the batch", t.name))?;
            datas.push(d);
        }
        let mut shape = t.shape.clone();
        if let Some(d0) = shape.first_mut() {
            *d0 = total as i64;
        }
        inputs.push(Tensor {
            name: t.name.clone(),
            datatype: t.datatype,
            shape,
            parameters: t.parameters.clone(),
            data: Some(tensor::concat(t.datatype, &datas, raw)?),
        });
    }
    let mut parameters = without(&first.parameters, &OWN_PARAMS);
    let outputs = first.outputs.as_ref().map(|w| {
        w.iter()
            .map(|w| {
                let mut p = without(&w.parameters, &["binary_data"]);
                if raw {
                    p.insert("binary_data".into(), Value::Bool(true));
                }
                Wanted {
                    name: w.name.clone(),
                    parameters: p,
                }
            })
            .collect::<Vec<_>>()
    });
    if raw && outputs.is_none() {
        parameters.insert("binary_data_output".into(), Value::Bool(true));
    }
    let batch = Message {
        parameters,
        tensors: inputs,
        outputs,
        binary: raw,
        ..Message::default()
    };
    message::encode(batch, "inputs", &|_| raw)
}

/// The batch's answer split back: for each request its own answer (body and JSON
/// length when binary) or why it cannot have it; or why the answer cannot be split.
pub fn split(
    answer: Message,
    parts: &[&Message],
    sizes: &[u64],
) -> Result<Vec<Result<Encoded, String>>, String> {
    let total: u64 = sizes.iter().sum();
    let mut per: Vec<Vec<Tensor>> = parts.iter().map(|_| Vec::new()).collect();
    for out in answer.tensors {
        let d0 = out.shape.first().copied().unwrap_or(-1);
        if d0 != total as i64 {
            return Err(format!(
                "the replica answered output {} with shape {:?} for a batch of {total}: its \
                 first dimension must be the batch's (is the model's max_batch_size above 0?)",
                out.name, out.shape
            ));
        }
        let rest = out
            .shape
            .get(1..)
            .unwrap_or_default()
            .iter()
            .try_fold(1usize, |a, &d| {
                usize::try_from(d).ok().and_then(|d| a.checked_mul(d))
            })
            .ok_or_else(|| {
                format!(
                    "output {}: shape {:?} is not a tensor's",
                    out.name, out.shape
                )
            })?;
        let counts: Vec<usize> = sizes.iter().map(|&s| s as usize * rest).collect();
        let pieces = match &out.data {
            Some(d) => tensor::split(out.datatype, d, &counts)
                .map_err(|e| format!("output {}: {e}", out.name))?
                .into_iter()
                .map(Some)
                .collect(),
            None => vec![None; parts.len()],
        };
        for ((i, piece), &s) in pieces.into_iter().enumerate().zip(sizes) {
            let mut shape = out.shape.clone();
            shape[0] = s as i64;
            per[i].push(Tensor {
                name: out.name.clone(),
                datatype: out.datatype,
                shape,
                parameters: out.parameters.clone(),
                data: piece,
            });
        }
    }
    let mut answers = Vec::with_capacity(parts.len());
    for (m, tensors) in parts.iter().zip(per) {
        let binary = tensors.iter().any(|t| wants_binary(m, &t.name));
        let one = Message {
            id: m.id.clone(),
            model_name: answer.model_name.clone(),
            model_version: answer.model_version.clone(),
            parameters: answer.parameters.clone(),
            tensors,
            outputs: None,
            binary,
        };
        // One request's output that cannot be encoded as it asked (BYTES that are not
        // UTF-8, asked as JSON) fails that request only.
        answers.push(message::encode(one, "outputs", &|t| {
            wants_binary(m, &t.name)
        }));
    }
    Ok(answers)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn req(v: Value) -> Message {
        message::parse(&Bytes::from(v.to_string()), None, "inputs").unwrap()
    }

    #[test]
    fn json_requests_join_as_json_and_split_back_with_their_ids() {
        let a = req(json!({"id": "a", "inputs": [
            {"name": "x", "datatype": "INT32", "shape": [1, 2], "data": [1, 2]}]}));
        let b = req(json!({"id": "b", "inputs": [
            {"name": "x", "datatype": "INT32", "shape": [2, 2], "data": [[3, 4], [5, 6]]}]}));
        assert_eq!(key(&a, None), key(&b, None));
        let (body, len) = join(&[&a, &b], &[1, 2]).unwrap();
        assert_eq!(len, None);
        let sent = message::parse(&body, None, "inputs").unwrap();
        assert_eq!(sent.tensors[0].shape, vec![3, 2]);
        let answer = message::parse(
            &Bytes::from(
                json!({"model_name": "m", "outputs": [
                    {"name": "y", "datatype": "INT32", "shape": [3], "data": [10, 20, 30]}]})
                .to_string(),
            ),
            None,
            "outputs",
        )
        .unwrap();
        let out = split(answer, &[&a, &b], &[1, 2]).unwrap();
        let b_out: Value = serde_json::from_slice(&out[1].as_ref().unwrap().0).unwrap();
        assert_eq!(b_out["id"], "b");
        assert_eq!(b_out["outputs"][0]["shape"], json!([2]));
        assert_eq!(b_out["outputs"][0]["data"], json!([20, 30]));
    }

    #[test]
    fn different_shapes_or_outputs_do_not_share_a_key() {
        let a = req(
            json!({"inputs": [{"name": "x", "datatype": "FP32", "shape": [1, 2], "data": [1, 2]}]}),
        );
        let b = req(
            json!({"inputs": [{"name": "x", "datatype": "FP32", "shape": [1, 3], "data": [1, 2, 3]}]}),
        );
        let c = req(
            json!({"inputs": [{"name": "x", "datatype": "FP32", "shape": [1, 2], "data": [1, 2]}],
            "outputs": [{"name": "y"}]}),
        );
        let d = req(
            json!({"inputs": [{"name": "x", "datatype": "FP32", "shape": [1, 2], "data": [1, 2]}],
            "parameters": {"priority": 1, "binary_data_output": true}}),
        );
        assert_ne!(key(&a, None), key(&b, None));
        assert_ne!(key(&a, None), key(&c, None));
        assert_eq!(
            key(&a, None),
            key(&d, None),
            "scheduling parameters do not split batches"
        );
        assert_ne!(key(&a, Some("2")), key(&a, None));
        assert!(wants_binary(&d, "y") && !wants_binary(&a, "y"));
    }

    #[test]
    fn bad_data_is_caught_before_batching() {
        let m = req(
            json!({"inputs": [{"name": "x", "datatype": "UINT8", "shape": [1, 2], "data": [1, 300]}]}),
        );
        assert!(check(&m).unwrap_err().contains("UINT8"));
        let m = req(
            json!({"inputs": [{"name": "x", "datatype": "UINT8", "shape": [2, 2], "data": [1]}]}),
        );
        assert!(check(&m).unwrap_err().contains("holds 4 elements"));
    }
}
