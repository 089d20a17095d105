/**
 * Runs an assertion and, if it fails, puts `context` above the failure, so a check inside a loop says which
 * case failed (jest's `expect` takes no message).
 */
export function because<T>(context: string, assertion: () => T): T {
  let result: T;
  try {
    result = assertion();
  } catch (error) {
    throw withContext(context, error);
  }
  if (result instanceof Promise) {
    return result.catch((error: unknown) => {
      throw withContext(context, error);
    }) as T;
  }
  return result;
}

function withContext(context: string, error: unknown): unknown {
  if (!(error instanceof Error)) return error;
  error.message = `${context}\n\n${error.message}`;
  return error;
}
