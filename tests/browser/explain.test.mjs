// Opens the `parity explain` HTML reports in headless Chromium and checks what a
// person sees: the verdict, the failing element, the diverging op, the witness,
// and the links from a spec tensor to its plan shards. Run by
// scripts/browser-test.sh, which writes the reports into $PARITY_REPORT_DIR.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { pathToFileURL } from 'node:url';

import { chromium } from 'playwright-core';

const dir = process.env.PARITY_REPORT_DIR;
assert.ok(dir, 'PARITY_REPORT_DIR is not set (run scripts/browser-test.sh)');
const shots = process.env.PARITY_SCREENSHOT_DIR || dir;

let browser;
before(async () => {
  browser = await chromium.launch({
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update',
      '--disable-sync', '--no-first-run'],
  });
});
after(async () => {
  await browser?.close();
});

// Opens a report; every request must stay inside the file (the report is self-contained)
// and the page must run without script errors.
async function open(name) {
  const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  const outside = [];
  const errors = [];
  page.on('request', (r) => { if (!r.url().startsWith('file:')) outside.push(r.url()); });
  page.on('pageerror', (e) => errors.push(String(e)));
  await page.goto(pathToFileURL(path.join(dir, name)).href);
  return { page, outside, errors };
}

// True when the element is (at least partly) inside the viewport.
async function inView(locator) {
  return locator.evaluate((el) => {
    const r = el.getBoundingClientRect();
    return r.bottom > 0 && r.top < window.innerHeight;
  });
}

test('mismatch report shows the failing element, the diverging op and the witness', async () => {
  const cex = JSON.parse(fs.readFileSync(path.join(dir, 'mismatch.json'), 'utf8')).counterexample;
  const { page, outside, errors } = await open('mismatch.html');

  assert.equal((await page.textContent('#verdict')).trim(), 'MISMATCH');
  const element = `${cex.program}.${cex.value}[${cex.plan_index.join(',')}]`;
  assert.equal((await page.textContent('#failing-element')).trim(), element);
  assert.equal((await page.textContent('#diverging-op')).trim(), cex.op);
  assert.match(cex.op, /^identity -> o \(line \d+\)$/);
  assert.equal((await page.textContent('#failing-rank')).trim(), cex.rank);

  // The op is highlighted in the plan listing, and only that one.
  const diverge = page.locator('#plan-listing .line.diverge');
  assert.equal(await diverge.count(), 1);
  assert.match(await diverge.textContent(), /%o = identity\(%o_part\)/);
  assert.match(await diverge.textContent(), /first divergence/);
  const specSide = page.locator('#spec-listing .line.diverge-spec');
  assert.match(await specSide.textContent(), /%o = matmul\(%a, %w2\)/);

  // The witness: both values and every input, as the JSON report has them.
  const close = (text, want) => Math.abs(parseFloat(text) - want) <= 1e-8 * Math.max(1, Math.abs(want));
  assert.ok(close(await page.textContent('#witness-spec'), cex.spec_num), 'spec value of the witness');
  assert.ok(close(await page.textContent('#witness-plan'), cex.plan_num), 'plan value of the witness');
  const rows = page.locator('#witness-inputs tbody tr');
  const inputs = Object.entries(cex.inputs);
  assert.equal(await rows.count(), inputs.length);
  for (const [name, value] of inputs) {
    const row = rows.filter({ has: page.locator('td', { hasText: new RegExp(`^${name.replace(/[[\]]/g, '\\$&')}$`) }) });
    assert.equal(await row.count(), 1, `witness input ${name}`);
    assert.ok(close(await row.locator('td.num').textContent(), value), `value of ${name}`);
  }
  assert.ok((await page.textContent('#difference')).includes('spec also has'));
  assert.ok((await page.textContent('#spec-expr')).length > 0);
  assert.ok((await page.textContent('#plan-expr')).length > 0);
  await page.screenshot({ path: path.join(shots, 'explain-mismatch.png'), fullPage: true });

  // Placement table: the failing rows are marked; the filter narrows the rows.
  assert.ok((await page.locator('#placement-table tbody tr.fail').count()) >= 1);
  await page.check('#only-failing');
  const visible = page.locator('#placement-table tbody tr:visible');
  assert.equal(await visible.count(), await page.locator('#placement-table tbody tr.fail').count());
  await page.uncheck('#only-failing');
  await page.fill('#filter', 'w1');
  for (const t of await visible.allTextContents()) assert.match(t, /w1/);
  await page.fill('#filter', '');

  // Navigation: spec element -> spec listing; spec tensor -> its plan shard in the plan listing.
  await page.click('#spec-element a');
  assert.equal(new URL(page.url()).hash, '#s-o');
  assert.ok(await inView(page.locator('#s-o')));

  await page.click('nav a[href="#tensors"]');
  const tensor = page.locator('#t-o');
  assert.match(await tensor.textContent(), /tp\.%o_part/);
  assert.match(await tensor.textContent(), /partial, summed over tp/);
  assert.match(await tensor.textContent(), /rank 0 \(tp=0\)/);
  await tensor.locator('a.shard', { hasText: 'tp.%o_part' }).click();
  const shard = page.locator('#v-tp--o_5fpart');
  assert.ok(await inView(shard), 'the plan shard is scrolled into view');
  assert.match(await shard.getAttribute('class'), /\bcurrent\b/);
  assert.match(await shard.textContent(), /%o_part = matmul\(%as, %w2s\)/);
  assert.match(await page.textContent('#selected'), /tp\.%o_part .*partial of spec %o summed over tp/);
  await page.screenshot({ path: path.join(shots, 'explain-shard.png') });

  // And back: the shard's annotation links to the spec tensor.
  await shard.locator('a', { hasText: '→ spec %o' }).click();
  assert.equal(new URL(page.url()).hash, '#t-o');
  assert.ok(await inView(page.locator('#t-o')));

  // The lineage table lists the walk back from the diverging value; a step's
  // "reads" links jump to the steps it reads.
  const lineage = page.locator('#lineage tbody tr');
  assert.equal(await lineage.count(), cex.lineage.length);
  assert.ok(cex.lineage.length >= 2);
  await page.locator('#lin-0 a', { hasText: '#1' }).click();
  assert.equal(new URL(page.url()).hash, '#lin-1');

  assert.deepEqual(outside, [], 'the report loads nothing from outside');
  assert.deepEqual(errors, [], 'no script errors');
  await page.close();
});

