import { Command } from 'commander';
import { importFlatFiles } from '@engram/memory-store';
import { cliLogger, configuredKey, defaultDataDir } from './cli-logger.js';

/** `engram import-flat --pool P [--data-dir D]` */
export function importFlatCommand(): Command {
  return new Command('import-flat')
    .description('recover a pool from its flat files (pools/<pool>/MEMORY.md and USER.md) as new events (stop the memory service first)')
    .requiredOption('--pool <pool>', 'pool to recover')
    .option('--data-dir <dir>', 'data dir (default: $ENGRAM_DATA_DIR or ./data)')
    .action(async (options: { pool: string; dataDir?: string }) => {
      const dataDir = options.dataDir ?? defaultDataDir();
      const result = await importFlatFiles(dataDir, options.pool, cliLogger(), { encryptionKey: configuredKey() });
      process.stdout.write(
        `imported pool ${result.pool}: ${result.stored} stored, ${result.updated} updated, ${result.unchanged} unchanged` +
          `${result.skipped.length > 0 ? `, ${result.skipped.length} unreadable blocks skipped` : ''}\n`,
      );
      for (const block of result.skipped) process.stderr.write(`skipped: ${JSON.stringify(block)}\n`);
    });
}
