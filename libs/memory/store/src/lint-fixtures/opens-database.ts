// Deliberate violations: tests/medium/lint-rules.spec.ts lints this file and expects the value import of the driver and the test support refused.
// `npm run lint` skips the lint-fixtures folders; the build leaves them out.
import Database from 'better-sqlite3-multiple-ciphers';
import type Sqlite from 'better-sqlite3-multiple-ciphers';
import { postgresPerTest } from '../testing/postgres-per-test.js';

export const opened: Sqlite.Database = new Database(':memory:');
export const testSupport = postgresPerTest;
