"""A throwaway PostgreSQL for benchmark runs: the steps of gpusched_store::testing::TempPostgres
(crates/store/src/testing.rs) in Python. Its own cluster in a temporary directory (initdb),
started on a free loopback port with its socket in that directory, fsync=on, default
synchronous_commit, a database `gpusched`; stopped (`pg_ctl stop -m immediate`) and deleted
on exit. As root, PostgreSQL's programs run as the `postgres` user (initdb refuses root).

    with throwaway_pg.cluster() as (url, version):
        ...  # gpusched server --store url
"""

import contextlib, glob, os, shutil, socket, subprocess, tempfile


def bin_dir():
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"), key=lambda p: int(p.split("/")[4]))
    if found:
        return os.path.dirname(found[-1])
    initdb = shutil.which("initdb")
    if initdb:
        return os.path.dirname(initdb)
    raise SystemExit("PostgreSQL is not installed (no initdb under /usr/lib/postgresql/*/bin or on PATH): "
                     "install it with `apt-get install -y postgresql-15`")


@contextlib.contextmanager
def cluster():
    bin_ = bin_dir()
    tmp = tempfile.mkdtemp(prefix="gpusched-pg-")
    as_postgres = os.geteuid() == 0
    if as_postgres:
        shutil.chown(tmp, "postgres", "postgres")

    def run(prog, *args):
        cmd = [os.path.join(bin_, prog), *args]
        if as_postgres:
            cmd = ["runuser", "-u", "postgres", "--", *cmd]
        subprocess.run(cmd, check=True, cwd=tmp, stdout=subprocess.DEVNULL)

    data = os.path.join(tmp, "data")
    started = False
    try:
        run("initdb", "-D", data, "-U", "gpusched", "--auth=trust", "-E", "UTF8", "--no-sync")
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        opts = f"-p {port} -k {tmp} -c listen_addresses=127.0.0.1 -c fsync=on"
        run("pg_ctl", "-D", data, "-l", os.path.join(tmp, "log"), "-w", "-o", opts, "start")
        started = True
        run("createdb", "-h", "127.0.0.1", "-p", str(port), "-U", "gpusched", "gpusched")
        version = subprocess.run([os.path.join(bin_, "postgres"), "--version"], capture_output=True,
                                 text=True).stdout.strip()
        yield f"postgres://gpusched@127.0.0.1:{port}/gpusched", version
    finally:
        if started:
            run("pg_ctl", "-D", data, "-m", "immediate", "-w", "stop")
        shutil.rmtree(tmp, ignore_errors=True)
