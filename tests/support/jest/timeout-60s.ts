import { jest } from '@jest/globals';

// Medium specs open real SQLite files and start real Redis.
jest.setTimeout(60_000);
