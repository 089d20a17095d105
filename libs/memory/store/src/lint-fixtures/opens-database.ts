// Deliberate violations: tests/medium/lint-rules.spec.ts lints this file and expects the value import refused.
// `npm run lint` skips the lint-fixtures folders; the build leaves them out.
import Database from 'better-sqlite3-multiple-ciphers';
import type Sqlite from 'better-sqlite3-multiple-ciphers';

export const opened: Sqlite.Database = new Database(':memory:');
