/**
 * `npm run bench`: runs every suite in bench/ (or those named on the command line), prints one
 * table and writes bench/results/<suite>-<time>.json. Each suite module exports `run()`.
 */
import { mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';

export interface BenchRow {
  readonly suite: string;
  readonly metric: string;
  readonly value: number;
  readonly unit: string;
  /** The target, e.g. '>= 5000' or '<= 3'; informational. */
  readonly target?: string;
  readonly note?: string;
}

export interface BenchSuite {
  run(): Promise<BenchRow[]>;
}

const benchDir = fileURLToPath(new URL('.', import.meta.url));
const wanted = process.argv.slice(2);
const files = readdirSync(benchDir)
  .filter((file) => file.endsWith('.bench.ts'))
  .filter((file) => wanted.length === 0 || wanted.some((name) => file.startsWith(name)))
  .sort();

const stamp = new Date().toISOString().replace(/[:.]/g, '-');
mkdirSync(`${benchDir}results`, { recursive: true });
const all: BenchRow[] = [];
for (const file of files) {
  const suite = (await import(pathToFileURL(`${benchDir}${file}`).href)) as BenchSuite;
  const rows = await suite.run();
  all.push(...rows);
  writeFileSync(`${benchDir}results/${file.replace('.bench.ts', '')}-${stamp}.json`, JSON.stringify(rows, null, 2));
}
console.table(all.map((row) => ({ ...row, value: Number(row.value.toFixed(3)) })));
