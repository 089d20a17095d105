// Deliberate violations: tests/medium/lint-rules.spec.ts lints this file and expects each import refused.
// `npm run lint` skips the lint-fixtures folders; the build leaves them out.
import Database from 'better-sqlite3-multiple-ciphers';
import { backupDataDir } from '@engram/memory-store';

export const forbidden = [Database, backupDataDir];
