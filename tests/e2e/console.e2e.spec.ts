import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { eventually } from '@engram/testing';
import { launchChromium, screenshotDir } from '../support/browser.js';
import { contentText, startGatewayStack, type GatewayStack } from '../support/gateway-fixture.js';
import type { RecordedRequest } from '../support/scripted-http.js';
import { callTools, say, type ChatReply, type ChatRequestJson } from '../support/scripted-openai-upstream.js';

/** Stores what it is told to remember (the model's own store_memory call), otherwise answers ok. */
function model(request: RecordedRequest): ChatReply {
  const messages = (request.body as ChatRequestJson).messages;
  const last = messages[messages.length - 1];
  if (last?.role === 'tool') return say('Noted.');
  const user = contentText(last?.content);
  if (user.startsWith('REMEMBER ')) return callTools({ name: 'store_memory', arguments: { content: user.slice(9), category: 'project' } });
  return say('ok');
}

const KEYS = 'alpha-key=alpha+shared,admin-key=*';
const shots = screenshotDir('console');

interface Stored {
  readonly id: string;
  readonly content: string;
}

describe('the memory console in a real browser', () => {
  let stack: GatewayStack;
  let browser: Browser;
  let page: Page;
  const seeded: Record<string, Stored> = {};
  const rest = async (method: string, path: string, key: string, body?: unknown): Promise<Response> =>
    fetch(`${stack.gateway.url}${path}`, {
      method,
      headers: { authorization: `Bearer ${key}`, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    });
  const store = async (pool: string, name: string, body: Record<string, unknown>): Promise<void> => {
    const response = await rest('POST', `/engram/pools/${pool}/memories`, 'admin-key', body);
    expect(response.status).toBe(201);
    seeded[name] = (await response.json()) as Stored;
  };
  const row = (name: string) => page.locator(`tr[data-id="${seeded[name]!.id}"]`);
  const shoot = (name: string) => page.screenshot({ path: join(shots, `${name}.png`), fullPage: true });

  beforeAll(async () => {
    stack = await startGatewayStack({ responder: model, gatewayEnv: { ENGRAM_API_KEYS: KEYS, UPSTREAM_API_KEY: 'sk-upstream' } });
    await store('alpha', 'french', { content: 'Answers in French when asked in French', category: 'preference' });
    await store('alpha', 'postgres', { content: 'The billing service stores invoices in Postgres 16', category: 'project' });
    await store('alpha', 'compose', { content: 'Deploys with docker compose on the NAS', category: 'environment' });
    await store('alpha', 'gotcha', { content: 'The CI runner has no IPv6', category: 'gotcha' });
    await store('secret', 'secret', { content: 'Secret pool fact nobody else may see', category: 'preference' });
    browser = await launchChromium();
    page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  });
  afterAll(async () => {
    await browser?.close();
    await stack?.stop();
  });

  it('serves the console with caching headers: hashed assets immutable, the index revalidated', async () => {
    const index = await fetch(`${stack.gateway.url}/ui/`);
    expect(index.status).toBe(200);
    expect(index.headers.get('cache-control')).toBe('no-cache');
    const html = await index.text();
    const asset = /src="(\/ui\/assets\/[^"]+\.js)"/.exec(html)?.[1];
    expect(asset).toBeDefined();
    const script = await fetch(`${stack.gateway.url}${asset}`);
    expect(script.status).toBe(200);
    expect(script.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
    expect(html).not.toMatch(/https?:\/\//);
    const poolLink = await fetch(`${stack.gateway.url}/pools/alpha/ui/`, { redirect: 'manual' });
    expect(poolLink.status).toBe(302);
    expect(poolLink.headers.get('location')).toBe('/ui/#/pools/alpha');
    expect((await fetch(`${stack.gateway.url}/pools/..%2Fetc/ui/`, { redirect: 'manual' })).status).toBe(400);
  });

  it('pages the REST listing with a cursor and lists only the granted pools', async () => {
    const first = (await (await rest('GET', '/engram/pools/alpha/memories?limit=3', 'alpha-key')).json()) as {
      data: Stored[];
      nextCursor: string | null;
    };
    expect(first.data).toHaveLength(3);
    const second = (await (await rest('GET', `/engram/pools/alpha/memories?limit=3&cursor=${first.nextCursor}`, 'alpha-key')).json()) as {
      data: Stored[];
      nextCursor: string | null;
    };
    expect([...first.data, ...second.data].map((entry) => entry.id).sort()).toEqual(
      ['french', 'postgres', 'compose', 'gotcha'].map((name) => seeded[name]!.id).sort(),
    );
    expect(second.nextCursor).toBeNull();
    const bad = await rest('GET', '/engram/pools/alpha/memories?cursor=nonsense', 'alpha-key');
    expect(bad.status).toBe(400);
    expect(await bad.json()).toMatchObject({ error: { code: 'invalid_request' } });
    expect((await rest('GET', '/engram/pools/alpha/memories?sort=size', 'alpha-key')).status).toBe(400);

    const pools = async (key: string) =>
      ((await (await rest('GET', '/engram/pools', key)).json()) as { data: { pool: string; active: number }[] }).data;
    expect((await pools('alpha-key')).map((pool) => pool.pool)).toEqual(['alpha', 'shared']);
    expect((await pools('admin-key')).map((pool) => [pool.pool, pool.active])).toEqual([
      ['alpha', 4],
      ['secret', 1],
    ]);
    expect((await rest('GET', '/engram/pools', 'wrong-key')).status).toBe(401);
  });

  it('asks for a key once and shows only the pools that key is granted', async () => {
    await page.goto(`${stack.gateway.url}/ui/`);
    await page.getByLabel('Engram key').fill('wrong-key');
    await page.getByRole('button', { name: 'Open the console' }).click();
    await page.getByRole('alert').filter({ hasText: 'That key was not accepted' }).waitFor();
    await page.getByLabel('Engram key').fill('alpha-key');
    await page.getByRole('button', { name: 'Open the console' }).click();
    await page.getByRole('heading', { name: 'Pools' }).waitFor();
    const pools = await page.locator('[data-pool]').evaluateAll((cards) => cards.map((card) => card.getAttribute('data-pool')));
    expect(pools).toEqual(['alpha', 'shared']);
    const alpha = await page.locator('[data-pool="alpha"]').textContent();
    expect(alpha).toContain('Active4');
    expect(alpha).toMatch(/Tier 1\d+ chars, \d+ tokens/);
    expect(await page.content()).not.toContain('Secret pool fact');
    await shoot('1-pools');
    // The key stays for the tab: a reload does not ask again.
    await page.reload();
    await page.getByRole('heading', { name: 'Pools' }).waitFor();
    await page.goto(`${stack.gateway.url}/ui/#/pools/secret`);
    await page.getByRole('alert').filter({ hasText: 'This key does not reach the pool “secret”' }).waitFor();
  });

  it('searches with the model’s search, then edits and confirms an entry that then shows in Tier 1', async () => {
    await page.goto(`${stack.gateway.url}/ui/#/pools/alpha`);
    await row('compose').waitFor();
    expect(await page.locator('tbody tr').count()).toBe(4);
    await page.getByRole('searchbox').fill('invoices postgres');
    await page.getByRole('button', { name: 'Search', exact: true }).click();
    // Polled from the test side: a string predicate is evaluated in the page, which the console's CSP refuses.
    await eventually(async () => expect(await page.locator('tbody tr').count()).toBe(1), { timeout: 10_000 });
    expect(await row('postgres').isVisible()).toBe(true);
    await shoot('2-memories-search-results');
    await page.getByRole('button', { name: 'Clear search' }).click();
    await row('compose').waitFor();

    await page.getByRole('button', { name: `Edit ${seeded['compose']!.id}` }).click();
    await row('compose').getByLabel('Content').fill('Prefers deploying with docker compose on the home NAS');
    await row('compose').getByLabel('Category').selectOption('preference');
    await row('compose').getByRole('button', { name: 'Save' }).click();
    await row('compose').locator('.text', { hasText: 'home NAS' }).waitFor();
    expect(await row('compose').locator('.text').textContent()).toBe('Prefers deploying with docker compose on the home NAS');
    await page.getByRole('button', { name: `Confirm ${seeded['compose']!.id}` }).click();
    await row('compose').locator('.chip', { hasText: 'confirmed' }).waitFor();
    await shoot('2-memories');
    // The README's picture (ops/docs/console.png) is a copy of this one.
    await page.screenshot({ path: join(shots, 'readme-console.png'), clip: { x: 0, y: 0, width: 1280, height: 540 } });

    await page.getByRole('link', { name: 'What the model sees' }).click();
    const block = page.getByLabel('Tier 1 block as injected');
    await block.waitFor();
    const tier1 = (await (await rest('GET', '/engram/pools/alpha/tier1', 'alpha-key')).json()) as { block: string };
    expect(await block.textContent()).toBe(tier1.block);
    expect(tier1.block).toContain(`[id:${seeded['compose']!.id}] Prefers deploying with docker compose on the home NAS (preference, 1.0)`);
    expect(await page.locator('[data-reason="category"]').textContent()).toContain('The CI runner has no IPv6');
    expect(await page.getByTestId('tier1-size').textContent()).toBe(`${tier1.block.length} of 400 characters`);
    expect(await page.locator('#tier1-title + p').textContent()).toMatch(/\d+ tokens \(o200k\)/);
    await shoot('3-tier1');
  });

  it('archives and restores an entry', async () => {
    await page.goto(`${stack.gateway.url}/ui/#/pools/alpha`);
    await row('french').waitFor();
    await page.getByRole('button', { name: `Archive ${seeded['french']!.id}` }).click();
    await row('french').waitFor({ state: 'detached' });
    await page.getByLabel('Shown').selectOption('true');
    await row('french').waitFor();
    await page.getByRole('button', { name: `Restore ${seeded['french']!.id}` }).click();
    await row('french').waitFor({ state: 'detached' });
    await page.getByLabel('Shown').selectOption('false');
    await row('french').waitFor();
    const entry = (await (await rest('GET', `/engram/pools/alpha/memories/${seeded['french']!.id}`, 'alpha-key')).json()) as { isArchived: boolean };
    expect(entry.isArchived).toBe(false);
  });

  it('shows an entry’s history with its decay chart, and a purge removes it from the list and the history', async () => {
    await page.goto(`${stack.gateway.url}/ui/#/pools/alpha/memories/${seeded['french']!.id}`);
    await page.getByRole('heading', { name: /History of/ }).waitFor();
    await page.locator('svg[role="img"]').waitFor();
    const timeline = await page.locator('.timeline .event').evaluateAll((events) => events.map((event) => event.getAttribute('data-type')));
    expect(timeline).toEqual(['memory.stored', 'memory.archived', 'memory.restored']);
    expect(await page.locator('.timeline').textContent()).toContain('user');
    await shoot('4-history');

    await page.goto(`${stack.gateway.url}/ui/#/pools/alpha`);
    await row('postgres').waitFor();
    await page.getByRole('button', { name: `Purge ${seeded['postgres']!.id}` }).click();
    const dialog = page.getByRole('dialog');
    await dialog.waitFor();
    expect(await dialog.textContent()).toMatch(/event log is rewritten/);
    await shoot('5-purge-dialog');
    await dialog.getByRole('button', { name: 'Purge and rewrite the log' }).click();
    await row('postgres').waitFor({ state: 'detached' });
    await page.reload();
    await row('french').waitFor();
    expect(await row('postgres').count()).toBe(0);

    await page.goto(`${stack.gateway.url}/ui/#/pools/alpha/memories/${seeded['postgres']!.id}`);
    await page.getByTestId('purged').waitFor();
    expect(await page.content()).not.toContain('invoices in Postgres');
    expect(await page.locator('.timeline .event').evaluateAll((events) => events.map((event) => event.getAttribute('data-type')))).toEqual([
      'memory.stored',
      'memory.purged',
    ]);
  });

  it('shows a memory stored by a chat request appear live on the activity page', async () => {
    await page.goto(`${stack.gateway.url}/ui/#/pools/alpha/activity`);
    await page.getByRole('heading', { name: 'Activity in alpha' }).waitFor();
    await page.locator('.timeline .event').first().waitFor();
    const reply = await stack.client({ apiKey: 'alpha-key', pool: 'alpha' }).chat.completions.create({
      model: 'm',
      messages: [{ role: 'user', content: 'REMEMBER The staging cluster moved to Hetzner' }],
    });
    expect(reply.choices[0]?.message.content).toBe('Noted.');
    const live = page.locator('.timeline .event[data-type="memory.stored"]', { hasText: 'The staging cluster moved to Hetzner' });
    await live.waitFor({ timeout: 10_000 });
    expect(await live.locator('.actor').textContent()).toBe('llm');
    await shoot('6-activity');
  });

  it('is usable on a phone and in the dark', async () => {
    const phone = await browser.newPage({ viewport: { width: 390, height: 844 }, colorScheme: 'dark' });
    try {
      await phone.goto(`${stack.gateway.url}/ui/`);
      await phone.getByLabel('Engram key').fill('alpha-key');
      await phone.keyboard.press('Enter');
      await phone.getByRole('link', { name: 'alpha' }).click();
      await phone.locator('tbody tr').first().waitFor();
      // Expressions, not functions: this file is compiled without the DOM library.
      const background = await phone.evaluate<string>('getComputedStyle(document.body).backgroundColor');
      expect(background).toBe('rgb(20, 22, 24)');
      const overflow = await phone.evaluate<number>('document.documentElement.scrollWidth - document.documentElement.clientWidth');
      expect(overflow).toBeLessThanOrEqual(0);
      await phone.screenshot({ path: join(shots, '7-phone-dark.png'), fullPage: true });
    } finally {
      await phone.close();
    }
  });
});
