import { Command } from 'commander';
import { compactDataDir } from '@engram/memory-store';
import { cliLogger, configuredKey, defaultDataDir } from './cli-logger.js';

/** `engram compact [--data-dir D]` */
export function compactCommand(): Command {
  return new Command('compact')
    .description(
      "sum each entry's references in the event log into one event per pool, so searches do not grow it for ever; the memory service does this by itself past a size (stop it first)",
    )
    .option('--data-dir <dir>', 'data dir (default: $ENGRAM_DATA_DIR or ./data)')
    .action(async (options: { dataDir?: string }) => {
      const dataDir = options.dataDir ?? defaultDataDir();
      const result = await compactDataDir(dataDir, cliLogger(), { encryptionKey: configuredKey() });
      process.stdout.write(
        `compacted the event log: ${result.removed} reference events summed into ${result.summaries}, ${result.bytesBefore} -> ${result.bytesAfter} bytes\n`,
      );
    });
}
