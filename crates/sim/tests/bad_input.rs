//! Bad traces get an error naming the file, the line and the field; never a panic.

use gpusched_core::{Cluster, PolicyConfig, PolicyKind};
use gpusched_sim::trace::{self, Format, TraceError};
use gpusched_sim::{simulate, SimError, SimOptions};

fn err(text: &str) -> String {
    trace::parse("t.csv", text, None).unwrap_err().to_string()
}

#[test]
fn a_malformed_muri_line_names_line_and_field() {
    let text = "job_id,num_gpu,submit_time,iterations,model_name,batch_size,duration,interval,iteration_time,resource_time_0,resource_time_1,resource_time_2,priority\n\
                0,4,0,100,resnet18,128,1000,1,886,1,1,1,0\n\
                1,four,0,100,resnet18,128,1000,1,886,1,1,1,0\n";
    let e = err(text);
    assert!(e.starts_with("t.csv:3: field `num_gpu`"), "{e}");
    assert!(e.contains("`four` is not a whole number of GPUs"), "{e}");
}

#[test]
fn a_short_line_says_how_many_fields_were_expected() {
    let e = err("submit,gpus,duration\n0,1,10\n5,2\n");
    assert!(
        e.starts_with("t.csv:3:") && e.contains("expected 3 fields"),
        "{e}"
    );
}

#[test]
fn negative_and_zero_values_are_refused() {
    let e = err("submit,gpus,duration\n-5,1,10\n");
    assert!(
        e.contains("t.csv:2: field `submit`") && e.contains("at least 0"),
        "{e}"
    );
    let e = err("submit,gpus,duration\n5,0,10\n");
    assert!(
        e.contains("field `gpus`") && e.contains("at least 1 GPU"),
        "{e}"
    );
    let e = err("submit,gpus,duration\n5,1,0\n");
    assert!(e.contains("field `duration`"), "{e}");
}

#[test]
fn philly_dates_must_be_dates() {
    let e = err("timestamp,duration,num_gpus,gpu_time,cluster\n2017-10-09 07:01:55,66.0,1,66.0,a\nyesterday,1.0,1,1.0,b\n");
    assert!(
        e.starts_with("t.csv:3: field `timestamp`") && e.contains("2017-10-09"),
        "{e}"
    );
}

#[test]
fn jsonl_refuses_unknown_keys_and_bad_json() {
    let e = err("{\"submit\":0,\"gpus\":1,\"duration\":5}\n{\"submit\":0,\"gpus\":1,\"duration\":5,\"gpu\":2}\n");
    assert!(
        e.starts_with("t.csv:2:") && e.contains("unknown field `gpu`"),
        "{e}"
    );
    let e = err("{\"submit\":0,\"gpus\":1,\"duration\":5}\n{\"submit\":0,\n");
    assert!(e.starts_with("t.csv:2:"), "{e}");
}

#[test]
fn unknown_formats_are_named() {
    let e = err("a,b,c\n1,2,3\n");
    assert!(
        e.contains("cannot tell the trace format") && e.contains("--format"),
        "{e}"
    );
    let e = Format::parse("slurm").unwrap_err().to_string();
    assert!(
        e.contains("`slurm`") && e.contains("muri, philly, gpusched"),
        "{e}"
    );
    assert!(matches!(
        trace::parse("t.csv", "\n\n", None),
        Err(TraceError::Empty { .. })
    ));
    assert!(matches!(
        trace::parse("t.csv", "submit,gpus,duration\n", None),
        Err(TraceError::Empty { .. })
    ));
}

#[test]
fn a_job_larger_than_the_cluster_is_refused_with_its_line() {
    let w = trace::parse("big.csv", "submit,gpus,duration\n0,8,10\n1,65,10\n", None).unwrap();
    let cluster = Cluster::parse_shape("8x8", "V100").unwrap();
    let e = simulate(
        &w,
        &cluster,
        &SimOptions::new(PolicyConfig::new(PolicyKind::Fifo)),
        &mut |_, _| {},
    )
    .unwrap_err();
    assert!(matches!(e, SimError::NeverFits { line: 3, .. }), "{e}");
    let msg = e.to_string();
    assert!(
        msg.starts_with("big.csv:3: job 1 asks for 65 GPUs") && msg.contains("at most 64"),
        "{msg}"
    );
}

#[test]
fn a_job_larger_than_its_queues_max_is_an_input_error_naming_job_and_queue() {
    let w = trace::parse(
        "q.csv",
        "submit,gpus,duration,queue\n0,1,10,batch\n1,4,10,batch\n",
        None,
    )
    .unwrap();
    let cluster = Cluster::parse_shape("1x8", "V100").unwrap();
    let mut opts = SimOptions::new(PolicyConfig::new(PolicyKind::Fifo));
    let batch = w.queues.iter().position(|q| q == "batch").unwrap();
    opts.queue_limits
        .insert(gpusched_core::QueueId(batch as u32), 2);
    let e = simulate(&w, &cluster, &opts, &mut |_, _| {}).unwrap_err();
    assert!(matches!(e, SimError::OverQueueMax { line: 3, .. }), "{e}");
    let msg = e.to_string();
    assert!(
        msg.starts_with(
            "q.csv:3: job 1 asks for 4 GPU(s) but its queue `batch` may hold at most 2"
        ) && !msg.contains("please report"),
        "{msg}"
    );
}

#[test]
fn a_missing_file_is_named() {
    let e = trace::read(std::path::Path::new("/nonexistent/trace.csv"), None)
        .unwrap_err()
        .to_string();
    assert!(
        e.starts_with("/nonexistent/trace.csv: cannot read the trace"),
        "{e}"
    );
}

/// Finite factors whose product is not a run time (an invariant the trace fuzz target asserts).
#[test]
fn a_muri_run_time_that_overflows_or_vanishes_is_refused() {
    for (iters, ms) in [("1e300", "1e300"), ("1e-300", "1e-300")] {
        let e = err(&format!(
            "job_id,num_gpu,submit_time,iterations,iteration_time\n0,1,0,{iters},{ms}\n"
        ));
        assert!(
            e.starts_with("t.csv:2: field `iterations`") && e.contains("finite time above 0"),
            "{e}"
        );
    }
}
