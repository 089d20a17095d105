import { Command } from 'commander';
import { ReadOnlyDataDir } from '@engram/memory-store';
import { configuredKey, defaultDataDir } from './cli-logger.js';

/** `engram stats [--json] [--data-dir D]`: works while the memory service runs. */
export function statsCommand(): Command {
  return new Command('stats')
    .description('entries per pool (active, archived, active by category) and the last applied seq')
    .option('--json', 'print JSON')
    .option('--data-dir <dir>', 'data dir (default: $ENGRAM_DATA_DIR or ./data)')
    .action((options: { json?: boolean; dataDir?: string }) => {
      const data = ReadOnlyDataDir.open(options.dataDir ?? defaultDataDir(), configuredKey());
      try {
        const stats = { lastSeq: data.lastSeq(), pools: data.stats() };
        if (options.json) {
          process.stdout.write(`${JSON.stringify(stats, null, 2)}\n`);
          return;
        }
        process.stdout.write(`last seq ${stats.lastSeq}, ${stats.pools.length} pools\n`);
        for (const pool of stats.pools) {
          const categories = Object.entries(pool.byCategory)
            .map(([category, count]) => `${category} ${count}`)
            .join(', ');
          process.stdout.write(`  ${pool.pool}: ${pool.active} active, ${pool.archived} archived${categories ? ` (${categories})` : ''}\n`);
        }
      } finally {
        data.close();
      }
    });
}
