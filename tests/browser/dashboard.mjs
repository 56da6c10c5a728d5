// Drives the dashboard of a live `gpusched up` in headless Chromium (started by
// scripts/browser_test.sh, which passes the server, tokens and the job in the
// environment). Every wait is bounded; a failure names the step and leaves a screenshot.

import { writeFileSync } from 'node:fs';

import { cli, env, run, until, URL, WAIT } from './lib.mjs';

const JOB = env('JOB_ID');

await run(async ({ say, shot, open, session }) => {
  say('a wrong token is refused with the server\'s words');
  {
    const page = await open('anonymous');
    await page.fill('#token', 'gst_not-a-real-token');
    await page.click('#signin-submit');
    await page.locator('#signin-error').waitFor({ state: 'visible', timeout: WAIT });
    const text = await page.textContent('#signin-error');
    if (!/not valid/.test(text)) throw new Error(`sign-in error shows ${JSON.stringify(text)}`);
    await shot(page, '01-signin-refused');
    await page.context().close();
  }

  say('user A signs in; the overview shows node n1 with both GPUs');
  const a = await session('A', env('TOKEN_A'));
  await until('two GPU rows on n1', async () => (await a.locator('section.node[data-node="n1"] tbody tr').count()) === 2);
  await until('the job on a GPU', async () => (await a.locator(`#gpu-nodes a[href="#/job/${JOB}"]`).count()) === 1);
  const stored = await a.evaluate(() => sessionStorage.getItem('gpusched.token'));
  if (stored !== env('TOKEN_A')) throw new Error('the token is not in sessionStorage');
  if ((await a.evaluate(() => document.cookie)) !== '' || (await a.evaluate(() => localStorage.length)) !== 0) {
    throw new Error('the dashboard wrote a cookie or localStorage');
  }
  await until('telemetry readings', async () => (await a.locator('section.node .meter').count()) > 0);
  await shot(a, '02-overview');

  say('the queue lists the CLI\'s job, its name as text');
  await a.goto(`${URL}/#/queue`);
  const row = a.locator(`#queue tr[data-job="${JOB}"]`);
  await row.waitFor();
  const name = await row.locator('td.name').textContent();
  if (name !== 'web <b>test</b>') throw new Error(`the job's name shows as ${JSON.stringify(name)}`);
  if (await a.locator('#queue b').count()) throw new Error('the job name was parsed as HTML');
  await shot(a, '03-queue');

  say('the job page shows the job and its log line');
  await a.goto(`${URL}/#/job/${JOB}`);
  await until('the log line', async () => ((await a.textContent('#log')) || '').includes('hello from the browser test'));
  await until('the timeline: submitted, placed, started, in order', async () => {
    const kinds = await a.locator('#job-events tbody tr td:nth-child(2)').allTextContents();
    return kinds.join(',') === 'submitted,placed,started';
  });
  await shot(a, '04-job');
  await a.selectOption('#log-stream', 'stderr');
  await until('the stderr line alone', async () => {
    const t = (await a.textContent('#log')) || '';
    return t.includes('a line on stderr') && !t.includes('hello');
  });

  say('user B is refused A\'s logs, and the page says so');
  const b = await session('B', env('TOKEN_B'));
  await b.goto(`${URL}/#/job/${JOB}`);
  await b.locator('#log-error').waitFor({ state: 'visible' });
  const refusal = await b.textContent('#log-error');
  if (!refusal || !refusal.trim()) throw new Error('B sees no refusal text');
  if (((await b.textContent('#log')) || '').includes('hello')) throw new Error('B sees A\'s log');
  if (await b.locator(`button[data-cancel="${JOB}"]`).count()) throw new Error('B is offered a cancel of A\'s job');
  await b.locator('#job-events p.error').waitFor();
  if (await b.locator('#job-events tbody tr').count()) throw new Error('B sees A\'s timeline');
  console.log(`  B is told: ${refusal}`);
  await shot(b, '05-job-refused');

  say('A cancels the job from the queue page; the CLI sees it cancelled');
  await a.goto(`${URL}/#/queue`);
  await a.locator(`button[data-cancel="${JOB}"]`).click();
  await until('the CLI to show the job cancelled', async () => /cancelled/.test(cli('show', JOB)), 30000);
  await until('the job to leave the queue page', async () => (await a.locator(`#queue tr[data-job="${JOB}"]`).count()) === 0);
  await a.check('#queue-recent');
  await a.locator(`#queue tr[data-job="${JOB}"] .badge.cancelled`).waitFor();
  await shot(a, '06-queue-after-cancel');

  say('B sees no drain controls; the admin drains and resumes n1 from the page');
  await b.goto(`${URL}/#/nodes`);
  await b.locator('#nodes tr[data-node="n1"]').waitFor();
  if (await b.locator('#drain-form').count()) throw new Error('a user is shown the drain form');
  const adm = await session('admin', env('TOKEN_ADMIN'));
  await adm.goto(`${URL}/#/nodes`);
  await adm.locator('#nodes tr[data-node="n1"]').waitFor();
  await until('n1 in the drain list', async () => (await adm.locator('#drain-node option[value="n1"]').count()) === 1);
  await adm.selectOption('#drain-node', 'n1');
  await adm.fill('#drain-reason', 'browser test maintenance');
  await adm.click('#drain-form button[type=submit]');
  await until('`gpusched nodes` to show n1 drained', async () => /drain/i.test(cli('nodes')), 30000);
  await adm.locator('#nodes tr[data-node="n1"] .drain-cell .badge').waitFor();
  await shot(adm, '07-nodes-drained');
  await adm.goto(`${URL}/#/overview`);
  await adm.locator('section.node .note.warn').waitFor();
  await shot(adm, '08-overview-drained');
  await adm.goto(`${URL}/#/nodes`);
  await adm.locator('button[data-resume="n1"]').click();
  await until('`gpusched nodes` to show n1 resumed', async () => !/drain/i.test(cli('nodes')), 30000);
  await until('the page to show n1 resumed', async () => (await adm.locator('button[data-resume="n1"]').count()) === 0);

  say('a GPU that throws an Xid shows unhealthy with its reason; the admin resumes it');
  writeFileSync(env('FAULT_FILE'), '[gpu.1]\nxid = 79\n');
  await adm.goto(`${URL}/#/overview`);
  const sick = adm.locator('section.node[data-node="n1"] tr[data-gpu="1"] .badge.bad');
  await sick.waitFor({ timeout: 30000 });
  const why = await adm.textContent('section.node[data-node="n1"] tr[data-gpu="1"] .reason');
  if (!/xid/i.test(why || '')) throw new Error(`the unhealthy GPU's reason reads ${JSON.stringify(why)}`);
  await shot(adm, '09-overview-unhealthy');
  await adm.goto(`${URL}/#/nodes`);
  await adm.locator('button[data-resume="n1"]').click();
  await until('GPU 1 healthy again', async () => !/unhealthy|xid/i.test(cli('nodes', '--gpus')), 30000);

  say('queues and usage pages render; usage draws its chart');
  await adm.goto(`${URL}/#/queues`);
  await adm.locator('#queues tr[data-queue]').first().waitFor();
  await shot(adm, '10-queues');
  await adm.goto(`${URL}/#/usage`);
  await until('a bar in the GPU-hours chart', async () => (await adm.locator('svg#chart-gpu-user rect.bar').count()) > 0);
  await shot(adm, '11-usage');

  say('A creates a service through the API; the services page shows its ready replica');
  {
    // The job waiting for both GPUs is first in line (fifo), and a replica has no
    // walltime to backfill by: it goes, so the replica can start.
    const { jobs } = JSON.parse(cli('queue', '--state', 'pending', '--json'));
    for (const j of jobs) cli('cancel', String(j.id));
    const spec = {
      name: 'web-echo',
      // No shell runs a command: sh expands the port the agent gives the replica.
      replica: { command: ['sh', '-c', 'exec python3 -m http.server "$PORT"'], gpus: 0, cwd: process.cwd() },
      replicas: 1,
    };
    const r = await fetch(`${URL}/api/services`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${env('TOKEN_A')}`, 'Content-Type': 'application/json' },
      body: JSON.stringify(spec),
    });
    if (r.status !== 201) throw new Error(`POST /api/services answered ${r.status}: ${await r.text()}`);
    await a.goto(`${URL}/#/services`);
    const svc = a.locator('section.service[data-service="web-echo"]');
    await svc.waitFor();
    await until('the replica ready (1/1)', async () => (await svc.locator('dd.ready .badge').textContent()) === '1/1', 60000);
    const link = svc.locator('table.replicas tbody tr a').first();
    const replica = (await link.textContent()).trim();
    if (!/^[0-9]+$/.test(replica)) throw new Error(`the replica's job link reads ${JSON.stringify(replica)}`);
    if (!/^http:\/\//.test((await svc.locator('table.replicas tbody tr code').first().textContent()) || '')) {
      throw new Error('the ready replica shows no URL');
    }
    if (!/web-echo\s+1\s+1\/1/.test(cli('service', 'ls'))) throw new Error(`\`service ls\` reads:\n${cli('service', 'ls')}`);
    await shot(a, '11b-services');
    await link.click();
    await a.locator('#job-service a[href="#/services/web-echo"]').waitFor();
    if (!/ready/.test(await a.textContent('#job-service'))) throw new Error('the replica\'s job page does not say it is ready');
    if (!/service: web-echo version 1, port [0-9]+, ready/.test(cli('show', replica))) {
      throw new Error(`\`show ${replica}\` reads:\n${cli('show', replica)}`);
    }
    await shot(a, '11c-replica-job');
    cli('service', 'delete', 'web-echo');
    await a.goto(`${URL}/#/services`);
    await until('the service to be gone', async () => (await a.locator('section.service').count()) === 0, 30000);
  }

  say('sign-out clears sessionStorage');
  await adm.click('#signout');
  await adm.locator('#token').waitFor();
  const left = await adm.evaluate(() => sessionStorage.length);
  if (left !== 0) throw new Error(`sessionStorage still holds ${left} items after sign-out`);
  await shot(adm, '12-signed-out');

  console.log('dashboard: every step passed');
});
