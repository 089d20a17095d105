import { jest } from '@jest/globals';

// End-to-end specs start the real built processes in their hooks.
jest.setTimeout(90_000);
