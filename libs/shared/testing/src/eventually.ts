import { setTimeout as sleep } from 'node:timers/promises';

export interface EventuallyOptions {
  /** How long to keep trying, in ms. */
  timeout?: number;
  /** Pause between tries, in ms. */
  interval?: number;
}

/**
 * Runs `assertion` until it stops throwing, for something another process or a queue does in its own time;
 * after `timeout` ms the last failure is thrown as it is.
 */
export async function eventually<T>(assertion: () => T | Promise<T>, { timeout = 5_000, interval = 50 }: EventuallyOptions = {}): Promise<T> {
  const deadline = Date.now() + timeout;
  for (;;) {
    try {
      return await assertion();
    } catch (error) {
      if (Date.now() >= deadline) throw error;
    }
    await sleep(interval);
  }
}
