import { Command, Option } from 'commander';
import { renderFlatFile, ReadOnlyDataDir } from '@engram/memory-store';
import { configuredKey, defaultDataDir } from './cli-logger.js';

/** `engram export --pool P [--format json|md] [--data-dir D]`: works while the memory service runs. */
export function exportCommand(): Command {
  return new Command('export')
    .description('print a pool: json = every entry with all fields (archived too), md = the active entries as flat files')
    .requiredOption('--pool <pool>', 'pool to export')
    .addOption(new Option('--format <format>', 'output format').choices(['json', 'md']).default('json'))
    .option('--data-dir <dir>', 'data dir (default: $ENGRAM_DATA_DIR or ./data)')
    .action((options: { pool: string; format: 'json' | 'md'; dataDir?: string }) => {
      const data = ReadOnlyDataDir.open(options.dataDir ?? defaultDataDir(), configuredKey());
      try {
        const entries = data.entries(options.pool);
        if (options.format === 'json') {
          process.stdout.write(`${JSON.stringify(entries, null, 2)}\n`);
          return;
        }
        const active = entries.filter((entry) => !entry.isArchived);
        process.stdout.write(
          `# USER.md\n${renderFlatFile(
            options.pool,
            'USER',
            active.filter((entry) => entry.type === 'USER'),
          )}\n`,
        );
        process.stdout.write(
          `# MEMORY.md\n${renderFlatFile(
            options.pool,
            'MEMORY',
            active.filter((entry) => entry.type === 'MEMORY'),
          )}`,
        );
      } finally {
        data.close();
      }
    });
}
