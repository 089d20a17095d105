import { Command } from 'commander';
import { loadConfig, redactedUrl } from '@engram/config';
import { copyLogToTable, copyTableToLog } from '@engram/memory-store';
import { cliLogger, defaultDataDir } from './cli-logger.js';

/**
 * `engram log copy --to postgres://… [--data-dir D]`: the data dir's file log into an empty PostgreSQL
 * event store; `engram log copy --to file DIR`: the event store (ENGRAM_EVENT_STORE) into a new file log.
 * Each copy is read back and compared event by event. Stop the memory services first.
 */
export function logCommand(): Command {
  const copy = new Command('copy')
    .description('copy the event log between the data dir and PostgreSQL (--to postgres://… or --to file DIR), verified event by event')
    .requiredOption('--to <target...>', 'postgres://user:password@host:5432/db, or `file DIR`')
    .option('--data-dir <dir>', 'data dir whose log is copied to PostgreSQL (default: $ENGRAM_DATA_DIR or ./data)')
    .action(async (options: { to: string[]; dataDir?: string }) => {
      const config = loadConfig(process.env);
      const [where, dir] = options.to;
      if (where === 'file') {
        if (!dir || options.to.length !== 2) throw new Error('--to file needs the folder: engram log copy --to file DIR');
        if (!config.eventStore) throw new Error('set ENGRAM_EVENT_STORE (or ENGRAM_EVENT_STORE_FILE) to the database to copy from');
        const result = await copyTableToLog(config.eventStore.url, dir, cliLogger(), { encryptionKey: config.encryptionKey });
        process.stdout.write(
          `copied ${result.events} events (seq 1-${result.lastSeq}) from ${redactedUrl(config.eventStore.url)} to ${dir}, verified event by event\n`,
        );
        return;
      }
      if (!where || !/^postgres(ql)?:\/\//.test(where) || options.to.length !== 1) {
        throw new Error('--to takes postgres://user:password@host:5432/db, or `file DIR`');
      }
      const dataDir = options.dataDir ?? defaultDataDir();
      const result = await copyLogToTable(dataDir, where, cliLogger(), { encryptionKey: config.encryptionKey });
      process.stdout.write(
        `copied ${result.events} events from ${dataDir} to ${redactedUrl(where)} (seq 1-${result.lastSeq}), verified event by event; ` +
          'start each memory replica with ENGRAM_EVENT_STORE set to it and a data dir of its own\n',
      );
      if (result.renumbered) {
        process.stdout.write(
          `the log's seqs had gaps where references were summed, closed up in the table: ${dataDir} is not a copy of it, ` +
            'so no replica may start on it (one refuses to); give each replica a new data dir\n',
        );
      }
    });
  return new Command('log').description('the event log: copy it between a data dir and PostgreSQL').addCommand(copy);
}
