import { pino, type Logger } from 'pino';
import { type EncryptionKey, loadConfig } from '@engram/config';

/** CLI logs go to stderr as JSON (warn and up by default), so stdout carries only the command's answer. */
export function cliLogger(): Logger {
  const level = process.env['LOG_LEVEL'] ? loadConfig(process.env).logLevel : 'warn';
  return pino({ level, base: { service: 'engram-cli' }, timestamp: pino.stdTimeFunctions.isoTime }, pino.destination(2));
}

export function defaultDataDir(): string {
  return loadConfig(process.env).dataDir;
}

/** ENGRAM_ENCRYPTION_KEY (or the file ENGRAM_ENCRYPTION_KEY_FILE names), as the services read it. */
export function configuredKey(): EncryptionKey | null {
  return loadConfig(process.env).encryptionKey;
}
