// Deliberate violations: tests/medium/lint-rules.spec.ts lints this file and expects each import refused.
// `npm run lint` skips the lint-fixtures folders; the build leaves them out.
import Database from 'better-sqlite3-multiple-ciphers';
import { Redis } from 'ioredis';
import type { Queue } from 'bullmq';
import { openMemoryService } from '@engram/memory-store';
import { because } from '@engram/testing';
import { memoryInProcess } from '../../../../tests/support/memory-in-process.js';

export type Allowed = Queue;
export const forbidden = [Database, Redis, openMemoryService, because, memoryInProcess];
