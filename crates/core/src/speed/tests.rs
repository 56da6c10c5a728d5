//! The throughput model's resolution order, as transcripts: each line a model and the
//! factor and source that answered.

use std::panic::Location;

use super::*;

/// Resolves every model of `models` for the job and writes `model: factor (source)`.
#[track_caller]
fn check(
    model: &SpeedModel,
    declared: &str,
    learned: Option<(&Learned, &str)>,
    models: &[&str],
    expected: &str,
) {
    let declared = Speedups::parse(declared).unwrap();
    let mut got = String::new();
    for m in models {
        let s = model.resolve(&declared, learned, m);
        got += &format!("{m}: {:.3} ({})\n", s.factor, s.source.name());
    }
    gpusched_expect::check(Location::caller(), "speed", expected, &got);
}

#[test]
fn a_declaration_wins_then_the_defaults_then_one() {
    check(
        &SpeedModel::default(),
        "H100=2.8,A100=1.6",
        None,
        &[
            "H100-80GB",
            "A100-SXM4-80GB",
            "V100",
            "K80",
            "P100-PCIE",
            "MI250",
        ],
        "
        H100-80GB: 2.800 (declared)
        A100-SXM4-80GB: 1.600 (declared)
        V100: 1.000 (default)
        K80: 0.297 (default)
        P100-PCIE: 0.943 (default)
        MI250: 1.000 (unknown)
        ",
    );
}

#[test]
fn the_learned_table_answers_only_with_enough_samples_on_both_types() {
    let mut t = Learned::new();
    for _ in 0..3 {
        t.observe("resnet", "V100-SXM2", 100.0);
    }
    for _ in 0..2 {
        t.observe("resnet", "A100-SXM4", 40.0);
    }
    t.observe("resnet", "K80", 500.0);
    let m = SpeedModel::default();
    // Two A100 samples are not enough (3 needed): the default answers.
    check(
        &m,
        "",
        Some((&t, "resnet")),
        &["A100", "K80"],
        "
        A100: 2.000 (default)
        K80: 0.297 (default)
        ",
    );
    t.observe("resnet", "A100-SXM4", 40.0);
    check(
        &m,
        "",
        Some((&t, "resnet")),
        &["A100", "K80", "V100"],
        "
        A100: 2.500 (learned)
        K80: 0.297 (default)
        V100: 1.000 (learned)
        ",
    );
    // Another key learned nothing; a declaration beats what was learned.
    check(
        &m,
        "",
        Some((&t, "bert")),
        &["A100"],
        "A100: 2.000 (default)\n",
    );
    check(
        &m,
        "A100=3",
        Some((&t, "resnet")),
        &["A100"],
        "A100: 3.000 (declared)\n",
    );
}

#[test]
fn a_declaration_naming_the_reference_is_read_against_it() {
    check(
        &SpeedModel::default(),
        "V100=2,A100=5",
        None,
        &["A100", "V100"],
        "
        A100: 2.500 (declared)
        V100: 1.000 (declared)
        ",
    );
    let k80 = SpeedModel {
        reference: "K80".into(),
        min_samples: 1,
    };
    check(&k80, "", None, &["V100"], "V100: 3.367 (default)\n");
}

#[test]
fn the_longest_declared_prefix_wins_and_defaults_do_not_confuse_a10_and_a100() {
    check(
        &SpeedModel::default(),
        "A100=1.5,A100-80=1.8",
        None,
        &["A100-80GB", "A100-40GB", "A10", "L40S"],
        "
        A100-80GB: 1.800 (declared)
        A100-40GB: 1.500 (declared)
        A10: 1.200 (default)
        L40S: 1.000 (unknown)
        ",
    );
}

#[test]
fn a_bad_declaration_names_the_item_and_the_form() {
    let e = |t: &str| Speedups::parse(t).unwrap_err().to_string();
    assert_eq!(
        e("H100"),
        "speed-up `H100` is not MODEL=FACTOR; write e.g. H100=2.8,A100=1.6"
    );
    assert!(e("H100=fast").contains("`fast` is not a positive number"));
    assert!(e("H100=0").contains("`0` is not a positive number"));
    assert!(e("H100=2,H100=3").contains("named twice"));
    assert_eq!(Speedups::parse("").unwrap(), Speedups::default());
    assert_eq!(
        Speedups::parse("H100=2.8, A100=1.6").unwrap().text(),
        "A100=1.6,H100=2.8"
    );
}

#[test]
fn declared_and_learnt_names_match_models_with_nvmls_vendor_word() {
    let d = Speedups::parse("H100=2.8,V100=1").unwrap();
    assert_eq!(d.get("NVIDIA H100 80GB HBM3"), Some(2.8));
    assert_eq!(d.get("Tesla V100-SXM2-16GB"), Some(1.0));
    assert_eq!(d.get("NVIDIA A100-SXM4-80GB"), None);
    let mut l = Learned::new();
    for _ in 0..3 {
        l.observe("k", "Tesla V100-SXM2-16GB", 100.0);
        l.observe("k", "NVIDIA H100 80GB HBM3", 25.0);
    }
    let f = l.factor("k", "NVIDIA H100 80GB HBM3", "V100", 3).unwrap();
    assert!((f - 4.0).abs() < 1e-9, "{f}");
}
