//! End-to-end tests of the live cluster with real processes: `gpusched server`,
//! `gpusched agent` and the CLI on loopback.

mod arrays;
mod auth;
mod bad_input;
mod basics;
mod crash_loop;
mod deps;
mod drain;
mod ended;
mod energy;
mod export;
mod failover;
mod failover_pg;
mod faults;
mod full_disk;
mod gang;
mod history;
mod limits;
mod logs;
mod matrix;
mod new_user;
mod postgres;
mod preempt;
mod prometheus;
mod protocol;
mod queues;
mod resources;
mod retention;
mod sharing;
mod support;
mod telemetry;
mod top;
mod up;
mod upgrade;
mod web;
