"""What a gpusched job started by the submitit executor runs:
`python -m gpusched._submitit_run FOLDER`.

Points stdout and stderr at submitit's log files for this job (appending, so each
attempt of a requeued job adds to them), then runs submitit's own job processing
(`submitit.core.submission.process_job`): load the pickled submission, install the
preemption handler of `GpuschedJobEnvironment`, run it, pickle the result or the error.
"""

from __future__ import annotations

import os
import sys


def main() -> None:
    if len(sys.argv) != 2:
        sys.exit("usage: python -m gpusched._submitit_run FOLDER (the submitit executor runs this)")
    folder = sys.argv[1]
    os.environ["SUBMITIT_EXECUTOR"] = "gpusched"
    os.environ["SUBMITIT_FOLDER"] = folder
    from submitit.core import submission

    from .submitit_executor import GpuschedJobEnvironment

    paths = GpuschedJobEnvironment().paths
    paths.folder.mkdir(parents=True, exist_ok=True)
    out = open(paths.stdout, "ab", buffering=0)
    err = out if os.environ.get("GPUSCHED_SUBMITIT_STDERR_TO_STDOUT") else open(paths.stderr, "ab", buffering=0)
    sys.stdout.flush()
    sys.stderr.flush()
    os.dup2(out.fileno(), 1)
    os.dup2(err.fileno(), 2)
    print(f"gpusched job {os.environ.get('GPUSCHED_JOB_ID')} attempt {os.environ.get('GPUSCHED_ATTEMPT', '?')}",
          file=sys.stderr, flush=True)
    submission.process_job(folder)


if __name__ == "__main__":
    main()
