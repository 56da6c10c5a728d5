//! Making the desired state so: answers older than what the agent already reported, a
//! deposed leader's answers, attempts queued behind others, cancels and what is no longer
//! wanted.

use super::run;
use super::Check::*;
use super::Cond::*;
use super::Order::*;
use super::Step::*;

#[test]
fn an_answer_older_than_an_acknowledged_end_does_not_start_the_attempt_again() {
    run(
        "stale answers",
        vec![
            Stale("a", 300),
            Start,
            Want("a", (1..=5).map(|job| Run(job, "true")).collect()),
            Until((1..=5).map(Ended).collect()),
            // Every answer is 300 ms stale, so answers listing the ended (and
            // acknowledged) attempts keep arriving for a while after the server took
            // them out: none starts them again.
            Until(vec![Polls("a", 5)]),
            // The jobs wrote nothing into their checkpoint directories: none is left
            // under a job's name; empty ones may be kept for the next jobs.
            See(CheckpointDirs),
            Stop,
        ],
        "
            a answers polls 300 ms late
            the agent starts
            a wants: run 1 `true`, run 2 `true`, run 3 `true`, run 4 `true`, run 5 `true`
            until 1#1 ended, 2#1 ended, 3#1 ended, 4#1 ended, 5#1 ended
              a registers n0 (i1): 2 GPUs A100-SXM4-80GB, advertises 127.0.0.1; runs -; reports -
              job 1#1 .. 5#1: started; ended exited 0
            until a answers 5 more polls
            checkpoint directories: none left under a job's name, the spares empty
            the agent stops
              n0 leaves (i1)
        ",
    );
}

/// Two servers: the leader of epoch 5, and a deposed one of epoch 3 that still answers.
/// While the leader is down the agent reaches the deposed one, whose desired state (a job
/// to start) it refuses; back on the leader, it does what it says.
#[test]
fn desired_state_of_an_older_epoch_is_refused_and_another_server_asked() {
    run(
        "deposed leader",
        vec![
            Server("a", 5),
            Server("b", 3),
            Want("b", vec![Run(7, "true")]),
            Start,
            Until(vec![Polls("a", 2)]),
            Down("a"),
            Until(vec![Polls("b", 3)]),
            Up("a"),
            Want("a", vec![Run(8, "true")]),
            Until(vec![Ended(8)]),
            Stop,
        ],
        "
            server a (epoch 5)
            server b (epoch 3)
            b wants: run 7 `true`
            the agent starts
            until a answers 2 more polls
              a registers n0 (i1): 2 GPUs A100-SXM4-80GB, advertises 127.0.0.1; runs -; reports -
            a is down
            until b answers 3 more polls
            a is up
            a wants: run 8 `true`
            until 8#1 ended
              job 8#1: started; ended exited 0
            the agent stops
              n0 leaves (i1)
        ",
    );
}

#[test]
fn queued_attempts_start_the_moment_the_one_ahead_ends_and_are_reported_in_batches() {
    run(
        "followers",
        vec![
            Start,
            // Jobs 2..=31 wait in a chain behind job 1; the server never lists them to
            // run, so only the agent can start them, each when the one before it ends.
            Want("a", vec![Run(1, "sleep 0.2"), Chain(2, 31, "true", "exit 4")]),
            Until(vec![Ended(31)]),
            See(FollowedInOrder(1, 31)),
            // Starts, and ends whose GPU was taken at once, ride together.
            See(Batched(31)),
            Stop,
        ],
        "
            the agent starts
            a wants: run 1 `sleep 0.2`, queue 2..=31 each behind the one before `true` (the last `exit 4`)
            until 31#1 ended
              a registers n0 (i1): 2 GPUs A100-SXM4-80GB, advertises 127.0.0.1; runs -; reports -
              job 1#1 .. 30#1: started; ended exited 0
              job 31#1: started; ended exited 4
            2..=31 each started no earlier than the one ahead ended
            the events of 31 attempts came in fewer reports than attempts
            the agent stops
              n0 leaves (i1)
        ",
    );
}

