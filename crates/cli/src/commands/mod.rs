pub mod simulate;
