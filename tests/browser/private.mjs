// The dashboard of a server under --private-jobs (scripts/browser_test.sh restarts the
// cluster with it; A's jobs run again): user B's pages show none of A's jobs, not even
// through a job link typed by hand, while A still sees them. The page shows only what
// the API gives, so this checks the two together.

import { env, run, until, URL } from './lib.mjs';

await run(async ({ say, shot, session }) => {
  say('A still sees their running job on the overview and in the queue');
  const a = await session('A-private', env('TOKEN_A'));
  await until('a job link on a GPU', async () => (await a.locator('#gpu-nodes a[href^="#/job/"]').count()) > 0);
  const href = await a.locator('#gpu-nodes a[href^="#/job/"]').first().getAttribute('href');
  const job = href.replace('#/job/', '');
  await a.goto(`${URL}/#/queue`);
  await a.locator(`#queue tr[data-job="${job}"]`).waitFor();

  say('B sees the GPU held by "(another user)", no job, and an empty queue');
  const b = await session('B-private', env('TOKEN_B'));
  await until('the hidden holder', async () => (await b.locator('#gpu-nodes td', { hasText: '(another user)' }).count()) > 0);
  if (await b.locator('#gpu-nodes a[href^="#/job/"]').count()) throw new Error('B sees a job link under --private-jobs');
  const text = await b.textContent('#gpu-nodes');
  if (text.includes(env('USER_A'))) throw new Error(`B's overview names ${env('USER_A')}`);
  await shot(b, '13-private-overview');
  await b.goto(`${URL}/#/queue`);
  await b.locator('#queue p.muted').waitFor();
  if (await b.locator('#queue tr[data-job]').count()) throw new Error('B\'s queue lists jobs under --private-jobs');

  say('B opening A\'s job by its address gets the server\'s answer, not the job');
  await b.goto(`${URL}/#/job/${job}`);
  await b.locator('#banner').waitFor({ state: 'visible' });
  const said = await b.textContent('#banner');
  if (!said.trim()) throw new Error('no message for a hidden job');
  if ((await b.textContent('#job-head')).trim()) throw new Error('B sees the hidden job\'s header');
  console.log(`  B is told: ${said}`);
  await shot(b, '14-private-job');
  console.log('private jobs: every step passed');
});