test('verified report lists every placement with its obligations and the time', async () => {
  const json = JSON.parse(fs.readFileSync(path.join(dir, 'verified.json'), 'utf8'));
  const { page, outside, errors } = await open('verified.html');
  assert.equal((await page.textContent('#verdict')).trim(), 'VERIFIED');
  assert.equal(await page.locator('#failing').count(), 0);
  assert.match(await page.textContent('#summary'), /checked in \d+\.\d+ s/);
  const rows = page.locator('#placement-table tbody tr');
  assert.equal(await rows.count(), json.placements.length);
  for (const p of json.placements) {
    const [value] = p.placement.split(' -> ');
    const [prog, name] = value.split('.');
    const row = rows.filter({ has: page.locator('td:first-child', { hasText: new RegExp(`^${prog}\\.%${name}$`) }) });
    assert.equal(await row.count(), 1, p.placement);
    const cells = await row.locator('td').allTextContents();
    assert.equal(cells[4], String(p.obligations));
    assert.equal(cells[5], String(p.proved));
    assert.equal(cells[8], 'proved');
  }
  // Proved by stages: each distinct stage is listed with its key hash and instance count.
  assert.ok(json.stage_list.length > 0, 'the correct case is proved by stages');
  const stageRows = page.locator('#stage-table tbody tr');
  assert.equal(await stageRows.count(), json.stage_list.length);
  let instances = 0;
  for (const st of json.stage_list) {
    const row = stageRows.filter({ has: page.locator('td', { hasText: st.hash }) });
    assert.equal(await row.count(), 1, st.hash);
    const cells = await row.locator('td').allTextContents();
    assert.equal(cells[0], `%${st.spec_value}`);
    assert.equal(cells[2], String(st.instances));
    instances += st.instances;
  }
  assert.equal(instances, json.stages.total);
  await page.click('nav a[href="#stages"]');
  assert.ok(await inView(page.locator('#stages')));
  await page.screenshot({ path: path.join(shots, 'explain-verified.png'), fullPage: true });
  assert.deepEqual(outside, []);
  assert.deepEqual(errors, []);
  await page.close();
});
