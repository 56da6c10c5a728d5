//! The Open Inference Protocol (KServe v2, Triton's HTTP/REST) side of the gateway.

pub mod batch;
pub mod batcher;
pub mod infer;
pub mod message;
pub mod queue;
pub mod routes;
pub mod tensor;
