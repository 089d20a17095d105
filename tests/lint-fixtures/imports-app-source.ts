// Deliberate violation: tests/medium/lint-rules.spec.ts lints this file and expects the import refused.
// Tests reach the apps as processes, never through their source.
import { backupCommand } from '../../apps/memory/src/cli/backup.js';

export const forbidden = backupCommand;
