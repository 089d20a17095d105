import { Command } from 'commander';
import { loadConfig } from '@engram/config';
import { createLogger } from '@engram/observability';
import { backupDataDir } from '@engram/memory-store';

/** `engram backup --to DIR [--data-dir D]` (see backupDataDir in @engram/memory-store) */
export function backupCommand(): Command {
  return new Command('backup')
    .description('copy the database, the event log and the flat files while the memory service runs')
    .requiredOption('--to <dir>', 'new or empty folder for the backup')
    .option('--data-dir <dir>', 'data dir (default: $ENGRAM_DATA_DIR or ./data)')
    .action(async (options: { to: string; dataDir?: string }) => {
      const config = loadConfig(process.env);
      const dataDir = options.dataDir ?? config.dataDir;
      const manifest = await backupDataDir(dataDir, options.to, createLogger('engram-cli', 'silent'), { encryptionKey: config.encryptionKey });
      process.stdout.write(
        `backed up ${dataDir} to ${options.to}: database at seq ${manifest.databaseSeq}, log to seq ${manifest.logSeq} ` +
          `(${manifest.segments.length} segments), ${manifest.pools.length} pools\n`,
      );
    });
}
