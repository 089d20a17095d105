import { Command } from 'commander';
import { loadConfig } from '@engram/config';
import { copyTableToDataDir, replayDataDir } from '@engram/memory-store';
import { cliLogger, configuredKey, defaultDataDir } from './cli-logger.js';

/** `engram replay [--data-dir D]` */
export function replayCommand(): Command {
  return new Command('replay')
    .description(
      "rebuild engram.db from the event log (with ENGRAM_EVENT_STORE: from the table, through the data dir's copy): a new file, verified, then swapped in atomically (stop the memory service first)",
    )
    .option('--data-dir <dir>', 'data dir (default: $ENGRAM_DATA_DIR or ./data)')
    .action(async (options: { dataDir?: string }) => {
      const dataDir = options.dataDir ?? defaultDataDir();
      const { eventStore } = loadConfig(process.env);
      // A replica: its copy of the table brought up to the table first, then the database rebuilt from it.
      if (eventStore) await copyTableToDataDir(dataDir, eventStore.url, cliLogger(), { encryptionKey: configuredKey() });
      const result = await replayDataDir(dataDir, cliLogger(), { encryptionKey: configuredKey() });
      process.stdout.write(
        `replayed ${result.eventsApplied} events applied, ${result.memoriesRebuilt} memories rebuilt (log at seq ${result.lastSeq}) into ${result.databasePath}\n`,
      );
    });
}
