import { jest } from '@jest/globals';

// End-to-end specs start the real built processes in their hooks: Redis and up to three services, each
// allowed START_TIMEOUT_MS (a minute) on a loaded machine. A hook that timed out before its start
// gave up would leave the processes it then started running, with nobody to stop them.
jest.setTimeout(240_000);
