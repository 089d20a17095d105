import { Command } from 'commander';
import { loadConfig } from '@engram/config';
import { createLogger } from '@engram/observability';
import { restoreDataDir } from '@engram/memory-store';

/** `engram restore --from DIR [--data-dir D]` (with the memory service stopped; see restoreDataDir in @engram/memory-store) */
export function restoreCommand(): Command {
  return new Command('restore')
    .description('replace the data dir with a backup (stop the memory service first)')
    .requiredOption('--from <dir>', 'a folder made by `engram backup`')
    .option('--data-dir <dir>', 'data dir (default: $ENGRAM_DATA_DIR or ./data)')
    .action(async (options: { from: string; dataDir?: string }) => {
      const config = loadConfig(process.env);
      const dataDir = options.dataDir ?? config.dataDir;
      const { manifest, movedAside } = await restoreDataDir(options.from, dataDir, createLogger('engram-cli', 'silent'), {
        encryptionKey: config.encryptionKey,
      });
      process.stdout.write(
        `restored ${options.from} (${manifest.createdAt}, log to seq ${manifest.logSeq}) into ${dataDir}` +
          `${movedAside ? `; the previous content is in ${movedAside}` : ''}\n`,
      );
    });
}
