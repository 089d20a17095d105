/**
 * The memory console: what the browser downloads (JS and CSS, gzipped as a server would send them)
 * and how long the memories page of a 10k-entry pool takes to show its first rows in headless
 * Chromium against the real stack; plus the keyset-paged listing's first and 200th page side by
 * side with the OFFSET listing it replaced, to show a far page costs what the first does.
 */
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { MemoryPattern, type PageSort } from '@engram/contracts';
import { tempDataDir } from '@engram/testing';
import { launchChromium } from '../tests/support/browser.js';
import { startRedis } from '../tests/support/redis.js';
import { startGateway, startMemory } from '../tests/support/stack.js';
import { writeLog } from './fixtures.js';
import type { BenchRow } from './run.js';
import { median } from './stats.js';

const SUITE = 'console';
const ASSETS = fileURLToPath(new URL('../apps/console/dist/assets/', import.meta.url));
/** writeLog makes 9 entries per 10 events: this many events give 10,000 entries. */
const EVENTS_FOR_10K = 11_112;
const PAGE_LIMIT = 50;

function bundleRows(): BenchRow[] {
  const files = readdirSync(ASSETS);
  const gz = (ext: string) =>
    files.filter((file) => file.endsWith(ext)).reduce((sum, file) => sum + gzipSync(readFileSync(join(ASSETS, file))).length, 0);
  const js = gz('.js') / 1024;
  const css = gz('.css') / 1024;
  const note = 'apps/console/dist/assets, gzip default level (what a compressing proxy sends; the gateway itself serves them uncompressed)';
  return [
    { suite: SUITE, metric: 'bundle JS gzipped', value: js, unit: 'KB', note },
    { suite: SUITE, metric: 'bundle CSS gzipped', value: css, unit: 'KB', note },
    { suite: SUITE, metric: 'bundle JS+CSS gzipped', value: js + css, unit: 'KB', target: '<= 150', note },
  ];
}

export async function run(): Promise<BenchRow[]> {
  const rows = bundleRows();
  const dir = tempDataDir('engram-bench-console-');
  await writeLog(dir.path, EVENTS_FOR_10K);
  const redis = await startRedis();
  const memory = await startMemory({ REDIS_URL: redis.url }, { dataDir: dir.path, timeoutMs: 180_000 });
  const gateway = await startGateway({ REDIS_URL: redis.url, UPSTREAM_BASE_URL: 'http://127.0.0.1:9/v1', ...memory.clientEnv });
  const client = memory.client(10_000);
  const browser = await launchChromium();
  try {
    const active = (await client.call(MemoryPattern.Stats, {})).pools.find((pool) => pool.pool === 'bench')?.active ?? 0;

    // Browser-timed: navigation start to the first rows of the table, new tab each time.
    const shown = async (): Promise<number> => {
      const page = await browser.newPage();
      try {
        await page.goto(`${gateway.url}/ui/#/pools/bench`);
        await page.locator('tbody tr').first().waitFor();
        return await page.evaluate<number>('performance.now()');
      } finally {
        await page.close();
      }
    };
    const cold = await shown();
    const warm: number[] = [];
    for (let i = 0; i < 15; i++) warm.push(await shown());
    const note = `${active} active entries in the pool, first page of 100, open mode, headless Chromium; navigation start to first row`;
    rows.push(
      { suite: SUITE, metric: 'memories page first rows @10k (first visit)', value: cold, unit: 'ms', note },
      { suite: SUITE, metric: 'memories page first rows @10k (median of 15)', value: median(warm), unit: 'ms', note },
    );

    // The two REST calls the page makes before it shows rows, timed from Node (same order as the page).
    const pools: number[] = [];
    const firstPage: number[] = [];
    for (let i = 0; i < 30; i++) {
      let started = performance.now();
      await (await fetch(`${gateway.url}/engram/pools`)).json();
      pools.push(performance.now() - started);
      started = performance.now();
      await (await fetch(`${gateway.url}/engram/pools/bench/memories?limit=100&sort=created`)).json();
      firstPage.push(performance.now() - started);
    }
    rows.push(
      {
        suite: SUITE,
        metric: 'GET /engram/pools @10k (median of 30)',
        value: median(pools),
        unit: 'ms',
        note: 'counts, Tier 1 and its o200k token count per pool',
      },
      {
        suite: SUITE,
        metric: 'GET memories?limit=100 @10k (median of 30)',
        value: median(firstPage),
        unit: 'ms',
        note: 'the first page the memories page asks for',
      },
    );

    // Keyset pages: page 1 and page 200 of 50, alternated; the OFFSET listing at the same depth beside them.
    for (const sort of ['created', 'confidence'] as PageSort[]) {
      let cursor: string | null = null;
      for (let page = 1; page < 200; page++) {
        const answer: { nextCursor: string | null } = await client.call(MemoryPattern.Page, {
          pool: 'bench',
          sort,
          limit: PAGE_LIMIT,
          ...(cursor ? { cursor } : {}),
        });
        cursor = answer.nextCursor;
      }
      const first: number[] = [];
      const deep: number[] = [];
      const offset: number[] = [];
      for (let i = 0; i < 60; i++) {
        let started = performance.now();
        await client.call(MemoryPattern.Page, { pool: 'bench', sort, limit: PAGE_LIMIT });
        first.push(performance.now() - started);
        started = performance.now();
        await client.call(MemoryPattern.Page, { pool: 'bench', sort, limit: PAGE_LIMIT, ...(cursor ? { cursor } : {}) });
        deep.push(performance.now() - started);
        if (sort === 'created') {
          started = performance.now();
          await client.call(MemoryPattern.List, { pool: 'bench', limit: PAGE_LIMIT, offset: 199 * PAGE_LIMIT });
          offset.push(performance.now() - started);
        }
      }
      const pageNote = `memory.page over TCP RPC, ${PAGE_LIMIT} per page, medians of 60 alternated calls`;
      rows.push(
        { suite: SUITE, metric: `page 1 by ${sort} @10k`, value: median(first), unit: 'ms', note: pageNote },
        { suite: SUITE, metric: `page 200 by ${sort} @10k`, value: median(deep), unit: 'ms', note: pageNote },
      );
      if (offset.length > 0) {
        rows.push({
          suite: SUITE,
          metric: 'page 200 by OFFSET (memory.list) @10k',
          value: median(offset),
          unit: 'ms',
          note: 'the offset listing at the same depth, for comparison',
        });
      }
    }
  } finally {
    await browser.close();
    await client.close();
    await gateway.stop();
    await memory.stop();
    await redis.stop();
    dir.remove();
  }
  return rows;
}
