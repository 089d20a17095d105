import { Command } from 'commander';
import { EncryptionKey } from '@engram/config';

/** `engram keygen`: a fresh at-rest key on stdout, for ENGRAM_ENCRYPTION_KEY or a key file. */
export function keygenCommand(): Command {
  return new Command('keygen')
    .description('print a fresh encryption key (32 random bytes as hex) for ENGRAM_ENCRYPTION_KEY or ENGRAM_ENCRYPTION_KEY_FILE')
    .action(() => {
      process.stdout.write(`${EncryptionKey.generate()}\n`);
    });
}
