import { Command } from 'commander';
import { replayDataDir } from '@engram/memory-store';
import { cliLogger, configuredKey, defaultDataDir } from './cli-logger.js';

/** `engram replay [--data-dir D]` */
export function replayCommand(): Command {
  return new Command('replay')
    .description('rebuild engram.db from the event log: a new file, verified, then swapped in atomically (stop the memory service first)')
    .option('--data-dir <dir>', 'data dir (default: $ENGRAM_DATA_DIR or ./data)')
    .action(async (options: { dataDir?: string }) => {
      const dataDir = options.dataDir ?? defaultDataDir();
      const result = await replayDataDir(dataDir, cliLogger(), { encryptionKey: configuredKey() });
      process.stdout.write(
        `replayed ${result.eventsApplied} events applied, ${result.memoriesRebuilt} memories rebuilt (log at seq ${result.lastSeq}) into ${result.databasePath}\n`,
      );
    });
}
