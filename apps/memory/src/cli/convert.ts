import { readFileSync } from 'node:fs';
import { Command } from 'commander';
import { EncryptionKey } from '@engram/config';
import { convertDataDir, type Conversion, type ConversionResult } from '@engram/memory-store';
import { cliLogger, configuredKey, defaultDataDir } from './cli-logger.js';

const STOP_FIRST = 'stop the memory service (and gateway, worker) first; safe to interrupt: run it again and it finishes';

/** `engram encrypt [--data-dir D]`: the key is ENGRAM_ENCRYPTION_KEY (or _FILE), as the services will read it. */
export function encryptCommand(): Command {
  return new Command('encrypt')
    .description(
      `encrypt a plaintext data dir with ENGRAM_ENCRYPTION_KEY (or ENGRAM_ENCRYPTION_KEY_FILE), or bring one encrypted with it in an older format up to date; ${STOP_FIRST}`,
    )
    .option('--data-dir <dir>', 'data dir (default: $ENGRAM_DATA_DIR or ./data)')
    .action(async (options: { dataDir?: string }) => {
      const to = requiredKey('the key to encrypt with (`npx engram keygen` prints one)');
      await run(options.dataDir, { command: 'encrypt', to }, 'encrypted');
    });
}

/** `engram decrypt [--data-dir D]` */
export function decryptCommand(): Command {
  return new Command('decrypt')
    .description(`turn an encrypted data dir back into plaintext (ENGRAM_ENCRYPTION_KEY is its key); ${STOP_FIRST}`)
    .option('--data-dir <dir>', 'data dir (default: $ENGRAM_DATA_DIR or ./data)')
    .action(async (options: { dataDir?: string }) => {
      const from = requiredKey('the data dir’s key');
      await run(options.dataDir, { command: 'decrypt', from }, 'decrypted');
    });
}

/** `engram rekey --new-key-file F [--data-dir D]`: a key on the command line would be in the shell's history and `ps`. */
export function rekeyCommand(): Command {
  return new Command('rekey')
    .description(`re-encrypt an encrypted data dir (ENGRAM_ENCRYPTION_KEY is its key) with the key in --new-key-file; ${STOP_FIRST}`)
    .requiredOption('--new-key-file <file>', 'file holding the new key (`npx engram keygen > file`)')
    .option('--data-dir <dir>', 'data dir (default: $ENGRAM_DATA_DIR or ./data)')
    .action(async (options: { newKeyFile: string; dataDir?: string }) => {
      const from = requiredKey('the data dir’s current key');
      let to: EncryptionKey;
      try {
        to = EncryptionKey.parse(readFileSync(options.newKeyFile, 'utf8'));
      } catch (error) {
        throw new Error(`--new-key-file ${options.newKeyFile}: ${(error as Error).message}`);
      }
      await run(options.dataDir, { command: 'rekey', from, to }, 're-encrypted');
      process.stdout.write('now set ENGRAM_ENCRYPTION_KEY (or ENGRAM_ENCRYPTION_KEY_FILE) to the new key for every service\n');
    });
}

function requiredKey(what: string): EncryptionKey {
  const key = configuredKey();
  if (!key) throw new Error(`set ENGRAM_ENCRYPTION_KEY (or ENGRAM_ENCRYPTION_KEY_FILE) to ${what}`);
  return key;
}

async function run(dataDirOption: string | undefined, conversion: Conversion, done: string): Promise<void> {
  const dataDir = dataDirOption ?? defaultDataDir();
  const result: ConversionResult = await convertDataDir(dataDir, conversion, cliLogger());
  const what = result.alreadyDone
    ? `${dataDir} is ${done} already, nothing to do`
    : `${done} ${dataDir}${result.resumed ? ' (finishing an interrupted run)' : ''}`;
  process.stdout.write(`${what}: verified, ${result.memories} memories, log at seq ${result.lastSeq}\n`);
  if (result.untouched.length > 0) {
    process.stdout.write(`left as they were (earlier copies, delete them when no longer needed): ${result.untouched.join(', ')}\n`);
  }
}
