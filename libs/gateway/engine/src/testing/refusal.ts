import { EngramHttpError } from '../errors.js';

/** The EngramHttpError `run` refuses with; fails the test when it throws something else or nothing. */
export function refusalOf(run: () => unknown): EngramHttpError {
  try {
    run();
  } catch (error) {
    if (error instanceof EngramHttpError) return error;
    throw error;
  }
  throw new Error('expected a refusal');
}