#[test]
fn a_queued_attempt_never_starts_behind_a_preempted_one() {
    run(
        "preempted ahead",
        vec![
            Start,
            Want("a", vec![Run(1, "sleep 30"), Queued(2, 1, "true")]),
            Until(vec![Started(1)]),
            // The server preempts 1; its follower stays queued in the desired state (and
            // there it stays once 1's end takes 1 out).
            Want(
                "a",
                vec![Run(1, "sleep 30"), Queued(2, 1, "true"), Preempt(1)],
            ),
            Until(vec![Ended(1)]),
            // Later answers (the desired state unchanged) do not start it either.
            Until(vec![Polls("a", 3)]),
            Stop,
        ],
        "
            the agent starts
            a wants: run 1 `sleep 30`, queue 2 behind 1 `true`
            until 1#1 started
              a registers n0 (i1): 2 GPUs A100-SXM4-80GB, advertises 127.0.0.1; runs -; reports -
              job 1#1: started
            a wants: run 1 `sleep 30`, queue 2 behind 1 `true`, preempt 1
            until 1#1 ended
              job 1#1: ended preempted
            until a answers 3 more polls
            the agent stops
              n0 leaves (i1)
        ",
    );
}

#[test]
fn cancelled_and_no_longer_wanted_attempts_are_stopped_and_unseen_ones_said_to_end() {
    run(
        "cancel",
        vec![
            Start,
            Want("a", vec![Run(3, "sleep 30"), Run(5, "sleep 30")]),
            Until(vec![Started(3), Started(5)]),
            // A cancel of a running attempt, and of one that never reached the node.
            Want(
                "a",
                vec![Run(3, "sleep 30"), Run(5, "sleep 30"), Cancel(3), Cancel(4)],
            ),
            Until(vec![Ended(3), Ended(4)]),
            // What the server no longer lists is stopped.
            Want("a", vec![]),
            Until(vec![Ended(5)]),
            Until(vec![Polls("a", 3)]),
            Stop,
        ],
        "
            the agent starts
            a wants: run 3 `sleep 30`, run 5 `sleep 30`
            until 3#1 started, 5#1 started
              a registers n0 (i1): 2 GPUs A100-SXM4-80GB, advertises 127.0.0.1; runs -; reports -
              job 3#1: started
              job 5#1: started
            a wants: run 3 `sleep 30`, run 5 `sleep 30`, cancel 3, cancel 4
            until 3#1 ended, 4#1 ended
              job 3#1: ended cancelled
              job 4#1: ended cancelled
            a wants: nothing
            until 5#1 ended
              job 5#1: ended cancelled
            until a answers 3 more polls
            the agent stops
              n0 leaves (i1)
        ",
    );
}

/// A server taking compact messages: the agent reports in MessagePack and polls naming
/// the generation it holds, so launches travel once; a chain of followers still runs
/// in order. When an answer names an attempt it never got (the answer that carried it
/// was lost), the agent asks again for everything, whole, and runs it.
#[test]
fn a_compact_server_sends_each_launch_once_and_a_name_not_held_is_asked_again() {
    run(
        "compact messages",
        vec![
            Compact("a"),
            Start,
            Want("a", vec![Run(1, "sleep 0.3"), Chain(2, 4, "true", "true")]),
            Until((1..=4).map(Ended).collect()),
            Want("a", vec![Run(5, "sleep 0.5")]),
            Until(vec![Started(5)]),
            Unheld("a", 6),
            Want("a", vec![Run(5, "sleep 0.5"), Run(6, "true")]),
            Until(vec![Ended(5), Ended(6)]),
            See(FollowedInOrder(1, 4)),
            See(CompactSeen("a")),
            Stop,
        ],
        "
            a takes compact messages
            the agent starts
            a wants: run 1 `sleep 0.3`, queue 2..=4 each behind the one before `true` (the last `true`)
            until 1#1 ended, 2#1 ended, 3#1 ended, 4#1 ended
              a registers n0 (i1): 2 GPUs A100-SXM4-80GB, advertises 127.0.0.1; runs -; reports -
              job 1#1 .. 4#1: started; ended exited 0
            a wants: run 5 `sleep 0.5`
            until 5#1 started
              job 5#1: started
            a's next answer names 6#1 as held, never having sent it
            a wants: run 5 `sleep 0.5`, run 6 `true`
            until 5#1 ended, 6#1 ended
              job 5#1: ended exited 0
              job 6#1: started; ended exited 0
            2..=4 each started no earlier than the one ahead ended
            a saw: answers naming held launches some, of them in MessagePack some; asks for everything again some; reports in MessagePack some, in JSON none
            the agent stops
              n0 leaves (i1)
        ",
    );
}
