import { Command } from 'commander';
import { type EmbeddingsConfig, loadConfig } from '@engram/config';
import { readModelFolder } from '@engram/embeddings';
import { checkEventStoreTable, verifyDataDir, type VerifyResult } from '@engram/memory-store';
import { cliLogger, defaultDataDir } from './cli-logger.js';

/** `engram verify [--data-dir D]`: exit 0 when consistent, 1 when not. */
export function verifyCommand(): Command {
  return new Command('verify')
    .description('check the log checksums and that engram.db equals replay(log); exits 1 on any difference')
    .option('--data-dir <dir>', 'data dir (default: $ENGRAM_DATA_DIR or ./data)')
    .action(async (options: { dataDir?: string }) => {
      const dataDir = options.dataDir ?? defaultDataDir();
      const config = loadConfig(process.env);
      const embeddingsModel = await configuredModel(config.embeddings);
      if (config.eventStore) {
        // A replica: the table is the source of truth; its rows first, then the data dir's copy and database.
        const table = await checkEventStoreTable(dataDir, config.eventStore.url, cliLogger(), { encryptionKey: config.encryptionKey });
        if (table.ok) process.stdout.write(`ok: event store table checksums valid, ${table.rows} rows, the data dir's copy is its prefix\n`);
        else {
          process.stdout.write(`FAILED: event store table\n${table.problems.map((problem) => `  - ${problem}`).join('\n')}\n`);
          process.exitCode = 1;
        }
      }
      const result = await verifyDataDir(dataDir, cliLogger(), {
        encryptionKey: config.encryptionKey,
        ...(embeddingsModel ? { embeddingsModel } : {}),
      });
      if (result.ok) {
        process.stdout.write(`ok: log checksums valid, database equals replay(log) at seq ${result.lastSeq}, ${result.memories} memories\n`);
        process.stdout.write(vectorLine(result));
        return;
      }
      process.stdout.write(vectorLine(result));
      process.stdout.write(`FAILED: ${dataDir}\n${result.problems.map((problem) => `  - ${problem}`).join('\n')}\n`);
      process.stdout.write('Fix: `engram replay` rebuilds the database from the log; a damaged log line needs the segment restored from a backup.\n');
      process.exitCode = 1;
    });
}

/** The name the configured embedder's vectors are stored under: a model folder's comes from its files (no model is loaded). */
async function configuredModel(embeddings: EmbeddingsConfig | null): Promise<string | undefined> {
  if (!embeddings) return undefined;
  return embeddings.kind === 'endpoint' ? embeddings.model : (await readModelFolder(embeddings.dir)).key;
}

/** Entries without a vector are a report, not a failure: the worker embeds them while the memory service runs. */
function vectorLine(result: VerifyResult): string {
  const { vectors } = result;
  if (!vectors) return '';
  if (vectors.missing === 0) return `vectors: every one of ${vectors.entries} active entries has a vector of ${vectors.model}\n`;
  return (
    `vectors: ${vectors.missing} of ${vectors.entries} active entries have no vector of ${vectors.model} yet ` +
    '(the worker embeds them while the memory service and worker run; until then search finds them by words alone)\n'
  );
}
