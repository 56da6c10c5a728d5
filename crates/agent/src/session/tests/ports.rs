//! `MASTER_PORT` reservations for a gang whose first part runs here, and what the agent
//! registers with for gangs (its address, its place, how its GPUs are linked).

use super::Check::*;
use super::Cond::*;
use super::Order::*;
use super::Step::*;
use super::{run_with, Node};

#[test]
fn a_gangs_first_part_reserves_its_port_holds_it_and_lets_go_at_start() {
    run_with(
        "gang ports",
        Node {
            switch: Some("s1"),
            pcie: true,
            ..Node::default()
        },
        vec![
            Start,
            Want("a", vec![Reserve(7), Reserve(8)]),
            Until(vec![Port(7), Port(8)]),
            See(PortHeld(7)),
            See(PortHeld(8)),
            // The order repeated: the same port, never another.
            Want("a", vec![Reserve(7), Reserve(8)]),
            Until(vec![Polls("a", 3)]),
            See(PortHeld(7)),
            // The gang is launched (8 was given up by the server): 7's port is let go
            // just before its process starts, 8's because it is no longer asked for.
            Want("a", vec![Gang(7, "echo $MASTER_PORT; sleep 30")]),
            Until(vec![Started(7), PortFree(7), PortFree(8)]),
            Stop,
        ],
        "
            the agent starts
            a wants: reserve a port for 7, reserve a port for 8
            until 7#1's port, 8#1's port
              a registers n0 (i1): 2 GPUs A100-SXM4-80GB, advertises 127.0.0.1, switch s1, link 0-1 PcieSwitch; runs -; reports -
              job 7#1: port p1
              job 8#1: port p2
            port p1 of 7#1: held
            port p2 of 8#1: held
            a wants: reserve a port for 7, reserve a port for 8
            until a answers 3 more polls
            port p1 of 7#1: held
            a wants: run 7 as a gang's first part `echo $MASTER_PORT; sleep 30`
            until 7#1 started, 7#1's port free, 8#1's port free
              job 7#1: started
            the agent stops
              job 7#1: ended stopped: the agent was stopped (SIGTERM or SIGINT); the job goes back in the queue
              n0 leaves (i1)
        ",
    );
}
