import { Command } from 'commander';
import { verifyDataDir } from '@engram/storage';
import { cliLogger, defaultDataDir } from './cli-logger.js';

/** `engram verify [--data-dir D]`: exit 0 when consistent, 1 when not. */
export function verifyCommand(): Command {
  return new Command('verify')
    .description('check the log checksums and that engram.db equals replay(log); exits 1 on any difference')
    .option('--data-dir <dir>', 'data dir (default: $ENGRAM_DATA_DIR or ./data)')
    .action(async (options: { dataDir?: string }) => {
      const dataDir = options.dataDir ?? defaultDataDir();
      const result = await verifyDataDir(dataDir, cliLogger());
      if (result.ok) {
        process.stdout.write(`ok: log checksums valid, database equals replay(log) at seq ${result.lastSeq}, ${result.memories} memories\n`);
        return;
      }
      process.stdout.write(`FAILED: ${dataDir}\n${result.problems.map((problem) => `  - ${problem}`).join('\n')}\n`);
      process.stdout.write('Fix: `engram replay` rebuilds the database from the log; a damaged log line needs the segment restored from a backup.\n');
      process.exitCode = 1;
    });
}
