/**
 * The parts a stack helper has started so far (Redis, scripted upstreams, service processes), each with
 * the way to stop it. A helper that fails half-way (a service that does not become ready in time, as
 * under a loaded machine) stops what it had started before throwing: the caller never gets the stack
 * to stop, and a process or server left running keeps the jest worker from exiting ("A worker process
 * has failed to exit gracefully").
 */
export class StartedParts {
  private readonly stops: (() => Promise<unknown>)[] = [];

  /** Remembers a part just started; returns it. */
  add<T>(part: T, stop: (part: T) => Promise<unknown> | unknown): T {
    this.stops.push(async () => stop(part));
    return part;
  }

  /** Stops every part, the last started first; one that fails to stop does not keep the others running. */
  async stopAll(): Promise<void> {
    const failures: unknown[] = [];
    for (const stop of this.stops.splice(0).reverse()) await stop().catch((error: unknown) => failures.push(error));
    if (failures.length > 0) throw new AggregateError(failures, `${failures.length} part(s) of the stack failed to stop`);
  }
}

/** Runs a stack helper's start-up; when a step throws, the parts started before it are stopped, then the error goes on. */
export async function startParts<T>(start: (parts: StartedParts) => Promise<T>): Promise<T> {
  const parts = new StartedParts();
  try {
    return await start(parts);
  } catch (error) {
    await parts.stopAll().catch(() => undefined);
    throw error;
  }
}
