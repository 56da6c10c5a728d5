#!/usr/bin/env python3
"""Soak test of the live cluster: a server and two agents (4 declared GPUs each) with
three queues (two with quotas, so reclaims preempt), ~390 short jobs submitted over a
minute, random cancels, one agent SIGKILLed and restarted, the server SIGKILLed and
restarted, the other agent SIGKILLed past its heartbeat timeout. Checks at the end:
every accepted job is known and ended succeeded or cancelled, and no attempt ran twice.

Usage: cargo build --release && python3 scripts/soak_live.py [SEED]
"""
import json, os, random, subprocess, sys, tempfile, time
from collections import Counter

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
G = os.path.join(os.environ.get("CARGO_TARGET_DIR", os.path.join(ROOT, "target")), "release", "gpusched")
if not os.path.exists(G):
    sys.exit(f"{G} not found; run `cargo build --release` first (or set CARGO_TARGET_DIR)")
D = tempfile.mkdtemp(prefix="gpusched-soak-")
PORT=17777; BASE=f"http://127.0.0.1:{PORT}"
env=dict(os.environ, GPUSCHED_LOG="warn")
open(f"{D}/q.toml","w").write("[queues.a]\nquota = 3\n\n[queues.b]\nquota = 3\n\n[queues.c]\n")
def server():
    return subprocess.Popen([G,"server","--listen",f"127.0.0.1:{PORT}","--data-dir",f"{D}/data","--heartbeat-timeout","3s","--node-lease","3s","--queues",f"{D}/q.toml","--min-runtime","1s","--preempt-grace","1s","--grace","1s"],env=env,stdout=subprocess.DEVNULL,stderr=open(f"{D}/server.log","a"))
def agent(name):
    return subprocess.Popen([G,"agent","--server",BASE,"--name",name,"--state-dir",f"{D}/{name}","--join-token-file",f"{D}/data/join-token","--allow-root-jobs","--gpus","4","--gpu-backend","declared"],env=env,stdout=subprocess.DEVNULL,stderr=open(f"{D}/{name}.log","a"))
sock=f"unix:{D}/data/gpusched.sock"
def cli(*a):
    return subprocess.run([G,*a],env=dict(env,GPUSCHED_SERVER=sock),capture_output=True,text=True)
srv=server(); time.sleep(1)
ags={n:agent(n) for n in ("n1","n2")}; time.sleep(1.5)
ledger=f"{D}/ledger"
ids=[]
rng=random.Random(int(sys.argv[1]) if len(sys.argv)>1 else 7)
def submit_some(k):
    for _ in range(k):
        q=rng.choice("abc"); g=rng.choice([1,1,1,2,4]); dur=rng.choice([0.05,0.2,0.5,1.5])
        script=f"echo $GPUSCHED_JOB_ID $GPUSCHED_ATTEMPT >> {ledger}; trap 'exit 0' USR1; sleep {dur}"
        r=cli("submit","--json","-q",q,"--gpus",str(g),"--","sh","-c",script)
        if r.returncode==0: ids.append(json.loads(r.stdout)["ids"][0])
        else: print("submit failed", r.stderr.strip()[:200])
t0=time.time()
submit_some(150)
for round in range(6):
    time.sleep(2)
    # random cancels
    for _ in range(5):
        if ids: cli("cancel", str(rng.choice(ids)))
    if round==1:
        ags["n1"].kill(); ags["n1"].wait(); time.sleep(0.5); ags["n1"]=agent("n1")
    if round==3:
        srv.kill(); srv.wait(); time.sleep(0.5); srv=server(); time.sleep(1)
    if round==4:
        ags["n2"].kill(); ags["n2"].wait(); time.sleep(4); ags["n2"]=agent("n2")
    submit_some(40)
# wait for all to end
deadline=time.time()+240
while time.time()<deadline:
    r=cli("queue","--json")
    if r.returncode==0 and not json.loads(r.stdout)["jobs"]: break
    time.sleep(1)
r=cli("queue","--all","--json","--limit","100000")
jobs=json.loads(r.stdout)["jobs"]
states=Counter(j["state"] for j in jobs)
print("jobs",len(jobs),"accepted",len(ids),dict(states))
# runs per (job,attempt)
runs=Counter()
for line in open(ledger):
    jid,att=line.split(); runs[(int(jid),int(att))]+=1
dups={k:v for k,v in runs.items() if v>1}
print("attempt runs >1:",dups)
byid={j["id"]:j for j in jobs}
missing=[i for i in ids if i not in byid]
print("missing accepted:",missing)
bad=[(j["id"],j["state"],j["reason"]) for j in jobs if j["state"] not in("succeeded","cancelled")]
print("not ok:",bad[:10], len(bad))
pre=sum(j["preemptions"] for j in jobs); print("preemptions",pre, "attempts>1", sum(1 for j in jobs if j["attempt"]>1))
active=[j for j in jobs if j["state"] in ("pending","starting","running")]
print("still active:", [(j["id"],j["state"],j["reason"]) for j in active][:10])
srv.kill(); [a.kill() for a in ags.values()]
print("took", time.time()-t0)
ok = not dups and not missing and not bad and not active
print("SOAK", "PASSED" if ok else "FAILED")
subprocess.run(["rm", "-rf", D])
sys.exit(0 if ok else 1)
